"""Esc during a fleet: cancelling the parent's turn cancels every running child, starts
nothing new, and leaves the parent's transcript valid for the next request (the
fixture is as strict as DeepSeek about a call without its result)."""

from __future__ import annotations

from contextlib import aclosing

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_testkit import Reply, Stall
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, install, requests_of

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: run a fleet, then wait"


async def test_cancelling_the_parent_cancels_every_child_and_keeps_the_transcript_valid(
    workspace, server
):
    script = install(server)
    items = [
        {"id": "slow", "prompt": "ITEM-SLOW: think for long", "read_only": True},
        {"id": "fast", "prompt": "ITEM-FAST: answer at once", "read_only": True},
        {"id": "after", "prompt": "ITEM-AFTER: never", "depends_on": ["slow"]},
    ]
    script.when(
        PARENT, call("fleet", "call_f", items=items), Reply(content="parent after the cancel")
    )
    script.when("ITEM-SLOW", Stall(60))  # a model that does not answer
    script.when("ITEM-FAST", Reply(content="fast done"))
    seen: list[ev.Event] = []
    async with runtime(workspace, permission_mode="yolo") as rt:
        with anyio.fail_after(30):  # a deadlock guard, not a timing assertion
            async with anyio.create_task_group() as tg:

                def slow_running_and_fast_done() -> bool:
                    started = {e.fleet_item for e in seen if isinstance(e, ev.SubagentStarted)}
                    done = [e for e in seen if isinstance(e, ev.SubagentFinished)]
                    return "slow" in started and len(done) == 1

                async def consume() -> None:
                    async with aclosing(rt.agent.run(PARENT)) as events:
                        async for event in events:
                            seen.append(event)
                            if slow_running_and_fast_done():
                                tg.cancel_scope.cancel()  # Esc

                tg.start_soon(consume)
        # "slow" was running and got cancelled; "after" never started.
        started = [e.fleet_item for e in seen if isinstance(e, ev.SubagentStarted)]
        assert sorted(started) == ["fast", "slow"]
        assert [e.status for e in seen if isinstance(e, ev.SubagentFinished)] == ["done"]
        assert requests_of(server, "ITEM-AFTER") == []
        assert not any(isinstance(e, ev.TurnFinished) for e in seen)
        # The fleet's call has exactly one result in the parent's transcript.
        messages = session_messages(rt)
        results = [m for m in messages if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in results] == ["call_f"]
        # The next turn's request is accepted (no orphaned call) and answered.
        events = await run_turn(rt, "what happened?")
    assert server.requests[-1].status == 200
    assert events[-1].text == "parent after the cancel"
