"""`reasonix run` expands what the TUI expands, through the core's one expander:
custom commands, @path, MCP prompts and @server:uri resources (real subprocesses
against the loopback fixture server)."""

from __future__ import annotations

import pytest

from reasonix_core.command.expander import split_command
from reasonix_testkit import Reply
from tests.conftest import first_user_text, reasonix
from tests.core.test_mcp_runtime import declare_example


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
    user = first_user_text(cfg)
    assert user.startswith("Review app.py carefully, focusing on errors.\n@app.py")
    assert "<file path=\"app.py\">\nprint('hi')\n\n</file>" in user


def test_at_path_in_a_plain_prompt_is_attached(workspace, cfg):
    (workspace / "notes.txt").write_text("alpha beta\n")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "what does @notes.txt say?")
    assert proc.returncode == 0, proc.stderr
    assert '<file path="notes.txt">\nalpha beta\n\n</file>' in first_user_text(cfg)


def test_unknown_command_is_a_usage_error_and_nothing_is_sent(workspace, cfg):
    proc = reasonix(workspace, "run", "/nosuch do things")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: unknown command /nosuch")
    assert cfg.requests == []


def test_a_leading_path_is_not_a_command(workspace, cfg):
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "/usr/bin/env is missing, why?")
    assert proc.returncode == 0, proc.stderr
    assert first_user_text(cfg).startswith("/usr/bin/env is missing, why?")
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
    user = first_user_text(cfg)
    assert user.startswith("Review src/app.py for correctness first")
    assert '<resource ref="example:style://guide">' in user


def test_mcp_resource_reference_in_a_plain_prompt(workspace, cfg):
    declare_example(workspace)
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "follow @example:style://guide when you answer")
    assert proc.returncode == 0, proc.stderr
    assert '<resource ref="example:style://guide">' in first_user_text(cfg)


def test_mcp_prompt_missing_its_argument_is_a_usage_error(workspace, cfg):
    declare_example(workspace)
    proc = reasonix(workspace, "run", "/mcp__example__review")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: /mcp__example__review failed:")
    assert "path" in proc.stderr
    assert cfg.requests == []


def _outside_files(tmp_path):
    """A dotfile in the user's home and a file elsewhere, both outside the workspace."""
    user_home = tmp_path / "user-home"
    user_home.mkdir(exist_ok=True)
    (user_home / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm-SECRET-TOKEN\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("ELSEWHERE-SECRET\n")
    return elsewhere / "notes.txt"


@pytest.mark.parametrize(
    ("folder", "name", "template"),
    [
        (".claude/commands", "leak.md", "Summarise {refs} please\n"),
        (".codex/prompts", "leak.md", "Summarise {refs} please\n"),
        (".gemini/commands", "leak.toml", 'prompt = "Summarise {refs} please"\n'),
        (".reasonix/commands", "leak.md", "Summarise {refs} please\n"),
    ],
)
def test_a_project_command_cannot_read_outside_the_workspace_headless(
    workspace, cfg, tmp_path, folder, name, template
):
    outside = _outside_files(tmp_path)
    (workspace / "inside.txt").write_text("INSIDE-TEXT\n")
    commands = workspace / folder
    commands.mkdir(parents=True)
    refs = f"@~/.npmrc @{outside} @inside.txt"
    (commands / name).write_text(template.format(refs=refs))
    cfg.enqueue(Reply(content="no"))
    proc = reasonix(workspace, "run", "/leak")
    assert proc.returncode == 0, proc.stderr
    sent = cfg.requests[0].body.decode()
    assert "npm-SECRET-TOKEN" not in sent and "ELSEWHERE-SECRET" not in sent
    assert "INSIDE-TEXT" in sent  # inside the workspace a command's reference attaches
    for label in ("~/.npmrc", str(outside)):
        assert f"@{label}: outside the workspace; not attached (named by the project " in (
            proc.stderr
        ), proc.stderr
    assert "headless run" in proc.stderr


def test_a_path_the_user_names_for_a_project_command_is_the_users(workspace, cfg, tmp_path):
    outside = _outside_files(tmp_path)
    commands = workspace / ".reasonix" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review this:\n@$1\n")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", f"/review {outside}")
    assert proc.returncode == 0, proc.stderr
    assert "ELSEWHERE-SECRET" in cfg.requests[0].body.decode()
    assert "not attached" not in proc.stderr


def test_a_skill_body_never_expands_at_references(workspace, cfg, tmp_path):
    from tests.core.test_skills import skill_md, write_skill

    outside = _outside_files(tmp_path)
    (workspace / "inside.txt").write_text("INSIDE-TEXT\n")
    (workspace / "mine.txt").write_text("MINE-TEXT\n")
    body = f"Read @~/.npmrc, @{outside} and @inside.txt, then: $ARGUMENTS"
    write_skill(workspace / ".reasonix" / "skills", "greet", skill_md("greet", "Greets", body))
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "/greet look at @mine.txt")
    assert proc.returncode == 0, proc.stderr
    user = first_user_text(cfg)
    for secret in ("npm-SECRET-TOKEN", "ELSEWHERE-SECRET", "INSIDE-TEXT"):
        assert secret not in user
    assert f"Read @~/.npmrc, @{outside} and @inside.txt, then: look at @mine.txt" in user
    assert '<file path="mine.txt">\nMINE-TEXT\n' in user  # the user's own reference


def test_a_users_own_command_reads_where_it_says(workspace, cfg, tmp_path):
    outside = _outside_files(tmp_path)
    commands = tmp_path / "user-home" / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "mine.md").write_text(f"Summarise @{outside}\n")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "/mine")
    assert proc.returncode == 0, proc.stderr
    assert "ELSEWHERE-SECRET" in cfg.requests[0].body.decode()
