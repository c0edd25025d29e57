"""Habits users bring from Claude Code and the seed: -p/--print, --json, --max-turns,
--append-system-prompt, --mcp-config, --workspace, help on every flag, shell
completion, `reasonix: error:` on every error (real subprocesses)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from reasonix_testkit import HttpError, Reply, ToolCallSpec
from reasonix_tui.cli import _parser
from tests.conftest import reasonix, write_config
from tests.core.mcp_helpers import EXAMPLE_SERVER


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _user(server, index: int = 0) -> str:
    messages = json.loads(server.requests[index].body)["messages"]
    return next(m["content"] for m in messages if m["role"] == "user")


def test_print_is_run_with_global_options_before_it(workspace, cfg):
    cfg.enqueue(Reply(content="one"), Reply(content="two"))
    first = reasonix(workspace, "-p", "say one", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["result"] == "one"
    assert _user(cfg, 0).startswith("say one")
    second = reasonix(workspace, "--model", "deepseek-v4-pro", "--print=say two")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "two"
    assert json.loads(cfg.requests[1].body)["model"] == "deepseek-v4-pro"


def test_max_turns_is_max_steps(workspace, cfg):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]))
    proc = reasonix(workspace, "run", "loop", "--max-turns", "1", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["subtype"] == "error_max_turns"
    assert len(cfg.requests) == 1


def test_append_system_prompt_reaches_the_system_message(workspace, cfg):
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "hi", "--append-system-prompt", "Always answer in French.")
    assert proc.returncode == 0, proc.stderr
    system = json.loads(cfg.requests[0].body)["messages"][0]
    assert system["role"] == "system"
    assert system["content"].rstrip().endswith("Always answer in French.")


def test_mcp_config_file_declares_servers_without_trust(workspace, cfg, tmp_path):
    servers = tmp_path / "servers.json"
    servers.write_text(
        json.dumps(
            {"mcpServers": {"example": {"command": sys.executable, "args": [str(EXAMPLE_SERVER)]}}}
        )
    )
    cfg.enqueue(Reply(content="reviewed"))
    proc = reasonix(workspace, "run", "/mcp__example__review app.py", "--mcp-config", str(servers))
    assert proc.returncode == 0, proc.stderr
    assert _user(cfg).startswith("Review app.py for correctness first")
    missing = reasonix(workspace, "run", "hi", "--mcp-config", str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("reasonix: error: --mcp-config")


def test_workspace_flag_works_elsewhere(workspace, cfg, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "AGENTS.md").write_text("OTHER RULES\n")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "hi", "--workspace", str(other))
    assert proc.returncode == 0, proc.stderr
    assert "OTHER RULES" in json.loads(cfg.requests[0].body)["messages"][0]["content"]
    assert f"workspace: {other}\n" in _user(cfg)


def _actions(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((f"{name} {label}", a) for label, a in _actions(sub))
            for choice in action._choices_actions:
                yield choice.dest, choice
        else:
            yield "/".join(action.option_strings) or action.dest, action


def test_every_flag_and_command_has_help_and_run_shows_examples(workspace):
    missing = [label for label, action in _actions(_parser()) if not action.help]
    assert missing == []
    for args in (["--help"], ["run", "--help"]):
        shown = reasonix(workspace, *args)
        assert shown.returncode == 0
        assert "examples:" in shown.stdout and 'git diff | reasonix run "' in shown.stdout


def test_bash_completion_completes_flags_values_and_commands(workspace, tmp_path):
    script = reasonix(workspace, "completion", "bash")
    assert script.returncode == 0, script.stderr
    path = tmp_path / "reasonix.bash"
    path.write_text(script.stdout)

    def complete(*words: str) -> list[str]:
        quoted = " ".join(f"'{w}'" for w in words)
        probe = (
            f"source {path}; COMP_WORDS=(reasonix {quoted}); COMP_CWORD={len(words)}; "
            '_reasonix_complete; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("ru") == ["run"]
    assert complete("run", "--output-") == ["--output-format"]
    assert complete("run", "--output-format", "s") == ["stream-json"]
    assert complete("run", "--max-tu") == ["--max-turns"]
    assert complete("run", "--max-ti") == ["--max-time"]  # a task budget (issue 19)
    assert complete("completion", "") == ["-h", "--help", "bash", "zsh", "fish"]
    for shell, marker in (("zsh", "bashcompinit"), ("fish", "complete -c reasonix")):
        other = reasonix(workspace, "completion", shell)
        assert other.returncode == 0 and marker in other.stdout


def test_a_failed_run_says_reasonix_error(workspace, cfg):
    cfg.enqueue(HttpError(402, "Insufficient Balance", type="unknown_error"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 1
    assert "reasonix: error: HTTP 402: Insufficient Balance" in proc.stderr.splitlines()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--output-format", "xml", "hi"],
        ["run", "hi", "--bogus"],
        ["run", "hi", "--max-turns", "0"],
        ["run", "hi", "--workspace", "/no/such/folder"],
        ["completion", "powershell"],
        ["-p"],  # no prompt, and standard input is not piped
    ],
    ids=lambda a: " ".join(a),
)
def test_every_usage_error_says_reasonix_error(workspace, args):
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", *args],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("reasonix: error: ")
    assert "Traceback" not in proc.stderr
