"""Skills as subagent profiles: ``run_skill`` on a ``runAs: subagent`` skill and
``task(profile=...)`` go through the one runner, with the skill's body as the
child's whole system prompt, and the profile can only narrow what a child gets."""

from __future__ import annotations

import pytest

from reasonix_core import events as ev
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, capsules, install, requests_of, tool_names
from tests.core.test_skills import skill_md, write_skill

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: use a profile"
BODY = "REVIEWER-BODY: you review code and report findings."


def _reviewer(workspace, **front: str) -> None:
    root = workspace / ".reasonix" / "skills"
    write_skill(root, "reviewer", skill_md("reviewer", "Reviews code", body=BODY, **front))


async def test_run_skill_runs_a_subagent_skill_as_a_child(workspace, server, home):
    _reviewer(workspace, runAs="subagent", **{"read-only": "true"})
    script = install(server)
    script.when(
        PARENT,
        call("run_skill", "call_s", name="reviewer", arguments="SKILL-TASK: review parser.py"),
        Reply(content="parent done"),
    )
    script.when("SKILL-TASK", Reply(content="no findings"))
    async with runtime(workspace, permission_mode="auto") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]

    assert result == "no findings"
    child = requests_of(server, "SKILL-TASK")[0]
    assert child.json is not None
    assert child.json["messages"][0] == {"role": "system", "content": BODY + "\n"}
    names = tool_names(child)
    assert "write_file" not in names and "run_skill" not in names
    started = next(e for e in events if isinstance(e, ev.SubagentStarted))
    assert started.name == "reviewer" and started.read_only
    (capsule,) = capsules(home)
    assert capsule["system_prompt"]["source"] == "profile:reviewer"


async def test_a_profile_narrows_and_never_widens(workspace, server):
    # The file asks for bash and write_file; read-only wins, and bash is not in
    # the session's reach for a child anyway.
    _reviewer(
        workspace,
        runAs="subagent",
        **{"read-only": "true", "allowed-tools": "read_file, write_file, bash, grep"},
    )
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="PROFILED: review", profile="reviewer", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when("PROFILED", Reply(content="reviewed"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    names = tool_names(requests_of(server, "PROFILED")[0])
    assert names == ["read_file", "grep"]


async def test_an_inline_skill_or_an_unknown_name_is_no_profile(workspace, server):
    _reviewer(workspace)  # runAs defaults to inline
    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", prompt="X: a", profile="reviewer"),
        call("read_only_task", prompt="Y: b", profile="nobody"),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="auto") as rt:
        await run_turn(rt, PARENT)
        results = [m["content"] for m in session_messages(rt) if m["role"] == "tool"]
    assert "does not run as a subagent" in results[0]
    assert "unknown subagent profile 'nobody'" in results[1]
    assert requests_of(server, "X: a") == [] and requests_of(server, "Y: b") == []
