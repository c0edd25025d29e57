"""The model's lead-in stays drawn above a docked question in a real terminal (issue
30, item 1, audit N1): at 80×24, with the transcript overflowing, each question the
``ask`` tool opens shows "I need a decision first." above it while it is open (it
stayed blank in about half the tries, until the dialog closed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tmux_session import TmuxPane, fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec

pytestmark = tmux_test_marks

LEAD_IN = "I need a decision first."
QUESTION = "Which database should we use?"
TRIES = 6


def ask_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return Reply(content="Done with ask.")
    prompt = str(last.get("content") or "")
    if "ASKME" not in prompt:
        return Reply(reasoning="Echo.", content="You said: " + prompt.split("<")[0].strip())
    question = {"question": QUESTION, "options": ["SQLite (recommended)", "Postgres", "MySQL"]}
    call = ToolCallSpec("ask", json.dumps({"questions": [question]}))
    return Reply(reasoning="Ask.", content=LEAD_IN, tool_calls=[call])


def lead_in_above(pane: TmuxPane, attempt: str, timeout: float = 60.0) -> str:
    """Wait until the question for ``attempt`` is open with the lead-in drawn above it."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = pane.screen()
        lines = screen.splitlines()
        title = next((i for i, line in enumerate(lines) if QUESTION in line), None)
        mine = next((i for i, line in enumerate(lines) if attempt in line), None)
        if title is not None and mine is not None:
            if any(LEAD_IN in line for line in lines[mine:title]):
                return screen
        time.sleep(0.2)
    raise AssertionError(f"the lead-in is not drawn above the dialog; last screen:\n{screen}")


def test_the_lead_in_stays_above_each_question_at_80x24(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=ask_responder) as provider,
        reasonix_in_tmux(provider, name="reasonix-lead-in", width=80, height=24) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ask  ready")
        for n in range(4):  # the transcript overflows
            pane.send_keys(f"hello {n}", "Enter")
            pane.wait_for(f"You said: hello {n}")
            pane.wait_for("ask  ready")
        for n in range(TRIES):
            attempt = f"ASKME {n}"
            pane.send_keys(attempt, "Enter")
            pane.wait_for("Esc decline to answer")
            # Read again after the dialog's layout has settled: a lead-in parked on a
            # stale layout stayed blank from then on, so a later screen must hold it.
            lead_in_above(pane, attempt)
            time.sleep(1.0)
            lead_in_above(pane, attempt)
            pane.send_keys("Escape")
            pane.wait_for_gone("Esc decline to answer")
            pane.wait_for("ask  ready")
        pane.send_keys("C-d")
