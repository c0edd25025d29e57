"""Dialogs keep the conversation in view in a real terminal (issue 30, item 1): at
80×24 an 80-line write_file approval leaves the model's lead-in on screen above it,
and its three answers and key hints on screen under its scrolling diff."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec

pytestmark = tmux_test_marks

LEAD_IN = "Let me write the report now."
CONTENT = "".join(f"line {n} of the report\n" for n in range(1, 81))


def report_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return Reply(content="The report is written.")
    call = ToolCallSpec("write_file", json.dumps({"path": "REPORT.md", "content": CONTENT}))
    return Reply(content=LEAD_IN, tool_calls=[call])


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
def test_a_long_approval_keeps_the_lead_in_and_the_answers_on_screen(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    width, height = size
    with (
        fixture_provider(tmp_path, responder=report_responder) as provider,
        reasonix_in_tmux(provider, name="reasonix-docked", width=width, height=height) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ask  ready")
        pane.send_keys("Write the report", "Enter")
        pane.wait_for("Ctrl+C cancel turn")  # the last line of the dialog
        # The transcript ends above the dialog once laid out anew (a frame or two).
        deadline = time.monotonic() + 60
        while True:
            screen = pane.screen()
            lines = screen.splitlines()
            top = next(i for i, line in enumerate(lines) if "Allow write_file?" in line)
            if LEAD_IN in "\n".join(lines[:top]) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(lines) <= height
        assert LEAD_IN in "\n".join(lines[:top]), screen  # the transcript stays in view
        for answer in ("1  Allow once", "2  Allow for this session", "3  Deny"):
            assert answer in screen
        assert "line 1 of the report" in screen
        assert "line 80 of the report" not in screen  # the diff scrolls inside the dialog
        pane.send_keys("1")
        pane.wait_for("The report is written.")
        assert (provider.workspace / "REPORT.md").read_text() == CONTENT
        pane.send_keys("C-d")
