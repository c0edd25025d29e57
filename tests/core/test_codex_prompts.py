"""Codex's ``/prompts:NAME`` spelling runs the custom command ``/NAME`` (issue 31
item 4), headless through a real subprocess; the TUI's side is in
tests/tui/test_tui_codex_prompts.py."""

from __future__ import annotations

from pathlib import Path

from reasonix_core.command.custom import command_name
from reasonix_testkit import Reply
from tests.conftest import first_user_text, reasonix


def _prompt(workspace: Path, folder: str, name: str, body: str) -> None:
    path = workspace / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


def test_prompts_name_runs_the_codex_prompt_headless(workspace: Path, cfg) -> None:
    _prompt(workspace, ".codex/prompts", "review.md", "Review $1 for bugs, focusing on $2.\n")
    cfg.enqueue(Reply(content="looks fine"))
    proc = reasonix(workspace, "run", "/prompts:review app.py errors")
    assert proc.returncode == 0, proc.stderr
    assert first_user_text(cfg).startswith("Review app.py for bugs, focusing on errors.")


def test_a_command_literally_named_prompts_wins(workspace: Path, cfg) -> None:
    """``.reasonix/commands/prompts/review.md`` is ``/prompts:review`` itself."""
    _prompt(workspace, ".codex/prompts", "review.md", "the codex one\n")
    _prompt(workspace, ".reasonix/commands/prompts", "review.md", "the nested one\n")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "/prompts:review")
    assert proc.returncode == 0, proc.stderr
    assert first_user_text(cfg).startswith("the nested one")


def test_unknown_prompts_name_is_a_usage_error(workspace: Path, cfg) -> None:
    proc = reasonix(workspace, "run", "/prompts:nosuch")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: unknown command /prompts:nosuch")
    assert cfg.requests == []


def test_command_name() -> None:
    known = {"review", "prompts:x"}.__contains__
    assert command_name("prompts:review", known) == "review"
    assert command_name("prompts:x", known) == "prompts:x"
    assert command_name("prompts:other", known) == "prompts:other"
    assert command_name("review", known) == "review"
