"""PreToolUse's ``updatedInput`` (Claude Code's ``hookSpecificOutput``): the call
runs with the hook's input, which goes through the same argument validation and
permission check as the model's own call, so a hook cannot loosen (docs/HOOKS.md).
Real Python hook scripts through real `reasonix run` subprocesses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


@pytest.fixture(autouse=True)
def _no_claude_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _rewriter(home: Path, tmp_path: Path, body: str, **permissions: list[str]) -> None:
    """A Claude Code hook that reads ``tool_input`` and answers an ``updatedInput``
    computed by ``body`` from ``inp`` (Claude Code's keys)."""
    script = tmp_path / "rewrite.py"
    script.write_text(f"""#!{sys.executable}
import json, sys
d = json.load(sys.stdin)
inp = dict(d["tool_input"])
{body}
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "updatedInput": inp}}}}))
""")
    script.chmod(0o755)
    hook = [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": str(script)}]}]
    (home / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": hook}, "permissions": permissions})
    )


def _results(server, index: int) -> list[str]:
    messages = json.loads(server.requests[index].body)["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_a_hook_rewrites_a_command_and_the_file_path_in_claude_keys(workspace, home, cfg, tmp_path):
    _rewriter(
        home,
        tmp_path,
        """
if "command" in inp:
    inp["command"] = inp["command"].replace("model", "hook")
if "file_path" in inp:
    inp["file_path"] = "rewritten.txt"
""",
    )
    cfg.enqueue(Reply(tool_calls=[
        ToolCallSpec("bash", '{"command": "echo model > said.txt"}', id="a"),
        ToolCallSpec("write_file", '{"path": "asked.txt", "content": "x\\n"}', id="b"),
    ]))  # fmt: skip
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "go", "-y")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "said.txt").read_text() == "hook\n"
    assert (workspace / "rewritten.txt").read_text() == "x\n"
    assert not (workspace / "asked.txt").exists()
    assert "changed the tool's input (updatedInput)" in proc.stderr


def test_a_rewritten_input_meets_the_deny_rules_and_the_ask_rules(workspace, home, cfg, tmp_path):
    _rewriter(
        home, tmp_path, 'inp["command"] = "touch " + ("denied" if "one" in inp["command"] else "asked")',
        deny=["Bash(touch denied*)"], ask=["Bash(touch asked*)"],
    )  # fmt: skip
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("bash", '{"command": "echo one"}', id="a")]))
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("bash", '{"command": "echo two"}', id="b")]))
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "go", "-y")  # -y allows "echo" but not these
    assert proc.returncode == 0, proc.stderr
    assert not (workspace / "denied").exists() and not (workspace / "asked").exists()
    results = _results(cfg, 2)
    assert "Bash(touch denied*)" in results[0]
    assert "No user is available to approve bash" in results[1]


def test_a_rewritten_input_is_validated_like_the_models(workspace, home, cfg, tmp_path):
    _rewriter(home, tmp_path, 'inp["command"] = ["not", "a", "string"]')
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("bash", '{"command": "touch x"}', id="a")]))
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "go", "-y")
    assert proc.returncode == 0, proc.stderr
    assert not (workspace / "x").exists()
    assert _results(cfg, 1)[0].startswith("bash: ")


def test_hooks_that_rewrite_one_call_differently_refuse_it(workspace, home, cfg):
    def rewrite(command: str) -> dict:
        answer = {"hookSpecificOutput": {"updatedInput": {"command": command}}}
        return {"type": "command", "command": f"echo '{json.dumps(answer)}'"}

    hooks = [{"matcher": "Bash", "hooks": [rewrite("touch one"), rewrite("touch two")]}]
    (home / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": hooks}}))
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("bash", '{"command": "touch x"}', id="a")]))
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "go", "-y")
    assert proc.returncode == 0, proc.stderr
    assert not any((workspace / n).exists() for n in ("x", "one", "two"))
    assert "different updatedInput" in _results(cfg, 1)[0]
