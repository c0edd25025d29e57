"""Shift+Tab in a real terminal: tmux runs ``python -m reasonix_tui`` against the
loopback fixture; the key (sent as the terminal's back-tab sequence) walks the
mode cycle ask -> auto -> plan -> ask, and the status bar and the one-line
explanation follow."""

from __future__ import annotations

from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_shift_tab_walks_ask_auto_plan_in_a_real_terminal(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-modes", width=110, height=30) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ask  ready")
        pane.send_keys("BTab")
        pane.wait_for("auto  ready")
        pane.send_keys("BTab")
        screen = pane.wait_for("plan  ready")
        assert "read-only tools" in screen  # what plan mode does, said on the switch
        pane.send_keys("BTab")
        screen = pane.wait_for("ask  ready")
        assert "● yolo" not in screen  # never one keystroke away
        pane.send_and_await_echo("hello")  # the app still takes prompts after the cycle
        pane.send_keys("C-d")
