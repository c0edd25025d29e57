"""Interactive approvals through the real loop: previews, answers, session scopes."""

from __future__ import annotations

import json

import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import ApprovalDecision
from reasonix_testkit import Reply, ScriptedApprover, ToolCallSpec
from tests.core.agent_helpers import run_turn, runtime

pytestmark = pytest.mark.usefixtures("configured")


def edit(path: str, old: str, new: str) -> ToolCallSpec:
    return ToolCallSpec(
        "edit_file", json.dumps({"path": path, "old_string": old, "new_string": new})
    )


async def test_edit_approval_carries_a_diff_preview_and_the_event_a_diff(workspace, server):
    (workspace / "app.py").write_text("x = 1\n")
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "app.py"}')]),
        Reply(tool_calls=[edit("app.py", "x = 1", "x = 2")]),
        Reply(content="done"),
    )
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    async with runtime(workspace, approver=approver) as rt:
        events = await run_turn(rt, "change x")
    assert len(approver.seen) == 1  # the read did not ask
    request = approver.seen[0]
    assert request.tool == "edit_file"
    assert request.summary == "Edit app.py"
    assert "-x = 1" in request.preview and "+x = 2" in request.preview
    assert (workspace / "app.py").read_text() == "x = 2\n"
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished) and e.name == "edit_file"]
    assert "+x = 2" in finished[0].diff


async def test_denied_write_leaves_the_file_and_tells_the_model(workspace, server):
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path": "new.txt", "content": "x"}')]),
        Reply(content="ok"),
    )
    approver = ScriptedApprover(decisions=[ApprovalDecision.DENY])
    async with runtime(workspace, approver=approver) as rt:
        events = await run_turn(rt, "write")
    assert not (workspace / "new.txt").exists()
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert finished.outcome == "denied"


async def test_allow_for_session_covers_the_next_matching_call(workspace, server):
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command": "echo one"}')]),
        Reply(tool_calls=[ToolCallSpec("bash", '{"command": "echo two"}')]),
        Reply(content="done"),
    )
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_SESSION])
    async with runtime(workspace, approver=approver) as rt:
        events = await run_turn(rt, "echo twice")
    assert len(approver.seen) == 1
    assert approver.seen[0].summary == "Run: echo one"
    results = [e.result for e in events if isinstance(e, ev.ToolCallFinished)]
    assert "one" in results[0] and "two" in results[1]
