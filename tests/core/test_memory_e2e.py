"""Memory end to end: the real Agent against the loopback fixture server.

Recall must land in the user turn only: the system prompt and the tools bytes
of every request stay identical, and earlier messages replay byte for byte.
"""

from __future__ import annotations

import itertools
import json

import pytest

from reasonix_core import events as ev
from reasonix_core.memory.facts import FactStore
from reasonix_core.memory.recall import OPEN_TAG
from reasonix_testkit import Reply, ToolCallSpec
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages

pytestmark = pytest.mark.usefixtures("configured")


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


async def test_recall_lands_in_user_turn_and_prefix_bytes_do_not_move(home, workspace, server):
    store = FactStore(home, workspace.resolve())
    fact = store.create(
        type="project",
        title="Database migrations",
        body="Use alembic; never edit an applied migration.",
    )
    server.enqueue(Reply(content="one"), Reply(content="two"), Reply(content="three"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "how do we write a database migration here?")
        await run_turn(rt, "continue")
        await run_turn(rt, "and which alembic command applies the migration?")
        trace = rt.agent.tool_context.recall.last
    first, second, third = bodies(server)

    # The system prompt and the tool schemas never carry recall.
    assert fact.id not in canonical(first["messages"][0]) and fact.id not in canonical(
        first["tools"]
    )
    for later in (second, third):
        assert canonical(later["messages"][0]) == canonical(first["messages"][0])
        assert canonical(later["tools"]) == canonical(first["tools"])
        # Append-only: everything sent before is replayed byte for byte.
        n = len(first["messages"])
        assert canonical(later["messages"][:n]) == canonical(first["messages"])
    # The same at the byte level: the tools (and everything after them) are
    # identical, and each request starts with the previous request's messages.
    raw = [r.body for r in server.requests]
    tails = {body[body.index(b'"tools":') :] for body in raw}
    assert len(tails) == 1
    for before, after in itertools.pairwise(raw):
        prefix = before[: before.index(b'],"tools":')]
        assert after.startswith(prefix)

    turn1 = first["messages"][-1]["content"]
    assert turn1.startswith("how do we write a database migration here?\n\n<workspace-context>")
    assert turn1.index("</workspace-context>") < turn1.index(OPEN_TAG)
    assert f"{fact.id} · updated" in turn1 and "never edit an applied migration" in turn1

    turn2 = second["messages"][-1]["content"]
    assert turn2 == "continue"  # generic: suppressed, and no workspace context after turn 1

    turn3 = third["messages"][-1]["content"]
    assert turn3.startswith("and which alembic command applies the migration?\n\n" + OPEN_TAG)
    assert "<workspace-context>" not in turn3 and fact.id in turn3
    assert [r.fact.id for r in trace.recalled] == [fact.id]

    # The transcript stores exactly what was sent (the user turn with its suffix).
    users = [m["content"] for m in session_messages(rt) if m["role"] == "user"]
    assert users == [turn1, turn2, turn3]


async def test_no_facts_means_no_recall_block(workspace, server):
    server.enqueue(Reply(content="ok"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "explain the database migration setup")
    content = bodies(server)[0]["messages"][-1]["content"]
    assert "<memory-recall" not in content and "<workspace-context>" in content


async def test_headless_remember_saves_create_only_project_fact_but_not_others(
    home, workspace, server
):
    project = json.dumps(
        {"title": "Lint command", "content": "Run ruff check before committing.", "type": "project"}
    )
    user = json.dumps({"title": "Tone", "content": "The user likes terse answers.", "type": "user"})
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("remember", project), ToolCallSpec("remember", user)]),
        Reply(content="noted"),
    )
    async with runtime(workspace) as rt:  # FailClosedApprover: a headless run
        events = await run_turn(rt, "remember how we lint")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert len(finished) == 2
    saved, refused = finished
    assert "remember: saved project fact lint-command-" in saved.result
    assert "No user is available to approve remember" in refused.result
    facts = FactStore(home, workspace.resolve()).list()
    assert [f.title for f in facts] == ["Lint command"]

    # A later session recalls it.
    server.enqueue(Reply(content="use ruff"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "which lint command should I run before committing?")
    assert facts[0].id in bodies(server)[-1]["messages"][-1]["content"]


async def test_history_tool_finds_an_earlier_session(workspace, server):
    server.enqueue(Reply(content="The flaky test was caused by a missing await in poller.py."))
    async with runtime(workspace) as rt:
        await run_turn(rt, "why is test_poller flaky?")
        earlier = rt.agent.session_id
    server.enqueue(
        Reply(
            tool_calls=[ToolCallSpec("history", '{"operation": "search", "query": "poller flaky"}')]
        ),
        Reply(content="found it"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "what did we find about the poller last time?")
    result = next(e for e in events if isinstance(e, ev.ToolCallFinished)).result
    assert f"{earlier}#1 · assistant" in result
    assert "missing await in poller.py" in result
