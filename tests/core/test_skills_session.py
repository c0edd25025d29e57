"""Skills in a session, at the loopback fixture: the index is part of the frozen
prefix, run_skill brings bodies in as tool results, ``/<skill>`` in ``reasonix run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_core.skills.index import HEADING
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix
from tests.core.agent_helpers import bodies, run_turn, runtime
from tests.core.test_skills import skill_md, write_skill

pytestmark = pytest.mark.usefixtures("configured")


def project_skills(workspace: Path) -> Path:
    return workspace / ".reasonix" / "skills"


def tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_the_index_is_in_the_prefix_and_survives_mid_session_edits(workspace, server):
    root = project_skills(workspace)
    write_skill(root, "deploy", skill_md("deploy", "Ship the app", body="Run make deploy."))
    write_skill(root, "lint", skill_md("lint", "Lint the code"))
    server.enqueue(Reply(content="one"), Reply(content="two"))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "first")
        # Mid-session: an edited description, a new skill, a deleted one.
        write_skill(root, "deploy", skill_md("deploy", "CHANGED", body="Changed body."))
        write_skill(root, "added", skill_md("added", "Added later"))
        (root / "lint" / "SKILL.md").unlink()
        events += await run_turn(rt, "second")
    first, second = server.requests
    system = json.loads(first.body)["messages"][0]["content"]
    assert system.endswith(HEADING + "\n\n- deploy: Ship the app\n- lint: Lint the code\n")
    assert "Run make deploy." not in system  # bodies never enter the prefix
    assert "run_skill" in tool_names(json.loads(first.body))
    # Byte-exact: the second request starts with every byte of the first request's
    # prefix (system prompt and tool schemas), whatever happened on disk meanwhile.
    a, b = json.loads(first.body), json.loads(second.body)
    assert b["messages"][0] == a["messages"][0] and b["tools"] == a["tools"]
    for part in (a["messages"][0], a["tools"]):
        raw = json.dumps(part, ensure_ascii=False, separators=(",", ":")).encode()
        assert raw in first.body and raw in second.body
    assert not [e for e in events if isinstance(e, ev.PrefixChanged)]


async def test_no_skills_no_index_and_no_tool(workspace, server):
    server.enqueue(Reply(content="ok"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "hi")
        assert not rt.skills
    body = bodies(server)[0]
    assert "run_skill" not in tool_names(body)
    assert "# Skills" not in body["messages"][0]["content"]


async def test_only_user_invoked_skills_offer_the_model_nothing(workspace, server):
    write_skill(
        project_skills(workspace),
        "release",
        skill_md("release", "Cut a release", **{"disable-model-invocation": "true"}),
    )
    server.enqueue(Reply(content="ok"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "hi")
        assert "release" in rt.skills
    body = bodies(server)[0]
    assert "run_skill" not in tool_names(body) and "# Skills" not in body["messages"][0]["content"]


async def test_run_skill_returns_the_current_body_with_arguments(workspace, server):
    root = project_skills(workspace)
    write_skill(root, "greet", skill_md("greet", "Greets", body="Say hello to $1 in $2."))
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("run_skill", '{"name":"greet","arguments":"Ada French"}')]),
        Reply(content="done"),
        Reply(tool_calls=[ToolCallSpec("run_skill", '{"name":"greet","arguments":"Bob"}')]),
        Reply(content="done again"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "greet Ada")
        write_skill(root, "greet", skill_md("greet", "Greets", body="Edited: wave at $1."))
        events += await run_turn(rt, "greet Bob")
    requests = bodies(server)
    first = tool_results(requests[1])[0]
    assert "Say hello to Ada in French." in first
    assert first.startswith('<skill name="greet" folder="')
    # The edit applies to the next load; the earlier result replays unchanged.
    later = tool_results(requests[3])
    assert later[0] == first and "Edited: wave at Bob." in later[1]
    assert not [e for e in events if isinstance(e, ev.PrefixChanged)]
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [e.is_error for e in finished] == [False, False]


async def test_run_skill_errors_are_results(workspace, server):
    root = project_skills(workspace)
    write_skill(root, "child", skill_md("child", "Runs apart", runAs="subagent"))
    write_skill(root, "gone", skill_md("gone", "Will vanish"))
    # (A subagent skill now runs through the runner: tests/core/test_subagent_skills.py.)
    calls = [
        '{"name":"../../../etc/passwd"}',
        '{"name":"gone"}',
        '{"nme":"child"}',
    ]
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("run_skill", c) for c in calls]),
        Reply(content="ok"),
    )
    async with runtime(workspace) as rt:
        (root / "gone" / "SKILL.md").unlink()
        events = await run_turn(rt, "go")
    results = tool_results(bodies(server)[1])
    assert "unknown skill '../../../etc/passwd'" in results[0]
    assert "skills in this session: child, gone" in results[0]
    assert "cannot be used" in results[1] and "no SKILL.md" in results[1]
    assert "invalid arguments" in results[2]
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert all(e.is_error for e in finished) and len(finished) == 3
    assert isinstance(events[-1], ev.TurnFinished)


async def test_the_subagent_hook_runs_subagent_skills(workspace, server):
    from reasonix_core.tool.base import ToolResult

    write_skill(project_skills(workspace), "child", skill_md("child", "Apart", runAs="subagent"))
    seen: list[tuple[str, str]] = []

    async def run_child(skill, arguments: str, ctx) -> ToolResult:
        seen.append((skill.name, arguments))
        return ToolResult(text=f"child finished {arguments}")

    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("run_skill", '{"name":"child","arguments":"task"}')]),
        Reply(content="ok"),
    )
    async with runtime(workspace) as rt:
        rt.agent.tool_context.run_subagent_skill = run_child
        await run_turn(rt, "go")
    assert seen == [("child", "task")]
    assert tool_results(bodies(server)[1]) == ["child finished task"]


# -- reasonix run "/<skill> args" ----------------------------------------------


def user_message(server) -> str:
    body = json.loads(server.requests[0].body)
    return [m["content"] for m in body["messages"] if m["role"] == "user"][0]


def test_headless_slash_skill_sends_the_expanded_body(workspace, server):
    write_skill(
        project_skills(workspace), "review", skill_md("review", "Review", body="Review $ARGUMENTS.")
    )
    server.enqueue(Reply(content="reviewed"))
    proc = reasonix(workspace, "run", "/review src/app.py carefully")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "reviewed"
    assert user_message(server).startswith("Review src/app.py carefully.")


def test_headless_slash_name_that_is_no_command_is_a_usage_error(workspace, server):
    # As in the TUI ("Unknown command"): one expander decides for both (issue 15); a
    # mistyped /name is not sent to the model as text. A path is still text.
    proc = reasonix(workspace, "run", "/not-a-skill hello")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: unknown command /not-a-skill")
    assert server.requests == []
    server.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "/usr/bin/env hello")
    assert proc.returncode == 0, proc.stderr
    assert user_message(server).startswith("/usr/bin/env hello")


def test_headless_reports_broken_skill_files_and_runs(workspace, server):
    root = project_skills(workspace)
    write_skill(root, "ok", skill_md("ok", "Fine", body="Fine body."))
    write_skill(root, "bad", "---\nname: bad\nrunAs: never\ndescription: x\n---\nbody\n")
    server.enqueue(Reply(content="ran"))
    proc = reasonix(workspace, "run", "/ok")
    assert proc.returncode == 0, proc.stderr
    assert "warning: skill file " in proc.stderr
    assert "bad/SKILL.md: line 3: runAs must be 'inline' or 'subagent'" in proc.stderr
    assert user_message(server).startswith("Fine body.")


def test_headless_slash_skill_the_user_may_not_run_is_exit_2(workspace, server):
    write_skill(
        project_skills(workspace),
        "background",
        skill_md("background", "Knowledge", **{"user-invocable": "false"}),
    )
    proc = reasonix(workspace, "run", "/background now")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("reasonix: error: skill 'background'")
    assert "Traceback" not in proc.stderr
    assert server.requests == []


def test_a_continued_session_keeps_its_index(workspace, server):
    root = project_skills(workspace)
    write_skill(root, "alpha", skill_md("alpha", "First skill"))
    server.enqueue(Reply(content="one"))
    assert reasonix(workspace, "run", "first").returncode == 0
    write_skill(root, "alpha", skill_md("alpha", "Edited between runs"))
    write_skill(root, "beta", skill_md("beta", "Added between runs"))
    server.enqueue(Reply(content="two"))
    proc = reasonix(workspace, "run", "-c", "second")
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(r.body) for r in server.requests)
    # The stored system prompt (and its index) is reused: the cache still hits.
    assert second["messages"][0] == first["messages"][0]
    assert "- alpha: First skill" in first["messages"][0]["content"]
    assert "beta" not in second["messages"][0]["content"]
    assert second["tools"] == first["tools"]


async def test_tools_enabled_without_run_skill_leaves_the_index_out(workspace, server, home):
    config = home / "config.toml"
    config.write_text(config.read_text() + '\n[tools]\nenabled = ["read_file"]\n')
    write_skill(project_skills(workspace), "x", skill_md("x", "A skill"))
    server.enqueue(Reply(content="ok"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "hi")
        assert "x" in rt.skills  # still a /x command
    body = bodies(server)[0]
    assert tool_names(body) == ["read_file", "use_capability"]  # the proxy is every session's
    assert "# Skills" not in body["messages"][0]["content"]


def test_headless_skill_error_with_an_mcp_server_is_one_line(workspace, server, home):
    # The MCP host's task group must not wrap the error (a traceback, exit 1).
    import sys

    from tests.core.mcp_helpers import STDIO_SERVER

    config = home / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[mcp.servers.fx]\ncommand = "{sys.executable}"\nargs = ["{STDIO_SERVER}", "serve"]\n'
    )
    write_skill(project_skills(workspace), "bg", skill_md("bg", "x", **{"user-invocable": "false"}))
    proc = reasonix(workspace, "run", "/bg now")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("reasonix: error: skill 'bg'")
    assert "Traceback" not in proc.stderr
    assert server.requests == []
