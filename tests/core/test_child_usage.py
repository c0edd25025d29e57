"""What each subagent spent is kept beside its spawning call's result (issue 30 item
7: a resumed card shows the figures a live one did), local only: no request carries it."""

from __future__ import annotations

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.child_usage import SUBAGENT_USAGE
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, install

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: run a fleet"


async def test_each_fleet_item_keeps_what_its_own_requests_spent(workspace, server):
    script = install(server)
    items = [
        {"id": "look", "prompt": "ITEM-LOOK: read around", "read_only": True},
        {"id": "deep", "prompt": "ITEM-DEEP: ask a helper", "read_only": True},
    ]
    script.when(PARENT, call("fleet", "call_f", items=items), Reply(content="parent done"))
    script.when("ITEM-LOOK", Reply(content="looked"))
    script.when(
        "ITEM-DEEP",
        call("read_only_task", prompt="GRANDCHILD: look deeper"),
        Reply(content="deep done"),
    )
    script.when("GRANDCHILD", Reply(content="grandchild answer"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")

    spent = result["meta"][SUBAGENT_USAGE]
    assert set(spent) == {"look", "deep"}
    live: dict[tuple[str, ...], list[ev.UsageReported]] = {}
    for e in events:
        if isinstance(e, ev.UsageReported) and e.agent_path:
            live.setdefault(e.agent_path, []).append(e)
    started = {e.fleet_item: e.child_path for e in events if isinstance(e, ev.SubagentStarted)
               if e.fleet_item}  # fmt: skip
    for item, path in started.items():
        own = live[path]  # the child's own requests, as its live card adds them
        assert spent[item]["prompt_tokens"] == sum(u.usage.prompt_tokens for u in own)
        assert spent[item]["completion_tokens"] == sum(u.usage.completion_tokens for u in own)
        assert spent[item]["cost"] == pytest.approx(sum(u.cost for u in own))
    assert len(live[started["deep"]]) == 2  # the grandchild's request is its own card's
    assert all(b"subagent_usage" not in r.body for r in server.requests)
