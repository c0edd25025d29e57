"""Nested delegation shares the session's limits (docs/SUBAGENTS.md#scheduling):
``max_subagent_concurrency`` and ``max_parallel_writers`` bound every child
running at once, children of children included, and a parent waiting on its
children never deadlocks a full session. Real agents against the loopback
fixture; the concurrency is counted in the fixture's handler, never timed."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from reasonix_core.subagent.slots import Slots
from reasonix_testkit import ContentScript, RecordedRequest, Reply
from reasonix_testkit.script import ScriptItem, first_user_text
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, capsules, install, requests_of

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "NEST-PARENT: delegate twice over"
LEAF = "NEST-LEAF"


class CountingLeaves:
    """The fixture's responder, counting leaf agents inside a request at once.

    The first leaves are held at a barrier until the overlap is as large as the
    scheduler lets it be: more leaves than the limit (the limit is broken), or
    the limit reached while others wait for a slot. After that, requests pass."""

    def __init__(self, script: ContentScript, limit: int) -> None:
        self.script = script
        self.limit = limit
        self.slots: Slots | None = None
        self.inside = 0
        self.peak = 0
        self.released = False
        self._cond = threading.Condition()

    def __call__(self, request: RecordedRequest) -> ScriptItem:
        if LEAF not in first_user_text(request.json):
            return self.script(request)
        with self._cond:
            self.inside += 1
            self.peak = max(self.peak, self.inside)
            # A guard against a hang, not a timed assertion: the barrier opens on state.
            deadline = 60 / 0.02
            while not self.released and deadline > 0:
                if self.inside > self.limit or (self.inside == self.limit and self._queued()):
                    self.released = True
                    self._cond.notify_all()
                    break
                self._cond.wait(0.02)
                deadline -= 1
            self.inside -= 1
        return self.script(request)

    def _queued(self) -> bool:
        return self.slots is not None and self.slots.waiting > 0


def nested_fleet(name: str, *, writers: bool) -> list[dict[str, Any]]:
    if writers:
        return [
            {
                "id": f"{name}{n}",
                "prompt": f"{LEAF}-{name}{n}: edit",
                "write_paths": [f"{name}/{n}"],
            }
            for n in (1, 2, 3)
        ]
    return [
        {"id": f"{name}{n}", "prompt": f"{LEAF}-{name}{n}: look", "read_only": True}
        for n in (1, 2, 3)
    ]


@pytest.mark.parametrize(
    ("limits", "leaf_writers"),
    [
        # Every child, at any depth, counts against max_subagent_concurrency.
        ((2, 2), False),
        # Every writer, at any depth, counts against max_parallel_writers.
        ((6, 2), True),
    ],
)
async def test_nested_fleets_stay_within_the_sessions_limits_and_finish(
    workspace, server, limits: tuple[int, int], leaf_writers: bool
):
    concurrency, writers = limits
    limit = writers if leaf_writers else concurrency
    for top in ("a", "b"):
        (workspace / top).mkdir()
    script = ContentScript()
    counting = CountingLeaves(script, limit)
    install(server)
    server.responder = counting
    top_items = [
        {"id": top, "prompt": f"NEST-MID-{top}: split your part", "write_paths": [top]}
        for top in ("a", "b")
    ]
    script.when(PARENT, call("fleet", "call_top", items=top_items), Reply(content="all done"))
    for top in ("a", "b"):
        script.when(
            f"NEST-MID-{top}",
            call("fleet", f"call_{top}", items=nested_fleet(top, writers=leaf_writers)),
            Reply(content=f"{top} done"),
        )
        for n in (1, 2, 3):
            script.when(f"{LEAF}-{top}{n}", Reply(content=f"leaf {top}{n} done"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        services = rt.agent.tool_context.subagents.services
        services.slots = counting.slots = Slots(max_concurrency=concurrency, max_writers=writers)
        with anyio.fail_after(120):
            await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")
    assert counting.released
    # 2 middle children each ran a fleet of 3: 6 leaves, never more than the limit at once.
    assert counting.peak == limit, counting.peak
    assert result["content"].startswith("fleet: 2 items, 2 done"), result["content"]
    assert all(n == 0 for n in script.pending.values()), script.pending
    assert (services.slots.running, services.slots.writers, services.slots.waiting) == (0, 0, 0)


async def test_a_childs_fleet_resolves_its_items_claims_within_the_childs_own(
    workspace, server, home
):
    # The nested fleet's preflight resolves claims as the child's runner does:
    # an omitted claim inherits the child's, a path outside it fails the plan
    # before anything starts (not an item that fails after its siblings ran).
    for top in ("a", "b"):
        (workspace / top).mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_mid", prompt="NEST-OWN: split", write_paths=["a"]),
        Reply(content="parent done"),
    )
    outside = [
        {"id": "in", "prompt": "NEST-IN-1: edit", "write_paths": ["a/x"]},
        {"id": "out", "prompt": "NEST-OUT: edit", "write_paths": ["b/x"]},
    ]
    inherit = [{"id": "in", "prompt": "NEST-IN-2: edit"}]
    script.when(
        "NEST-OWN",
        call("fleet", "call_bad", items=outside),
        call("fleet", "call_good", items=inherit),
        Reply(content="mid done"),
    )
    script.when("NEST-IN-2", Reply(content="inherited"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    mid = requests_of(server, "NEST-OWN")
    bad = next(m for m in mid[1].json["messages"] if m["role"] == "tool")["content"]
    assert bad.startswith("fleet: item 'out': write_paths:"), bad
    assert "outside this subagent's own write claim (a)" in bad
    assert requests_of(server, "NEST-IN-1") == [] and requests_of(server, "NEST-OUT") == []
    (child,) = [c for c in capsules(home) if c["depth"] == 2]
    assert child["write_claim"] == ["a"]
