"""Hooks through an in-process session: interactive approvals (a hook tightens,
never loosens), PermissionRequest and Notification, subagents, compaction, resume
and cancellation (docs/HOOKS.md)."""

from __future__ import annotations

import json
import shutil
import time
from contextlib import aclosing
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import ApprovalDecision
from reasonix_testkit import Reply, ScriptedApprover, ToolCallSpec
from tests.core.agent_helpers import runtime
from tests.core.subagent_helpers import call, install

pytestmark = pytest.mark.usefixtures("configured")


@pytest.fixture(autouse=True)
def _no_claude_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


def _inline(hooks: dict) -> list[str]:
    return [json.dumps({"hooks": hooks})]


def _on(event: str, command: str, matcher: str = "") -> dict:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}


def _echo_json(data: dict) -> str:
    return f"echo '{json.dumps(data)}'"


async def _turn(rt, prompt: str) -> list[ev.Event]:
    out: list[ev.Event] = []
    async with aclosing(rt.prompt(prompt)) as events:
        async for event in events:
            out.append(event)
    return out


ALLOW = _echo_json({"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "ok by policy"}})  # fmt: skip


async def test_a_hook_allow_skips_the_prompt_for_the_main_agent_only(workspace, server, tmp_path):
    script = install(server)
    script.when(
        "PARENT",
        call("write_file", "w1", path="own.txt", content="parent\n"),
        call("fleet", "f1", items=[{"id": "c", "prompt": "CHILD: write"}]),
        Reply(content="parent done"),
    )
    script.when("CHILD", call("write_file", "w2", path="child.txt", content="child\n"),
                Reply(content="child done"))  # fmt: skip
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE] * 3)
    async with runtime(
        workspace, approver=approver, permission_mode="ask",
        settings_files=_inline(_on("PreToolUse", ALLOW)),
    ) as rt:  # fmt: skip
        events = await _turn(rt, "PARENT: go")
    # The main agent's write and fleet were allowed by the hook; the child's asked.
    assert [r.tool for r in approver.seen] == ["write_file"]
    assert approver.seen[0].requester is not None
    assert (workspace / "own.txt").exists() and (workspace / "child.txt").exists()
    ran = [e for e in events if isinstance(e, ev.HookRan)]
    assert len(ran) >= 3 and {e.hook_event for e in ran} == {"PreToolUse"}


async def test_permission_request_hooks_deny_or_allow_before_the_user_is_asked(
    workspace, server, tmp_path
):
    notified = tmp_path / "notified.json"
    deny = _echo_json({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                       "decision": {"behavior": "deny", "message": "not on fridays"}}})  # fmt: skip
    allow = _echo_json({"hookSpecificOutput": {"decision": {"behavior": "allow"}}})
    hooks = {
        "PermissionRequest": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": deny}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": allow}]},
        ],
        **_on("Notification", f"cat > {notified}"),
    }
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command": "touch nope"}', id="a")]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path": "yes.txt", "content": "y"}', id="b")]),
        Reply(tool_calls=[ToolCallSpec("edit_file", '{"path": "yes.txt", "old_string": "y", "new_string": "z"}', id="c")]),
        Reply(content="done"),
    )  # fmt: skip
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    async with runtime(workspace, approver=approver, settings_files=_inline(hooks)) as rt:
        events = await _turn(rt, "go")
    assert not (workspace / "nope").exists()
    assert (workspace / "yes.txt").read_text() == "z"
    # Only the edit reached the user; the Notification hook was told.
    assert [r.tool for r in approver.seen] == ["edit_file"]
    note = json.loads(notified.read_text())
    assert note["hook_event_name"] == "Notification"
    assert note["message"] == "Reasonix needs your permission to use edit_file"
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert "not on fridays" in finished[0].result and finished[0].outcome == "denied"


