"""Serial MCP gating across a fleet's children, end to end (seed 000 §3.16): three
real children of one fleet call the same tool of a real stdio MCP server through
their own ``use_capability`` front ends at the same time. A ``serial`` server lets
one call in at a time, whichever child makes it; a ``parallel`` one lets them meet."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn
from tests.core.mcp_helpers import host, stdio_server
from tests.core.subagent_helpers import call, install, requests_of

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: ask three children to use the browser"
CHILDREN = ("CHILD-A", "CHILD-B", "CHILD-C")


def _results(server, needle: str) -> list[str]:
    last = requests_of(server, needle)[-1].json
    assert last is not None
    return [m["content"] for m in last["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("concurrency", "within", "answer"), [("serial", 0.5, "alone"), ("parallel", 60.0, "met")]
)
async def test_a_serial_server_takes_one_childs_call_at_a_time(
    workspace, server, tmp_path: Path, concurrency: str, within: float, answer: str
):
    script = install(server)
    items = [{"id": c, "prompt": f"{c}: look", "read_only": True} for c in CHILDREN]
    script.when(PARENT, call("fleet", "call_f", items=items), Reply(content="parent done"))
    meet = {"action": "call", "name": "mcp__fx__meet", "arguments": {"n": 3, "within": within}}
    for child in CHILDREN:
        script.when(child, call("use_capability", **meet), Reply(content=f"{child} done"))
    h = host(tmp_path, stdio_server("fx", concurrency=concurrency))
    async with h:
        settings = RunSettings(workspace=workspace, permission_mode="yolo")
        async with build_session(settings, approver=FailClosedApprover(), mcp_host=h) as rt:
            events = await run_turn(rt, PARENT)
        assert events[-1].text == "parent done"  # type: ignore[attr-defined]
        assert [_results(server, c) for c in CHILDREN] == [[answer]] * 3
