"""``reasonix mcp add / remove / get``: comment-preserving edits of the file that
declares a server, in both scopes, through the real CLI in a child process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import reasonix

USER_TEXT = """\
# my own settings
default_model = "fixture"  # keep this comment

[agent]
compact_ratio = 0.8 # and this one

[[mcp.servers]]
name = "old"  # the server that was here first
command = "old-server"
"""

PROJECT_TEXT = """\
# project settings, checked in
[[mcp.servers]]
name = "team"
command = "team-server"  # the team's server
"""


def _list(workspace: Path) -> list[dict[str, object]]:
    done = reasonix(workspace, "mcp", "list", "--no-connect", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_add_and_remove_keep_every_comment_in_both_scopes(home: Path, workspace: Path) -> None:
    user_file = home / "config.toml"
    project_file = workspace / "reasonix.toml"
    user_file.write_text(USER_TEXT)
    project_file.write_text(PROJECT_TEXT)
    reasonix(workspace, "trust")

    added = reasonix(
        workspace, "mcp", "add", "gh", "https://example.com/mcp",
        "--transport", "sse", "--header", "X-Team: blue",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert str(user_file) in added.stdout
    text = user_file.read_text()
    assert text.startswith(USER_TEXT)  # every earlier line and comment, byte for byte
    assert 'name = "gh"' in text and 'type = "sse"' in text and 'X-Team = "blue"' in text

    added = reasonix(
        workspace, "mcp", "add", "--scope", "project", "local", "--env", "TOKEN_FILE=/x",
        "--", "node", "server.js", "--port", "0",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    text = project_file.read_text()
    assert text.startswith(PROJECT_TEXT)
    assert 'args = ["server.js", "--port", "0"]' in text
    reasonix(workspace, "trust")  # the project's servers changed: trust again

    names = {s["name"]: s for s in _list(workspace)}
    assert set(names) == {"old", "gh", "team", "local"}
    assert names["gh"]["transport"] == "sse"
    assert names["local"]["source"] == str(project_file)

    got = reasonix(workspace, "mcp", "get", "gh")
    assert got.returncode == 0, got.stderr
    assert "https://example.com/mcp" in got.stdout and "not logged in" in got.stdout
    assert "blue" not in got.stdout  # header values are not shown

    # Without --scope, each is removed from the one file that declares it.
    assert reasonix(workspace, "mcp", "remove", "gh").returncode == 0
    assert user_file.read_text() == USER_TEXT
    assert reasonix(workspace, "mcp", "remove", "local").returncode == 0
    assert project_file.read_text() == PROJECT_TEXT
    removed = reasonix(workspace, "mcp", "remove", "old")
    assert removed.returncode == 0, removed.stderr
    assert "# keep this comment" in user_file.read_text()
    assert "old-server" not in user_file.read_text()
    reasonix(workspace, "trust")
    assert {s["name"] for s in _list(workspace)} == {"team"}


def test_unknown_name_exits_non_zero_naming_it(workspace: Path) -> None:
    for action in ("remove", "get", "auth"):
        done = reasonix(workspace, "mcp", action, "nosuch")
        assert done.returncode == 2
        assert "'nosuch'" in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_the_same_name_in_both_scopes_needs_a_scope(home: Path, workspace: Path) -> None:
    for scope in ("user", "project"):
        done = reasonix(workspace, "mcp", "add", "--scope", scope, "dup", "-", "--", "cmd")
        assert done.returncode == 2  # "-" before -- is refused
        done = reasonix(workspace, "mcp", "add", "--scope", scope, "dup", "--", "cmd")
        assert done.returncode == 0, done.stderr
    done = reasonix(workspace, "mcp", "remove", "dup")
    assert done.returncode == 2
    assert "--scope" in done.stderr and "'dup'" in done.stderr
    done = reasonix(workspace, "mcp", "remove", "dup", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert "dup" not in (workspace / "reasonix.toml").read_text()
    assert "dup" in (home / "config.toml").read_text()


def test_adding_a_name_twice_leaves_the_file_alone(home: Path, workspace: Path) -> None:
    assert reasonix(workspace, "mcp", "add", "a", "http://127.0.0.1:1/mcp").returncode == 0
    before = (home / "config.toml").read_bytes()
    done = reasonix(workspace, "mcp", "add", "a", "http://127.0.0.1:2/mcp")
    assert done.returncode == 2 and "already declares" in done.stderr
    assert (home / "config.toml").read_bytes() == before
    assert (home / "config.toml").stat().st_mode & 0o777 == 0o600


def test_bad_input_is_one_line_and_exit_2(workspace: Path) -> None:
    cases = [
        ("add", "x", "ftp://host/mcp"),
        ("add", "x", "http://h/mcp", "--header", "no-colon"),
        ("add", "x", "--env", "1BAD=v", "--", "cmd"),
        ("add", "x", "--header", "A:b", "--", "cmd"),
        ("add", "x", "http://h/mcp", "--env", "A=b"),
        ("add", "bad name!", "http://h/mcp"),
        ("add", "x"),
        ("add", "x", "--", ""),
    ]
    for argv in cases:
        done = reasonix(workspace, "mcp", *argv)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, argv
    assert not (workspace / "reasonix.toml").exists()
