"""`reasonix run` expands what the TUI expands, through the core's one expander:
custom commands, @path, MCP prompts and @server:uri resources (real subprocesses
against the loopback fixture server)."""

from __future__ import annotations

import json

import pytest

from reasonix_core.command.expander import split_command
from reasonix_testkit import Reply
from tests.conftest import reasonix, write_config
from tests.core.test_mcp_runtime import declare_example


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _first_user(server) -> str:
    messages = json.loads(server.requests[0].body)["messages"]
    return next(m["content"] for m in messages if m["role"] == "user")


def test_custom_command_with_arguments_and_its_at_reference(workspace, cfg):
    commands = workspace / ".reasonix" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: review a file\n---\nReview $1 carefully, focusing on $2.\n@$1\n"
    )
    (workspace / "app.py").write_text("print('hi')\n")
    cfg.enqueue(Reply(content="looks fine"))
    proc = reasonix(workspace, "run", "/review app.py errors")
    assert proc.returncode == 0, proc.stderr
    user = _first_user(cfg)
    assert user.startswith("Review app.py carefully, focusing on errors.\n@app.py")
    assert "<file path=\"app.py\">\nprint('hi')\n\n</file>" in user


def test_at_path_in_a_plain_prompt_is_attached(workspace, cfg):
    (workspace / "notes.txt").write_text("alpha beta\n")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "what does @notes.txt say?")
    assert proc.returncode == 0, proc.stderr
    assert '<file path="notes.txt">\nalpha beta\n\n</file>' in _first_user(cfg)


def test_unknown_command_is_a_usage_error_and_nothing_is_sent(workspace, cfg):
    proc = reasonix(workspace, "run", "/nosuch do things")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: unknown command /nosuch")
    assert cfg.requests == []


def test_a_leading_path_is_not_a_command(workspace, cfg):
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "/usr/bin/env is missing, why?")
    assert proc.returncode == 0, proc.stderr
    assert _first_user(cfg).startswith("/usr/bin/env is missing, why?")
    assert split_command("/usr/bin/env x") is None
    assert split_command("  /review  a b\nc ") == ("review", "a b\nc")


def test_a_project_command_cannot_attach_the_reasonix_home(workspace, cfg, home):
    (home / ".env").write_text("DEEPSEEK_API_KEY=sk-secret-value\n")
    commands = workspace / ".reasonix" / "commands"
    commands.mkdir(parents=True)
    (commands / "leak.md").write_text(f"Summarise @{home}/.env please\n")
    cfg.enqueue(Reply(content="no"))
    proc = reasonix(workspace, "run", "/leak")
    assert proc.returncode == 0, proc.stderr
    assert "sk-secret-value" not in cfg.requests[0].body.decode()
    assert "a protected path" in proc.stderr


def test_mcp_prompt_and_its_resource_reference_headless(workspace, cfg):
    declare_example(workspace)
    cfg.enqueue(Reply(content="reviewed"))
    proc = reasonix(workspace, "run", "/mcp__example__review src/app.py")
    assert proc.returncode == 0, proc.stderr
    user = _first_user(cfg)
    assert user.startswith("Review src/app.py for correctness first")
    assert '<resource ref="example:style://guide">' in user


def test_mcp_resource_reference_in_a_plain_prompt(workspace, cfg):
    declare_example(workspace)
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "follow @example:style://guide when you answer")
    assert proc.returncode == 0, proc.stderr
    assert '<resource ref="example:style://guide">' in _first_user(cfg)


def test_mcp_prompt_missing_its_argument_is_a_usage_error(workspace, cfg):
    declare_example(workspace)
    proc = reasonix(workspace, "run", "/mcp__example__review")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: /mcp__example__review failed:")
    assert "path" in proc.stderr
    assert cfg.requests == []
