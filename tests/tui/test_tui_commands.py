"""Custom commands, @ references and the registry (no app)."""

from __future__ import annotations

from pathlib import Path

from reasonix_core.command import (
    expand_mentions,
    expand_template,
    load_custom_commands,
    path_candidates,
)
from reasonix_tui.commands import CommandRegistry
from reasonix_tui.completion import mention_at_cursor, slash_items
from reasonix_tui.screens.builtin_commands import BUILTIN_COMMANDS


def test_template_placeholders() -> None:
    body = "all=$ARGUMENTS one=$1 two=$2 none=$9 dollar=$$1 cost=$$"
    assert expand_template(body, 'a "b c"') == 'all=a "b c" one=a two=b c none= dollar=$1 cost=$'


def test_template_without_placeholder_appends_arguments() -> None:
    assert expand_template("Review the code.", "src/x.py") == "Review the code.\n\nsrc/x.py"
    assert expand_template("Review the code.", "") == "Review the code."


def test_template_with_unbalanced_quotes_falls_back_to_whitespace() -> None:
    assert expand_template("$1|$2", "it's fine") == "it's|fine"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_loading_names_scopes_and_problems(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    _write(home / "commands" / "review.md", "---\ndescription: user review\n---\nUser $1")
    _write(home / "commands" / "only-user.md", "Hello")
    _write(project / ".reasonix/commands/review.md", "---\ndescription: 'proj'\n---\nProj $1")
    _write(project / ".reasonix/commands/git/commit.md", "---\nargument-hint: <msg>\n---\nC $1")
    _write(project / ".reasonix/commands/bad.md", "---\nno colon here\n---\nx")
    _write(project / ".reasonix/commands/open.md", "---\ndescription: x\n")
    _write(project / ".reasonix/commands/empty.md", "---\ndescription: x\n---\n\n")
    (project / ".reasonix/commands/binary.md").write_bytes(b"\xff\xfe\x00")
    _write(project / ".reasonix/commands/bad name.md", "x")
    commands, problems = load_custom_commands(project, home)
    by_name = {c.name: c for c in commands}
    assert sorted(by_name) == ["git:commit", "only-user", "review"]
    assert by_name["review"].scope == "project"
    assert by_name["review"].description == "proj"
    assert by_name["git:commit"].argument_hint == "<msg>"
    assert by_name["git:commit"].render("fix") == "C fix"
    assert sorted(p.path.name for p in problems) == [
        "bad name.md",
        "bad.md",
        "binary.md",
        "empty.md",
        "open.md",
    ]


def test_missing_directories_are_fine(tmp_path: Path) -> None:
    assert load_custom_commands(tmp_path / "nope", None) == ([], [])


def test_registry_custom_never_shadows_builtin(tmp_path: Path) -> None:
    _write(tmp_path / ".reasonix/commands/help.md", "custom help")
    _write(tmp_path / ".reasonix/commands/deploy.md", "ship it")
    registry = CommandRegistry.load(BUILTIN_COMMANDS, tmp_path, None)
    assert registry.get("help").kind == "builtin"
    assert registry.get("deploy").kind == "custom"
    assert any("built-in" in p.message for p in registry.problems)
    assert registry.get("exit").name == "quit"
    command, name, args = registry.parse("/deploy  now please ")
    assert command is not None and name == "deploy" and args == "now please"


def test_slash_items_and_mention_context() -> None:
    registry = CommandRegistry(BUILTIN_COMMANDS)
    assert [i.value for i in slash_items(registry, "/re")] == ["resume", "rewind"]
    assert [i.value for i in slash_items(registry, "/at")][:1] == ["status"]
    assert slash_items(registry, "/model x") is None
    assert slash_items(registry, "hello") is None
    assert mention_at_cursor("look at @src/ma") == (8, "src/ma")
    assert mention_at_cursor("mail a@b") is None
    assert mention_at_cursor("@") == (0, "")


def test_expand_mentions(tmp_path: Path) -> None:
    tmp_path = tmp_path / "ws"
    _write(tmp_path / "a.txt", "alpha")
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    _write(tmp_path / "big.txt", "x" * 100)
    _write(tmp_path / "pkg" / "mod.py", "")
    _write(tmp_path / "pkg" / ".git" / "HEAD", "")
    _write(tmp_path / "pkg" / "node_modules" / "x.js", "")
    text = "see @a.txt, @bin.dat @big.txt @pkg and me@mail.com @nobody"
    result = expand_mentions(text, tmp_path, file_cap=10)
    assert result.paths == ["a.txt", "bin.dat", "big.txt", "pkg"]
    blocks = "\n".join(result.blocks)
    assert '<file path="a.txt">\nalpha\n</file>' in blocks
    assert 'binary="true"' in blocks
    assert "[truncated: showing 10 of 100 bytes]" in blocks
    assert '<directory path="pkg">\nmod.py\n</directory>' in blocks
    assert "mail.com" not in blocks and "nobody" not in blocks
    assert result.apply(text).startswith(text)


def test_path_candidates_one_level(tmp_path: Path) -> None:
    tmp_path = tmp_path / "ws"
    _write(tmp_path / "src" / "deep" / "x.py", "")
    _write(tmp_path / "setup.py", "")
    _write(tmp_path / ".env", "")
    (tmp_path / ".git").mkdir()
    names = [c.name for c in path_candidates(tmp_path, "")]
    assert names == ["src/", "setup.py"]
    assert [c.completion for c in path_candidates(tmp_path, "src/")] == ["src/deep/"]
    assert [c.name for c in path_candidates(tmp_path, ".")] == [".env"]
    assert path_candidates(tmp_path, "missing/") == []
