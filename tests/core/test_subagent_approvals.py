"""A permission request from a subagent says which child asks (the session's
gate and approver are shared), so the user never approves a child's call
believing it is the main agent's."""

from __future__ import annotations

import pytest

from reasonix_core.permission.approver import ApprovalDecision, Requester
from reasonix_testkit import Reply, ScriptedApprover
from tests.core.agent_helpers import run_turn, runtime
from tests.core.subagent_helpers import call, install

pytestmark = pytest.mark.usefixtures("configured")


async def test_a_childs_approval_request_names_the_child_and_the_parents_does_not(
    workspace, server
):
    script = install(server)
    script.when(
        "APPROVE-PARENT",
        call("write_file", "call_own", path="own.txt", content="parent\n"),
        call(
            "fleet",
            "call_f",
            items=[{"id": "build", "prompt": "APPROVE-CHILD: write the backend\nin detail"}],
        ),
        Reply(content="parent done"),
    )
    script.when(
        "APPROVE-CHILD",
        call("write_file", "call_w", path="child.txt", content="child\n"),
        Reply(content="child done"),
    )
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE] * 3)
    async with runtime(workspace, permission_mode="ask", approver=approver) as rt:
        await run_turn(rt, "APPROVE-PARENT: write and delegate")
    asked = [(r.tool, r.requester) for r in approver.seen]
    assert asked == [
        ("write_file", None),  # the main agent's own call
        ("fleet", None),  # delegating is the main agent's call too
        (
            "write_file",
            Requester(
                agent_path=("call_f#build",),
                name="task",
                task="APPROVE-CHILD: write the backend",
                lineage=("build · task",),  # who, for people: no call id
            ),
        ),
    ]
    assert (workspace / "child.txt").read_text() == "child\n"
