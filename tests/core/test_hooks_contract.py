"""The hook contract on real subprocesses: exit codes, Claude Code's JSON fields,
combining parallel hooks, names and keys (docs/HOOKS.md#output)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from reasonix_core.hooks.engine import Hooks
from reasonix_core.hooks.names import hook_tool
from reasonix_core.hooks.spec import HookSpec


def _hooks(tmp_path: Path, *specs: tuple[str, str, str]) -> Hooks:
    return Hooks(
        [HookSpec(e, m, c, 30, "test.json") for e, m, c in specs],
        workspace=tmp_path,
        session_id="s1",
    )


def _fire(hooks: Hooks, event: str, fields: dict | None = None, subject: tuple = ()):
    return anyio.run(lambda: hooks.fire(event, fields or {}, subject=subject))


def _json(data: dict) -> str:
    return f"echo '{json.dumps(data)}'"


def test_exit_codes(tmp_path):
    h = _hooks(tmp_path, ("Stop", "", "echo why >&2; exit 2"))
    out = _fire(h, "Stop")
    assert out.blocked and out.reason == "why"
    h = _hooks(tmp_path, ("Stop", "", "echo oops >&2; exit 1"))
    out = _fire(h, "Stop")
    assert not out.blocked and out.messages == (
        "Stop hook `echo oops >&2; exit 1` failed (exit 1): oops",
    )
    h = _hooks(tmp_path, ("Stop", "", "/no/such/hook"))
    out = _fire(h, "Stop")
    assert not out.blocked and "failed (exit 127)" in out.messages[0]
    # Plain stdout is context only for SessionStart and UserPromptSubmit.
    h = _hooks(tmp_path, ("Stop", "", "echo ignored"), ("UserPromptSubmit", "", "echo kept"))
    assert _fire(h, "Stop").context == ""
    assert _fire(h, "UserPromptSubmit").context == "kept"


def test_json_fields(tmp_path):
    h = _hooks(tmp_path, ("UserPromptSubmit", "", _json({"decision": "block", "reason": "no"})))
    out = _fire(h, "UserPromptSubmit")
    assert out.blocked and out.reason == "no"
    h = _hooks(tmp_path, ("Stop", "", _json({"continue": False, "stopReason": "done for today",
                                              "systemMessage": "see you"})))  # fmt: skip
    out = _fire(h, "Stop")
    assert out.stop and out.stop_reason == "done for today" and out.messages == ("see you",)
    h = _hooks(tmp_path, ("SessionStart", "", _json({"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "branch main"}})))  # fmt: skip
    assert _fire(h, "SessionStart").context == "branch main"
    h = _hooks(tmp_path, ("PreToolUse", "", _json({"decision": "approve", "reason": "fine"})))
    out = _fire(h, "PreToolUse", subject=("Bash",))
    assert out.permission == "allow" and not out.blocked
    # JSON is read only on exit 0: on exit 2 stderr is the reason.
    h = _hooks(tmp_path, ("Stop", "", _json({"decision": "approve"}) + "; echo real >&2; exit 2"))
    assert _fire(h, "Stop").reason == "real"


def test_parallel_hooks_combine_to_the_most_restrictive(tmp_path):
    allow = _json({"hookSpecificOutput": {"permissionDecision": "allow"}})
    ask = _json({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}})  # fmt: skip
    deny = _json({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "never"}})  # fmt: skip
    h = _hooks(tmp_path, ("PreToolUse", "Bash", allow), ("PreToolUse", "bash", ask))
    out = _fire(h, "PreToolUse", subject=("Bash", "bash"))
    assert out.permission == "ask" and out.permission_reason == "check"
    h = _hooks(tmp_path, ("PreToolUse", "", allow), ("PreToolUse", ".*", deny),
               ("PreToolUse", "Read", "touch never-runs"))  # fmt: skip
    out = _fire(h, "PreToolUse", subject=("Bash", "bash"))
    assert out.permission == "deny" and out.blocked and out.reason == "never"
    assert not (tmp_path / "never-runs").exists()
    assert h.runs == 2 and h.blocks == 1


def test_matching_hooks_run_in_parallel(tmp_path):
    """Each hook waits until all four have started: one after another, the first
    would wait for the others until its timeout."""
    wait = (
        "for _ in $(seq 600); do [ $(ls {d}/started* | wc -l) -ge 4 ] && break; sleep 0.05; done; "
        "[ $(ls {d}/started* | wc -l) -ge 4 ] && touch {d}/done{i}"
    )
    specs = [("Stop", "", f"touch {tmp_path}/started{i}; " + wait.format(d=tmp_path, i=i))
             for i in range(4)]  # fmt: skip
    h = _hooks(tmp_path, *specs)
    out = _fire(h, "Stop")
    assert not out.messages
    assert len(list(tmp_path.glob("done*"))) == 4


def test_matchers_take_either_spelling_and_are_anchored(tmp_path):
    h = _hooks(tmp_path, ("PreToolUse", "Edit|Write", "true"), ("PreToolUse", "edit_file", "true"),
               ("PreToolUse", "Edi", "true"))  # fmt: skip
    name, tool_input, names = hook_tool("edit_file", {"path": "a", "old_string": "x"})
    assert (name, tool_input) == ("Edit", {"file_path": "a", "old_string": "x"})
    assert len(h.matching("PreToolUse", names)) == 2


def test_mcp_calls_through_use_capability_look_like_claude_codes(tmp_path):
    args = {"action": "call", "name": "mcp__github__create_issue", "arguments": {"title": "t"}}
    name, tool_input, names = hook_tool("use_capability", args)
    assert name == "mcp__github__create_issue" and tool_input == {"title": "t"}
    h = _hooks(tmp_path, ("PreToolUse", "mcp__github__.*", "true"))
    assert h.matching("PreToolUse", names)
    assert hook_tool("bash", {"command": "ls", "timeout_seconds": 5})[1] == {
        "command": "ls", "timeout": 5000, "description": "",
    }  # fmt: skip


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit"])
def test_stdin_is_claude_codes(tmp_path, event):
    dump = tmp_path / "in.json"
    h = _hooks(tmp_path, (event, "", f"cat > {dump}"))
    _fire(h, event, {"prompt": "p"} if event == "UserPromptSubmit" else {"source": "startup"})
    data = json.loads(dump.read_text())
    assert {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"} <= set(
        data
    )
    assert data["hook_event_name"] == event and data["session_id"] == "s1"