async def test_subagent_start_and_stop_hooks(workspace, server, tmp_path):
    log = tmp_path / "sub.log"
    stop = tmp_path / "stop.py"
    stop.write_text(f"""import json, sys
d = json.load(sys.stdin)
open({str(log)!r}, "a").write(d["hook_event_name"] + " " + d["agent_type"] + " " + str(d.get("stop_hook_active")) + "\\n")
if d["hook_event_name"] == "SubagentStop" and not d["stop_hook_active"]:
    print("also write the tests", file=sys.stderr)
    sys.exit(2)
""")
    script = install(server)
    script.when("PARENT", call("task", "t1", prompt="CHILD: do it"), Reply(content="parent done"))
    script.when("CHILD", Reply(content="child first"), Reply(content="child second"))
    hooks = {**_on("SubagentStart", f"python3 {stop}"), **_on("SubagentStop", f"python3 {stop}")}
    async with runtime(workspace, permission_mode="auto", settings_files=_inline(hooks)) as rt:
        events = await _turn(rt, "PARENT: delegate")
    assert log.read_text().splitlines() == [
        "SubagentStart task None", "SubagentStop task False", "SubagentStop task True",
    ]  # fmt: skip
    task = next(e for e in events if isinstance(e, ev.ToolCallFinished) and e.name == "task")
    assert "child second" in task.result


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
async def test_pre_compact_and_session_start_compact(workspace, server, tmp_path):
    log = tmp_path / "compact.log"
    hooks = {
        **_on("PreCompact", f"jq -c '{{e: .hook_event_name, t: .trigger, i: .custom_instructions}}' >> {log}", "manual"),
        **_on("SessionStart", "echo remember the build flags", "compact"),
    }  # fmt: skip
    # A long tool result to prune: a compaction with nothing to do runs no hook.
    (workspace / "big.txt").write_text("".join(f"line {n} of a long file\n" for n in range(600)))
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", json.dumps({"path": "big.txt"}))]),
        Reply(content="one"),
        Reply(content="two"),
    )
    async with runtime(workspace, settings_files=_inline(hooks)) as rt:
        await _turn(rt, "first")
        assert rt.nothing_to_compact() == ""
        async with aclosing(rt.compact("keep the flags")) as events:
            compact_events = [e async for e in events]
        await _turn(rt, "second")
    assert json.loads(log.read_text()) == {"e": "PreCompact", "t": "manual", "i": "keep the flags"}
    assert any(isinstance(e, ev.HookRan) for e in compact_events)
    last_user = [m for m in json.loads(server.requests[-1].body)["messages"] if m["role"] == "user"]
    assert "remember the build flags" in last_user[-1]["content"]


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
async def test_session_start_source_resume(workspace, server, tmp_path):
    log = tmp_path / "start.log"
    hooks = _on("SessionStart", f"jq -r .source >> {log}")
    server.enqueue(Reply(content="one"), Reply(content="two"))
    async with runtime(workspace, settings_files=_inline(hooks)) as rt:
        await _turn(rt, "first")
    async with runtime(workspace, settings_files=_inline(hooks), continue_last=True) as rt:
        await _turn(rt, "again")
    assert log.read_text().split() == ["startup", "resume"]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
    except FileNotFoundError:
        return True
    return state == "Z"


async def test_cancelling_a_turn_kills_a_hanging_hook_and_keeps_the_transcript_valid(
    workspace, server, tmp_path
):
    pid_file = tmp_path / "hook.pid"
    hooks = _on("PreToolUse", f"echo $$ > {pid_file}; sleep 300")
    server.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "x"}', id="r")]),
                   Reply(content="after"))  # fmt: skip
    async with runtime(workspace, settings_files=_inline(hooks)) as rt:
        async with anyio.create_task_group() as tg:

            async def consume() -> None:
                await _turn(rt, "read")

            tg.start_soon(consume)
            deadline = time.monotonic() + 30
            while not pid_file.exists() or not pid_file.read_text().strip():
                assert time.monotonic() < deadline
                await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # polled: the kernel reaps in its own time
            if _gone(pid):
                break
            await anyio.sleep(0.02)
        assert _gone(pid)
        tool_messages = [m for m in rt.agent.messages if m.role == "tool"]
        assert [m.tool_call_id for m in tool_messages] == ["r"]


async def test_a_question_to_the_user_runs_the_notification_hooks(workspace, server, tmp_path):
    from reasonix_core.tool.questions import QuestionAnswer

    notified = tmp_path / "notified.json"
    question = {"questions": [{"question": "Which db?", "options": ["sqlite", "postgres"]}]}
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("ask", json.dumps(question))]), Reply(content="ok")
    )
    approver = ScriptedApprover(
        answers=[[QuestionAnswer(question="Which db?", answers=("sqlite",))]]
    )
    hooks = _on("Notification", f"cat > {notified}", "elicitation_dialog")
    async with runtime(workspace, approver=approver, settings_files=_inline(hooks)) as rt:
        events = await _turn(rt, "pick")
    note = json.loads(notified.read_text())
    assert note["notification_type"] == "elicitation_dialog"
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert "sqlite" in finished.result
