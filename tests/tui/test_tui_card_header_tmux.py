"""A tool card's header keeps its status at 80 columns in a real terminal (issue 30,
item 5): a command longer than the line is cut with "…" and "running…", then "✓ ok",
still ends the header."""

from __future__ import annotations

import json
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec

pytestmark = tmux_test_marks

LOOP = 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "test_case_$i ... passed"; sleep 0.3; done'


def looping_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return Reply(content="The tests passed.")
    return Reply(
        content="Let me run the tests.",
        tool_calls=[ToolCallSpec("bash", json.dumps({"command": LOOP}))],
    )


def _card_line(screen: str) -> str:
    return next(line for line in screen.splitlines() if "bash  for i in" in line)


def test_a_long_commands_card_ends_with_its_status_at_80_columns(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=looping_responder) as provider,
        reasonix_in_tmux(
            provider, name="reasonix-header80", args="--permission-mode yolo", width=80, height=24
        ) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ready")
        pane.send_keys("Run the tests", "Enter")
        running = _card_line(pane.wait_for("running…"))
        assert running.rstrip().endswith("running…") and "…  running…" in running, running
        done = _card_line(pane.wait_for("The tests passed."))
        assert done.rstrip().endswith("✓ ok") and "…" in done, done
        pane.send_keys("C-d")
