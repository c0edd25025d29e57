"""Esc Esc in a real terminal: tmux runs the real binary, sends two Escape keys
in one write (as a quick double press arrives), and the rewind picker opens."""

from __future__ import annotations

from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_esc_esc_opens_the_rewind_picker(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-rewind") as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.send_and_await_echo("hello from tmux")
        pane.send_keys("Escape", "Escape")
        screen = pane.wait_for("Rewind to the start of a turn")
        assert "hello from tmux" in screen  # the turn is listed
        pane.send_keys("Enter")
        screen = pane.wait_for("Conversation: continue from just before this turn")
        assert "no file" in screen.lower()


def test_a_conversation_rewind_redraws_the_kept_turns(tmp_path: Path) -> None:
    """Issue 30 N3 at 80x24: rewinding the conversation to before turn 3 leaves
    turns 1-2 on screen and says what happened in plain words."""
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-rewind-chat", width=80, height=24) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        for n in ("one", "two", "three"):
            pane.send_and_await_echo(f"turn {n}")
        pane.send_keys("Escape", "Escape")
        pane.wait_for("Rewind to the start of a turn")
        pane.send_keys("Enter")  # the newest: turn 3
        pane.wait_for("Conversation: continue from just before this turn")
        pane.send_keys("Enter")  # no file changed: the conversation is the first choice
        screen = pane.wait_for("Rewound the conversation to before turn 3")
        assert "You said: turn two" in screen and "-c" not in screen.split("Rewound")[-1]
