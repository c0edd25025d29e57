"""A large bracketed paste in a real terminal (issue 30 item 5): tmux pastes 400 lines
with ``paste-buffer -p``; the composer shows one chip, the transcript too, and the
model gets all 400 lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux, tmux_test_marks

from reasonix_testkit import Reply

pytestmark = tmux_test_marks

LINES = [f"log line {n:03d}: value={n * 7} $' \\1 ok" for n in range(1, 401)]


def _answer(request) -> Reply:  # type: ignore[no-untyped-def]
    return Reply(content="Got all of it.")


def test_a_400_line_bracketed_paste_collapses_and_reaches_the_model(tmp_path: Path) -> None:
    pasted = tmp_path / "paste.txt"
    pasted.write_text("\n".join(LINES))
    buffer = f"paste-{tmp_path.name}"
    with (
        fixture_provider(tmp_path, responder=_answer) as provider,
        reasonix_in_tmux(provider, name="reasonix-paste", width=100, height=30) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ask  ready")
        pane.send_keys("-l", "explain this: ")
        pane.wait_for("explain this:")
        tmux("load-buffer", "-b", buffer, str(pasted), socket=pane.socket)
        try:
            # -p: bracketed paste (the app turned it on); tmux sends newlines as CR.
            tmux("paste-buffer", "-p", "-b", buffer, "-t", pane.session, socket=pane.socket)
        finally:
            subprocess.run(
                ["tmux", "-S", pane.socket, "delete-buffer", "-b", buffer], capture_output=True
            )
        screen = pane.wait_for("[Pasted text #1 +400 lines]")
        assert "log line 001" not in screen  # nothing of it spilled into the composer
        pane.send_keys("Enter")
        pane.wait_for("Got all of it.")
        screen = pane.wait_for("ask  ready")
        assert "explain this: [Pasted text #1 +400 lines]" in screen
        assert "log line 2" not in screen  # the transcript shows the chip, not the lines
        body = provider.server.requests[-1].json or {}
        users = [m for m in body["messages"] if m["role"] == "user"]
        assert users[-1]["content"].startswith("explain this: " + "\n".join(LINES))
        pane.send_keys("C-d")
