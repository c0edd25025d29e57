"""The fleet tool end to end: the model's plan, preflight, each item through the
one runner, state changes and child events in the parent's stream."""

from __future__ import annotations

import pytest

from reasonix_core import events as ev
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, calls, install, metrics_of, report, requests_of

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: run a fleet"


async def test_a_fleet_runs_its_graph_through_the_runner(workspace, server):
    (workspace / "b").mkdir()
    script = install(server)
    items = [
        {"id": "look", "prompt": "ITEM-LOOK: read around", "read_only": True},
        {"id": "build", "prompt": "ITEM-BUILD: write b/x.txt", "write_paths": ["b"]},
        {
            "id": "check",
            "prompt": "ITEM-CHECK: check b",
            "depends_on": ["build"],
            "read_only": True,
        },
        {"id": "bad", "prompt": "ITEM-BAD: fails", "write_paths": ["c"]},
        {"id": "after", "prompt": "ITEM-AFTER: never runs", "depends_on": ["bad"]},
    ]
    script.when(PARENT, call("fleet", "call_f", items=items), Reply(content="parent done"))
    script.when("ITEM-LOOK", Reply(content="looked"))
    script.when(
        "ITEM-BUILD",
        calls(("write_file", {"path": "b/x.txt", "content": "x\n"})),
        report("complete"),
        Reply(content="BUILD-ANSWER: built b/x.txt"),
    )
    script.when("ITEM-CHECK", Reply(content="checked"))
    script.when("ITEM-BAD", report("failed", unresolved=("could not",)), Reply(content="gave up"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")

    text = result["content"]
    assert text.startswith("fleet: 5 items, 3 done, 1 failed, 1 skipped")
    assert '<item id="after" state="skipped">' in text
    assert '<item id="bad" state="failed" status="failed">' in text
    assert requests_of(server, "ITEM-AFTER") == []
    # The dependent received its dependency's result in its task.
    check = requests_of(server, "ITEM-CHECK")[0].json
    assert check is not None
    assert "BUILD-ANSWER: built b/x.txt" in check["messages"][1]["content"]
    # Plan first (every item waiting), then the items' states and their children's events.
    changes = [e for e in events if isinstance(e, ev.FleetItemChanged)]
    assert [c.state for c in changes[:5]] == ["waiting"] * 5
    assert all(c.tool_call_id == "call_f" and c.agent_path == () for c in changes)
    started = {e.fleet_item: e for e in events if isinstance(e, ev.SubagentStarted)}
    assert set(started) == {"look", "build", "check", "bad"}
    assert started["build"].child_path == ("call_f#build",)
    first_running = next(i for i, e in enumerate(events) if getattr(e, "state", "") == "running")
    assert all(
        isinstance(e, ev.FleetItemChanged) for e in events[first_running - 5 : first_running]
    )
    m = metrics_of(events)
    assert m.subagent_runs == 4 and m.completion_reports == 2
    assert m.subagent_mutations == 1


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        (
            [
                {"id": "a", "prompt": "x", "depends_on": ["b"]},
                {"id": "b", "prompt": "y", "depends_on": ["a"]},
            ],
            "cycle",
        ),
        ([{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}], "duplicate id"),
        ([{"prompt": "x", "depends_on": ["nope"]}], "not an item id"),
        ([{"prompt": "x", "profile": "nobody"}], "unknown subagent profile"),
        ([{"id": "a"}], "invalid arguments: items.0.prompt: Field required"),
        ([{"prompt": "x", "write_paths": ["../out"]}], "outside the workspace"),
    ],
)
async def test_a_plan_that_cannot_run_starts_nothing(workspace, server, items, problem):
    script = install(server)
    script.when(PARENT, call("fleet", items=items), Reply(content="parent done"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert problem in result
    assert len(server.requests) == 2
    assert not any(isinstance(e, ev.SubagentStarted | ev.FleetItemChanged) for e in events)


async def test_an_unclaimed_writer_narrows_its_reservation_to_what_it_wrote(
    workspace, server, home
):
    # A has no write_paths: it reserves the whole workspace to start, so B (which
    # claims b.txt) waits. Once A has written a.txt (path-aware writes only, no
    # bash here), its reservation is a.txt and B starts while A still runs. A's
    # second request waits in the fixture until B's first arrives; if B could not
    # start, it would wait for A and that wait would give up.
    # (Depth 1: the children cannot delegate, so every write is their own.)
    import threading

    from reasonix_testkit.script import first_user_text

    config = home / "config.toml"
    config.write_text(config.read_text().replace("[agent]\n", "[agent]\nmax_subagent_depth = 1\n"))

    script = install(server)
    items = [
        {"id": "a", "prompt": "ITEM-A: write a.txt"},
        {"id": "b", "prompt": "ITEM-B: write b.txt", "write_paths": ["b.txt"]},
    ]
    script.when(PARENT, call("fleet", "call_f", items=items), Reply(content="parent done"))
    script.when(
        "ITEM-A",
        calls(("write_file", {"path": "a.txt", "content": "a\n"})),
        Reply(content="a done"),
    )
    script.when(
        "ITEM-B", calls(("write_file", {"path": "b.txt", "content": "b\n"})), Reply(content="b")
    )
    b_started = threading.Event()
    a_requests = 0

    def responder(request):
        nonlocal a_requests
        text = first_user_text(request.json)
        if "ITEM-B" in text:
            b_started.set()
        elif "ITEM-A" in text:
            a_requests += 1
            if a_requests == 2:
                b_started.wait(60)
        return script(request)

    server.responder = responder
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
    assert b_started.is_set()
    order = [
        (type(e).__name__, e.fleet_item if isinstance(e, ev.SubagentStarted) else e.child_path)
        for e in events
        if isinstance(e, ev.SubagentStarted | ev.SubagentFinished)
    ]
    b_start = order.index(("SubagentStarted", "b"))
    a_end = order.index(("SubagentFinished", ("call_f#a",)))
    assert b_start < a_end, order
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished) and e.agent_path]
    assert [(e.name, e.is_error) for e in finished] == [("write_file", False)] * 2, finished
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
