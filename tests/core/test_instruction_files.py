"""Instruction files as Claude Code, Codex and Gemini CLI read them (issue 31 item 1):
the other agents' project and user-level files, CLAUDE.md ``@path`` imports, and
what a hostile repository plants in them."""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path

import pytest

from reasonix_core.agent.instructions import (
    MAX_FILE_BYTES,
    MAX_IMPORT_DEPTH,
    Instructions,
    gather_instructions,
    import_tokens,
)
from reasonix_core.config.schema import Config
from reasonix_core.permission.approver import ApprovalDecision
from reasonix_core.session.policy import protected_paths
from reasonix_testkit import Reply, ScriptedApprover
from tests.conftest import reasonix
from tests.core.agent_helpers import bodies, run_turn, runtime


@pytest.fixture
def user_home() -> Path:
    path = Path(os.path.expanduser("~"))  # the test's own (conftest sets HOME)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _gather(workspace: Path, home: Path, approved: Collection[str] = ()) -> Instructions:
    return gather_instructions(
        workspace, home, protected_paths(Config(), home, workspace), approved=approved
    )


def _labels(found: Instructions) -> list[str]:
    return [label for label, _ in found.sections]


def test_every_agents_files_load_user_level_first(
    home: Path, workspace: Path, user_home: Path
) -> None:
    _write(user_home / ".claude/CLAUDE.md", "user claude")
    _write(user_home / ".codex/AGENTS.md", "user codex")
    _write(user_home / ".gemini/GEMINI.md", "user gemini")
    _write(home / "REASONIX.md", "user reasonix")
    for name in ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"):
        _write(workspace / name, f"project {name}")
    found = _gather(workspace, home)
    assert _labels(found) == [
        "~/.gemini/GEMINI.md",
        "~/.codex/AGENTS.md",
        "~/.claude/CLAUDE.md",
        "~/.reasonix/REASONIX.md",
        "AGENTS.md",
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        "GEMINI.md",
    ]
    assert found.notices == []


