"""Escape sequences from the model or the provider are drawn, not obeyed, in a real
terminal: tmux runs ``python -m reasonix_tui`` against the loopback fixture, whose answer,
reasoning and error text carry an OSC 2 (set the title) and a screen clear. The pane's
title stays as it was and the transcript stays on screen. (A command's output: see
test_tui_live_bash_tmux.py.)"""

from __future__ import annotations

from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux, tmux_test_marks

from reasonix_testkit.script import HttpError, RecordedRequest, Reply

pytestmark = tmux_test_marks


def hostile(request: RecordedRequest) -> Reply | HttpError:
    messages = (request.json or {}).get("messages") or []
    last = [m.get("content") or "" for m in messages if m.get("role") == "user"][-1]
    if "FAIL" in last:
        return HttpError(402, "balance \x1b]2;PWNED-ERROR\x07 low")
    return Reply(
        content="answer \x1b]2;PWNED-ANSWER\x07 text \x1b[2J end",
        reasoning="thinking \x1b]2;PWNED-REASONING\x07 more",
    )


def test_model_and_provider_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=hostile) as provider,
        reasonix_in_tmux(provider, name="reasonix-escapes") as pane,
    ):
        pane.wait_for("ask  ready")
        pane.send_keys("first prompt", "Enter")
        screen = pane.wait_for("text \\x1b[2J end")
        assert "answer \\x1b]2;PWNED-ANSWER\\x07" in screen and "first prompt" in screen
        pane.wait_for("ask  ready")
        pane.send_keys("C-o")  # the thought, expanded
        pane.wait_for("thinking \\x1b]2;PWNED-REASONING\\x07 more")
        pane.send_keys("FAIL now", "Enter")
        screen = pane.wait_for("balance \\x1b]2;PWNED-ERROR\\x07 low")
        assert "first prompt" in screen  # nothing cleared
        title = tmux(
            "display-message", "-p", "-t", pane.session, "#{pane_title}", socket=pane.socket
        )
        assert "PWNED" not in title, title
        pane.send_keys("C-d")
