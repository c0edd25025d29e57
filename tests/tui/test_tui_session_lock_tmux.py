"""Issue 30 N4 in real terminals: a second ``reasonix -c`` on a session open in
another pane says so at start; once the first quits, a prompt in the second works
(the refusal is not kept until restart)."""

from __future__ import annotations

from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_second_continue_warns_at_start_and_works_once_the_first_quits(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-lock-x") as first,
    ):
        first.wait_for("Ask Reasonix")
        first.send_and_await_echo("hello from x")
        with reasonix_in_tmux(provider, name="reasonix-lock-y", args="-c") as second:
            second.wait_for("open in another Reasonix process")
            second.send_keys("while held", "Enter")
            second.wait_for("in use by another Reasonix process")
            first.send_keys("C-d")
            first.wait_for_gone("Ask Reasonix")
            second.send_and_await_echo("again from y")