def test_codex_home_moves_the_codex_file(
    home: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = _write(tmp_path / "codex-home" / "AGENTS.md", "from codex home")
    monkeypatch.setenv("CODEX_HOME", str(codex.parent))
    assert _gather(workspace, home).sections == [(str(codex), "from codex home")]


def test_claude_md_imports_relative_to_the_importing_file(home: Path, workspace: Path) -> None:
    _write(workspace / "CLAUDE.md", "See @docs/guide.md and mail me@example.com, @nobody.")
    _write(workspace / "docs/guide.md", "Guide: @style.md")  # docs/style.md, beside it
    _write(workspace / "docs/style.md", "Use tabs.")
    _write(workspace / "style.md", "the wrong style")
    found = _gather(workspace, home)
    assert found.sections == [
        ("CLAUDE.md", "See @docs/guide.md and mail me@example.com, @nobody."),
        ("docs/guide.md (imported by CLAUDE.md)", "Guide: @style.md"),
        ("docs/style.md (imported by docs/guide.md)", "Use tabs."),
    ]
    assert found.notices == []


def test_code_spans_and_fenced_blocks_are_not_imports(home: Path, workspace: Path) -> None:
    _write(workspace / "a.md", "A")
    _write(workspace / "b.md", "B")
    _write(workspace / "c.md", "C")
    text = "Run `cat @a.md` first.\n```sh\necho @b.md\n```\n~~~\n@b.md\n~~~\nThen @c.md."
    assert import_tokens(text) == ["c.md."]
    _write(workspace / "GEMINI.md", text)
    assert _labels(_gather(workspace, home)) == ["GEMINI.md", "c.md (imported by GEMINI.md)"]


def test_agents_md_has_no_imports(home: Path, workspace: Path) -> None:
    """Codex reads AGENTS.md as text: an ``@`` there is text to us too."""
    _write(workspace / "AGENTS.md", "Ask @notes.md")
    _write(workspace / "notes.md", "notes")
    assert _labels(_gather(workspace, home)) == ["AGENTS.md"]


def test_a_file_reached_twice_is_included_once(home: Path, workspace: Path) -> None:
    _write(workspace / "AGENTS.md", "shared rules")
    (workspace / "CLAUDE.md").symlink_to("AGENTS.md")  # two names
    _write(workspace / "GEMINI.md", "@a.md @AGENTS.md @./a.md")  # an import of a loaded file
    _write(workspace / "a.md", "A imports @b.md")
    _write(workspace / "b.md", "B imports @a.md and @GEMINI.md")  # a cycle
    found = _gather(workspace, home)
    assert _labels(found) == [
        "AGENTS.md",
        "GEMINI.md",
        "a.md (imported by GEMINI.md)",
        "b.md (imported by a.md)",
    ]
    assert found.notices == []


def test_a_deep_chain_stops_at_the_depth_limit(home: Path, workspace: Path) -> None:
    _write(workspace / "CLAUDE.md", "@l1.md")
    for level in range(1, MAX_IMPORT_DEPTH + 3):
        _write(workspace / f"l{level}.md", f"level {level} @l{level + 1}.md")
    found = _gather(workspace, home)
    assert len(found.sections) == 1 + MAX_IMPORT_DEPTH
    assert found.notices == [
        f"@l{MAX_IMPORT_DEPTH + 1}.md (imported by l{MAX_IMPORT_DEPTH}.md): more than "
        f"{MAX_IMPORT_DEPTH} imports deep; not included"
    ]


def test_a_planted_link_out_of_the_project_is_refused(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    secret = _write(tmp_path / "elsewhere" / "secret.txt", "outside-secret-7")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "notes.md").symlink_to(secret)
    _write(workspace / "CLAUDE.md", "@docs/notes.md")
    found = _gather(workspace, home, approved={str(secret)})  # even had it been approved
    assert "outside-secret-7" not in json.dumps(found.sections)
    assert found.notices == [
        "@docs/notes.md (imported by CLAUDE.md): a link that leads out of the project; not included"
    ]


def test_protected_paths_are_never_imported(home: Path, workspace: Path, user_home: Path) -> None:
    _write(user_home / ".ssh/id_rsa", "PRIVATE KEY")
    _write(home / ".env", "DEEPSEEK_API_KEY=sk-x")
    _write(workspace / "CLAUDE.md", "@~/.ssh/id_rsa")
    # The user's own file too: the key is never sent with every request.
    _write(user_home / ".claude/CLAUDE.md", f"@{home}/.env")
    real_key = os.path.realpath(user_home / ".ssh/id_rsa")
    found = _gather(workspace, home, approved={real_key})
    assert "PRIVATE KEY" not in json.dumps(found.sections)
    assert "sk-x" not in json.dumps(found.sections)
    assert len(found.notices) == 2
    assert all("protected path" in n for n in found.notices)


def test_user_files_import_from_anywhere_but_protected(
    home: Path, workspace: Path, user_home: Path, tmp_path: Path
) -> None:
    _write(tmp_path / "shared" / "team.md", "team rules")
    _write(user_home / ".claude/CLAUDE.md", f"@{tmp_path}/shared/team.md")
    assert _gather(workspace, home).sections[-1] == (
        f"{tmp_path}/shared/team.md (imported by ~/.claude/CLAUDE.md)",
        "team rules",
    )


def test_outside_imports_wait_for_approval(home: Path, workspace: Path, user_home: Path) -> None:
    notes = _write(user_home / "notes.md", "personal notes")
    _write(workspace / "CLAUDE.md", "@~/notes.md")
    found = _gather(workspace, home)
    assert _labels(found) == ["CLAUDE.md"]
    assert [o.label for o in found.outside] == ["~/notes.md"]
    assert found.notices == [
        "@~/notes.md (imported by CLAUDE.md): outside the project and not approved; not included"
    ]
    approved = _gather(workspace, home, approved={os.path.realpath(notes)})
    assert approved.sections[-1] == ("~/notes.md (imported by CLAUDE.md)", "personal notes")


def test_a_huge_file_is_read_up_to_its_cap(home: Path, workspace: Path) -> None:
    big = workspace / "big.md"
    with big.open("wb") as fh:
        fh.write(b"x" * (10 * 1024 * 1024))
    _write(workspace / "CLAUDE.md", "@big.md")
    found = _gather(workspace, home)
    assert len(found.sections[1][1]) == MAX_FILE_BYTES
    assert found.notices == [
        "big.md (imported by CLAUDE.md): larger than 64 KiB; only its first 64 KiB are included"
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_or_device_import_does_not_hang(home: Path, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe.md")
    _write(workspace / "CLAUDE.md", "@pipe.md @/dev/zero")
    found = _gather(workspace, home)
    assert _labels(found) == ["CLAUDE.md"]  # neither is a regular file: text


# -- through a session and a real run ---------------------------------------------


async def test_session_asks_before_an_outside_import(
    configured, workspace: Path, user_home: Path
) -> None:
    _write(user_home / "notes.md", "approved-notes-31")
    _write(user_home / "other.md", "declined-other-31")
    _write(workspace / "CLAUDE.md", "@~/notes.md @~/other.md")
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY])
    configured.enqueue(Reply(content="ok"))
    async with runtime(workspace, approver=approver) as rt:
        await run_turn(rt, "hi")
        assert [r.summary for r in approver.seen] == [
            "Include ~/notes.md in the standing instructions "
            "(outside the project, imported by CLAUDE.md)",
            "Include ~/other.md in the standing instructions "
            "(outside the project, imported by CLAUDE.md)",
        ]
        assert rt.notices == (
            "@~/other.md (imported by CLAUDE.md): outside the project and not approved; "
            "not included",
        )
    system = bodies(configured)[0]["messages"][0]["content"]
    assert "approved-notes-31" in system and "declined-other-31" not in system


def test_headless_run_refuses_outside_imports_with_a_notice(
    configured, workspace: Path, user_home: Path
) -> None:
    _write(user_home / "notes.md", "outside-notes-31")
    _write(workspace / ".claude/CLAUDE.md", "Project rules. @rules/extra.md @~/notes.md")
    _write(workspace / ".claude/rules/extra.md", "extra-rules-31")
    _write(workspace / "CLAUDE.local.md", "local-rules-31")
    configured.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "@~/notes.md (imported by .claude/CLAUDE.md): outside the project" in proc.stderr
    system = bodies(configured)[0]["messages"][0]["content"]
    assert "extra-rules-31" in system and "local-rules-31" in system
    assert "outside-notes-31" not in system


def test_working_in_home_an_import_of_the_reasonix_home_is_refused(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace is ``$HOME``: ``.reasonix`` is inside it, and a planted
    ``CLAUDE.md`` imports the key file from there."""
    home = user_home / ".reasonix"
    monkeypatch.setenv("REASONIX_HOME", str(home))
    _write(home / ".env", "DEEPSEEK_API_KEY=sk-home-31")
    _write(user_home / "CLAUDE.md", "@.reasonix/.env")
    _write(user_home / ".claude/CLAUDE.md", "user rules")  # user-level and project: once
    found = _gather(user_home, home)
    assert "sk-home-31" not in json.dumps(found.sections)
    assert _labels(found) == ["~/.claude/CLAUDE.md", "CLAUDE.md"]
    assert found.notices == [
        "@.reasonix/.env (imported by CLAUDE.md): a protected path (keys and credentials); "
        "not included"
    ]


def test_an_outside_file_two_files_import_is_asked_about_once(
    home: Path, workspace: Path, user_home: Path
) -> None:
    _write(user_home / "notes.md", "notes")
    _write(workspace / "CLAUDE.md", "@~/notes.md")
    _write(workspace / "GEMINI.md", "@~/notes.md")
    found = _gather(workspace, home)
    assert [o.label for o in found.outside] == ["~/notes.md"]
    assert len(found.notices) == 1
