"""Start and quit in a real terminal (issue 30 item 9): `-c` with no session says so,
and after Ctrl+D the terminal says how to continue the session."""

from __future__ import annotations

from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_continue_without_a_session_then_quit_prints_how_to_continue(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-quit", args="-c", width=80, height=24) as pane,
    ):
        screen = pane.wait_for("Ask Reasonix")
        screen = pane.wait_for("No earlier session in this folder")
        pane.wait_for("ask  ready")
        pane.send_and_await_echo("hello")
        pane.send_keys("C-d")
        screen = pane.wait_for("Continue it with: reasonix -c")
        assert "(or: reasonix -r 2" in screen and "`" not in screen
