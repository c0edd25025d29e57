"""A PreToolUse hook's permissionDecision on an MCP tool the model calls through
``use_capability`` reaches the MCP target's own permission check: ``ask`` asks
about the MCP call, ``allow`` skips its question interactively, never beating a
deny rule and never an approval where nobody can answer (docs/HOOKS.md)."""

from __future__ import annotations

import json
from contextlib import aclosing

import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import ApprovalDecision, FailClosedApprover
from reasonix_testkit import Reply, ScriptedApprover, ToolCallSpec
from tests.core.agent_helpers import runtime
from tests.core.test_mcp_runtime import declare_example

pytestmark = pytest.mark.usefixtures("configured")

ECHO = {"action": "call", "name": "mcp__example__echo", "arguments": {"text": "hello mcp"}}


@pytest.fixture(autouse=True)
def _no_claude_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


def _settings(decision: str, **permissions: list[str]) -> list[str]:
    answer = {"hookSpecificOutput": {"permissionDecision": decision,
                                     "permissionDecisionReason": f"{decision} by the guard"}}  # fmt: skip
    hook = {"matcher": "mcp__example__.*",
            "hooks": [{"type": "command", "command": f"echo '{json.dumps(answer)}'"}]}  # fmt: skip
    return [json.dumps({"hooks": {"PreToolUse": [hook]}, "permissions": permissions})]


async def _echo_turn(workspace, server, approver, settings: list[str]) -> str:
    declare_example(workspace)
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(ECHO), id="m1")]),
        Reply(content="done"),
    )
    async with runtime(workspace, approver=approver, settings_files=settings) as rt:
        async with aclosing(rt.prompt("echo")) as events:
            finished = [e async for e in events if isinstance(e, ev.ToolCallFinished)]
    return finished[0].result


async def test_a_hook_ask_asks_about_the_mcp_call_itself(workspace, server):
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    result = await _echo_turn(workspace, server, approver, _settings("ask"))
    # One question, about the MCP target (a read-only tool the policy allows).
    assert [r.tool for r in approver.seen] == ["mcp__example__echo"]
    assert result == "hello mcp"


async def test_a_hook_ask_refuses_the_mcp_call_where_nobody_can_answer(workspace, server):
    result = await _echo_turn(workspace, server, FailClosedApprover(), _settings("ask"))
    assert "hello mcp" not in result and "PreToolUse hook asks for approval" in result


async def test_a_hook_allow_skips_the_mcp_question_interactively(workspace, server):
    approver = ScriptedApprover(decisions=[])  # would deny if asked
    result = await _echo_turn(
        workspace, server, approver, _settings("allow", ask=["mcp__example__echo"])
    )
    assert approver.seen == [] and result == "hello mcp"


async def test_a_hook_allow_never_beats_a_deny_rule_on_an_mcp_call(workspace, server):
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    result = await _echo_turn(
        workspace, server, approver, _settings("allow", deny=["mcp__example__echo"])
    )
    assert approver.seen == [] and "hello mcp" not in result


async def test_a_hook_allow_is_no_approval_headless(workspace, server):
    result = await _echo_turn(
        workspace, server, FailClosedApprover(), _settings("allow", ask=["mcp__example__echo"])
    )
    assert "hello mcp" not in result


async def test_an_updated_input_reaches_the_mcp_tool_through_its_own_check(workspace, server):
    answer = {"hookSpecificOutput": {"updatedInput": {"text": "rewritten"}}}
    hook = {"matcher": "mcp__example__echo",
            "hooks": [{"type": "command", "command": f"echo '{json.dumps(answer)}'"}]}  # fmt: skip
    settings = [json.dumps({"hooks": {"PreToolUse": [hook]}})]
    assert await _echo_turn(workspace, server, FailClosedApprover(), settings) == "rewritten"
    # A deny rule on the tool still holds for the rewritten call.
    denied = [json.dumps({"hooks": {"PreToolUse": [hook]},
                          "permissions": {"deny": ["mcp__example__echo"]}})]  # fmt: skip
    result = await _echo_turn(workspace, server, FailClosedApprover(), denied)
    assert "rewritten" not in result


async def test_a_hook_allow_is_no_approval_for_a_subagents_mcp_call(workspace, server):
    from tests.core.subagent_helpers import call, install

    declare_example(workspace)
    script = install(server)
    script.when("PARENT", call("fleet", "f1", items=[{"id": "c", "prompt": "CHILD: echo"}]),
                Reply(content="parent done"))  # fmt: skip
    script.when("CHILD", call("use_capability", "u1", **ECHO), Reply(content="child done"))
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE] * 2)
    settings = _settings("allow", ask=["mcp__example__echo"])
    async with runtime(workspace, approver=approver, settings_files=settings) as rt:
        async with aclosing(rt.prompt("PARENT: go")) as events:
            [e async for e in events]
    # The child's MCP call was asked about, on the child's behalf (the fleet call
    # itself is the preset's question: the hook matches MCP tools only).
    assert [r.tool for r in approver.seen] == ["fleet", "mcp__example__echo"]
    assert approver.seen[1].requester is not None
