"""Subagent continuations and run options (issue 32 item 3, seed 000 §3.13):
``continue_from`` / ``fork_from`` on ``task`` and fleet items go on in an earlier
child's transcript (or a copy of it); the plan-mode marker and the language reach
children as run options; the capsule records all of it. Real agents against the
loopback fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, capsules, install, report, requests_of

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: study the parser"


def child_files(home: Path) -> list[Path]:
    return sorted((home / "sessions" / "subagents").rglob("*.jsonl"))


def child_id(home: Path) -> str:
    (path,) = child_files(home)
    return path.stem


async def first_child_run(workspace: Path, server, home: Path):
    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", prompt="CHILD-A: where is parse defined?"),
        Reply(content="parent: noted"),
    )
    script.when("CHILD-A", Reply(content="in parser.py", reasoning="looked"))
    async with runtime(workspace, permission_mode="auto") as rt:
        await run_turn(rt, PARENT)
        messages = session_messages(rt)
    return script, messages


async def test_continue_from_goes_on_in_the_same_transcript(workspace, server, home):
    script, messages = await first_child_run(workspace, server, home)
    earlier = child_id(home)
    assert f"[subagent session: {earlier}" in messages[-2]["content"]  # the tool result
    before = requests_of(server, "CHILD-A")
    script.when(
        PARENT,
        call("read_only_task", prompt="CHILD-A-MORE: and who calls it?", continue_from=earlier),
        Reply(content="parent: done"),
    )
    script.when("CHILD-A", Reply(content="main.py calls it"))
    async with runtime(workspace, permission_mode="auto", continue_last=True) as rt:
        events = await run_turn(rt, "PARENT-TASK: go on")
    assert isinstance(events[-1], ev.TurnFinished)
    after = requests_of(server, "CHILD-A")[len(before) :]
    assert len(after) == 1
    old, new = before[-1].json, after[0].json
    assert old is not None and new is not None
    # The continued child's request extends its earlier one: same messages, then its
    # answer, then the new task (no fresh workspace context).
    assert new["messages"][: len(old["messages"])] == old["messages"]
    assert new["messages"][-1] == {"role": "user", "content": "CHILD-A-MORE: and who calls it?"}
    assert child_id(home) == earlier  # still one child transcript, appended to
    records = (child_files(home)[0]).read_text()
    assert "main.py calls it" in records and "subagent_continued" in records
    (capsule,) = capsules(home)
    assert capsule["continued_from"] == earlier and capsule["forked_from"] is None


async def test_fork_from_copies_and_leaves_the_original_untouched(workspace, server, home):
    script, _ = await first_child_run(workspace, server, home)
    earlier = child_id(home)
    original = child_files(home)[0].read_bytes()
    script.when(
        PARENT,
        call("read_only_task", prompt="CHILD-A-FORK: try the other reading", fork_from=earlier),
        Reply(content="parent: done"),
    )
    script.when("CHILD-A", Reply(content="forked answer"))
    async with runtime(workspace, permission_mode="auto", continue_last=True) as rt:
        await run_turn(rt, "PARENT-TASK: fork it")
    files = child_files(home)
    assert len(files) == 2
    assert (files[0].parent / f"{earlier}.jsonl").read_bytes() == original
    fork = next(p for p in files if p.stem != earlier)
    assert "forked answer" in fork.read_text() and "in parser.py" in fork.read_text()
    forked = next(c for c in capsules(home) if c["forked_from"])
    assert forked["forked_from"] == earlier and forked["continued_from"] is None


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"continue_from": "../../etc/passwd"}, "is not a session id"),
        ({"continue_from": "20990101-000000-abcdef"}, "no subagent session"),
        ({"continue_from": "x", "fork_from": "y"}, "not both"),
    ],
)
async def test_a_bad_continuation_is_refused_before_anything_runs(
    workspace, server, home, args, problem
):
    script = install(server)
    script.when(
        PARENT, call("read_only_task", prompt="CHILD-X: q", **args), Reply(content="parent done")
    )
    async with runtime(workspace, permission_mode="auto") as rt:
        await run_turn(rt, PARENT)
        messages = session_messages(rt)
    result = next(m for m in messages if m["role"] == "tool")["content"]
    assert problem in result
    assert requests_of(server, "CHILD-X") == []


async def test_another_agents_child_cannot_be_continued(workspace, server, home):
    await first_child_run(workspace, server, home)
    earlier = child_id(home)
    script = install(server)
    script.when(
        "PARENT-TWO",
        call("read_only_task", prompt="CHILD-Y: q", continue_from=earlier),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="auto") as rt:  # a new session
        await run_turn(rt, "PARENT-TWO: sneak")
        messages = session_messages(rt)
    assert "is not a subagent this agent started" in messages[-2]["content"]


async def test_a_writer_cannot_continue_a_read_only_child(workspace, server, home):
    script, _ = await first_child_run(workspace, server, home)
    earlier = child_id(home)
    script.when(
        PARENT, call("task", prompt="CHILD-W: now edit", continue_from=earlier), Reply(content="x")
    )
    async with runtime(workspace, permission_mode="auto", continue_last=True) as rt:
        await run_turn(rt, "PARENT-TASK: write")
        messages = session_messages(rt)
    assert "another kind of subagent" in messages[-2]["content"]


async def test_fleet_items_continue_and_two_may_not_share_one(workspace, server, home):
    script, _ = await first_child_run(workspace, server, home)
    earlier = child_id(home)
    both = [
        {"prompt": "CHILD-F1: a", "read_only": True, "continue_from": earlier},
        {"prompt": "CHILD-F2: b", "read_only": True, "continue_from": earlier},
    ]
    script.when(
        PARENT,
        call("fleet", items=both),
        call("fleet", items=[both[0]]),
        Reply(content="parent: done"),
    )
    script.when("CHILD-A", Reply(content="fleet went on"))
    async with runtime(workspace, permission_mode="auto", continue_last=True) as rt:
        await run_turn(rt, "PARENT-TASK: fleet")
        messages = session_messages(rt)
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert "two items continue_from the same subagent" in results[-2]
    assert "fleet went on" in results[-1]
    assert "CHILD-F1: a" in child_files(home)[0].read_text()


async def test_plan_mode_and_language_reach_children_as_run_options(workspace, server, home):
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace("[agent]\n", '[agent]\nreasoning_language = "zh"\n')
    )
    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", prompt="CHILD-P: look"),
        Reply(content="parent done"),
    )
    script.when("CHILD-P", Reply(content="looked"))
    async with runtime(workspace, permission_mode="auto", plan_mode=True) as rt:
        await run_turn(rt, PARENT)
    (first,) = requests_of(server, "CHILD-P")
    assert first.json is not None
    user = first.json["messages"][1]["content"]
    assert "<run-options>\nplan-mode: on." in user and "language: think and answer in zh." in user
    assert user.index("<run-options>") < user.index("CHILD-P: look")  # shared part first
    (capsule,) = capsules(home)
    assert capsule["run_options"] == {"language": "zh", "plan_mode": True}


async def test_without_run_options_the_child_is_told_none(workspace, server, home):
    await first_child_run(workspace, server, home)
    (first,) = requests_of(server, "CHILD-A")
    assert first.json is not None
    assert "<run-options>" not in json.dumps(first.json)
    assert capsules(home)[0]["run_options"] == {}
    assert report  # the writer helpers stay importable for the fleet tests
