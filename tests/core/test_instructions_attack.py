"""Issue 29, second adversarial pass over instruction files and their ``@``
imports (CLAUDE.md, GEMINI.md, REASONIX.md) as a hostile repository writes
them: names that carry terminal escapes, special files, links out, cycles,
tokens no file system takes. Nothing outside the project is read without
approval, nothing hangs or crashes, and what the user is told shows every
character as itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix_core.agent.instructions import gather_instructions
from tests.conftest import reasonix

ESC_NAME = "e\x1b]0;owned\x07\u202e.md"


def _gather(workspace: Path, home: Path):
    home.mkdir(parents=True, exist_ok=True)
    return gather_instructions(workspace, home)


def _shown(found) -> str:
    return "\n".join([*found.notices, *(o.label + o.importer for o in found.outside)])


def test_notices_show_a_hostile_file_name_escaped(workspace, home):
    (workspace / ESC_NAME).write_bytes(b"\x00binary")
    (workspace / "CLAUDE.md").write_text(f"see @{ESC_NAME}\n")
    found = _gather(workspace, home)
    shown = _shown(found)
    assert "binary" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "\\x1b" in shown


def test_an_outside_import_with_a_hostile_name_is_shown_escaped(workspace, home, tmp_path):
    outside = tmp_path / ESC_NAME
    outside.write_text("outside text\n")
    (workspace / "CLAUDE.md").write_text(f"@{outside}\n")
    found = _gather(workspace, home)
    assert found.outside, found
    assert "outside text" not in str(found.sections)
    shown = _shown(found)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown


def test_headless_prints_instruction_notices_without_escapes(workspace, home, configured):
    (workspace / ESC_NAME).write_bytes(b"\x00binary")
    (workspace / "CLAUDE.md").write_text(f"see @{ESC_NAME}\n")
    from reasonix_testkit import Reply

    configured.enqueue(Reply(content="ok"))
    result = reasonix(workspace, "run", "hi")
    assert result.returncode == 0, result.stderr
    assert "binary" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


HOSTILE_TOKENS = [
    "@a\x00b",
    "@" + "z" * 5000,
    "@" + "d/" * 3000 + "x.md",
    "@~",
    "@~root/.bashrc",
    "@~nosuchuser/x.md",
    "@/proc/self/environ",
    "@/proc/self/cmdline",
    "@/dev/stdin",
    "@/dev/zero",
    "@/etc/shadow",
    "@.",
    "@..",
    "@../",
    "@CLAUDE.md",
]


@pytest.mark.parametrize("token", HOSTILE_TOKENS)
def test_hostile_import_tokens_read_nothing_outside_and_never_crash(workspace, home, token):
    (workspace / "CLAUDE.md").write_text(f"x\n{token}\n")
    found = _gather(workspace, home)
    text = "\n".join(body for _, body in found.sections)
    assert "PATH=" not in text and "root:" not in text
    assert all(label.startswith("CLAUDE.md") for label, _ in found.sections), found.sections


def test_a_symlink_chain_and_a_cycle(workspace, home, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("SECRET\n")
    (workspace / "c.md").symlink_to(secret)
    (workspace / "b.md").symlink_to("c.md")
    (workspace / "a.md").write_text("@b.md\n@a.md\n@d.md\n")
    (workspace / "d.md").write_text("@a.md\n@./d.md\n@../" + workspace.name + "/d.md\n")
    (workspace / "CLAUDE.md").write_text("@a.md\n")
    found = _gather(workspace, home)
    text = "\n".join(body for _, body in found.sections)
    assert "SECRET" not in text
    assert [label.split(" ")[0] for label, _ in found.sections] == ["CLAUDE.md", "a.md", "d.md"]
    assert found.outside == []


def test_an_import_of_the_reasonix_home_or_secrets_is_refused(workspace, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / ".env").write_text("KEY=sk-secret\n")
    os.symlink(home / ".env", workspace / "env-link.md")
    (workspace / "CLAUDE.md").write_text(f"@{home}/.env\n@env-link.md\n")
    found = _gather(workspace, home)
    assert "sk-secret" not in str(found.sections)
    assert found.outside == []
