"""File tools never write git metadata without an explicit ``Edit(.git/**)`` rule
(issue 10, hole 5b): under ``-y`` / yolo, ``write_file`` and ``edit_file`` wrote
``.git/hooks/*`` and ``.git/config``, which host git then runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reasonix_core.permission import Policy, Verdict, explain

PRESETS = ("ask", "auto", "yolo")
# Every built-in of the edit family (notebook_edit was listed before it existed).
WRITERS = ("write_file", "edit_file", "multi_edit", "move_file")
GIT_PATHS = (
    ".git/hooks/pre-commit",
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git/info/attributes",
    ".git/modules/lib/config",
    ".git",
    "./.git/hooks/post-checkout",
    "src/../.git/config",
    "sub/.git/hooks/pre-commit",
    ".GIT/config",
    "link-to-git/config",
    "{ws}/.git/config",
)
# Rules that allow writing in general but do not name .git: none unlocks it.
BROAD = ((), ("Edit",), ("Edit(**)",), ("Edit(./**)",), ("Write",), ("write_file",), ("Edit(*)",))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "link-to-git").symlink_to(tmp_path / ".git")
    return tmp_path


def _args(tool: str, path: str, other: str = "src/a.py") -> dict[str, Any]:
    if tool == "move_file":
        return {"source_path": path, "destination_path": other}
    return {"path": path}


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("allow", BROAD, ids=lambda a: ",".join(a) or "no-rule")
@pytest.mark.parametrize("path", GIT_PATHS)
@pytest.mark.parametrize("tool", WRITERS)
def test_writes_under_git_are_refused_in_every_preset(
    tool: str, path: str, allow: tuple[str, ...], preset: str, ws: Path
) -> None:
    policy = Policy(workspace=ws, preset=preset, mode="allow", allow=allow)
    decision = policy.decide(tool, False, _args(tool, path.format(ws=ws)))
    assert decision.verdict is Verdict.DENY, decision
    assert "Edit(.git/**)" in decision.reason


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(
    ("source", "destination"),
    [
        (".git/hooks/pre-commit.sample", ".git/hooks/pre-commit"),
        ("src/evil.sh", ".git/hooks/pre-commit"),
        (".git", ".git-old"),
        (".git/config", "src/config"),
        ("src/x", "sub/.git"),
    ],
)
def test_move_file_refused_at_either_end(
    source: str, destination: str, preset: str, ws: Path
) -> None:
    policy = Policy(workspace=ws, preset=preset, allow=("Edit",))
    args = {"source_path": source, "destination_path": destination}
    assert policy.decide("move_file", False, args).verdict is Verdict.DENY


def test_session_grants_and_allowed_tools_do_not_unlock_git(ws: Path) -> None:
    policy = Policy(workspace=ws, preset="yolo")
    policy.add_session_allow("Edit Write Edit(./**)")
    assert policy.decide("write_file", False, {"path": ".git/config"}).verdict is Verdict.DENY


@pytest.mark.parametrize("preset", PRESETS)
def test_explicit_git_rule_allows(preset: str, ws: Path) -> None:
    policy = Policy(workspace=ws, preset=preset, allow=("Edit(.git/**)",))
    for path in (".git/hooks/pre-commit", ".git/config"):
        assert policy.decide("write_file", False, {"path": path}).verdict is Verdict.ALLOW
    narrow = Policy(workspace=ws, preset=preset, allow=("Edit(.git/hooks/*)",))
    assert narrow.decide("edit_file", False, {"path": ".git/hooks/x"}).verdict is Verdict.ALLOW
    assert narrow.decide("edit_file", False, {"path": ".git/config"}).verdict is Verdict.DENY
    # A move needs both ends allowed.
    move = {"source_path": ".git/config", "destination_path": ".git/config.bak"}
    assert narrow.decide("move_file", False, move).verdict is Verdict.DENY
    session = Policy(workspace=ws, preset=preset)
    session.add_session_allow("Edit(.git/**)")
    assert session.decide("write_file", False, {"path": ".git/x"}).verdict is Verdict.ALLOW


def test_deny_rules_still_win_over_an_explicit_git_rule(ws: Path) -> None:
    policy = Policy(
        workspace=ws, preset="yolo", allow=("Edit(.git/**)",), deny=("Edit(.git/hooks/**)",)
    )
    decision = policy.decide("write_file", False, {"path": ".git/hooks/pre-commit"})
    assert decision.verdict is Verdict.DENY
    assert decision.rule == "Edit(.git/hooks/**)"


@pytest.mark.parametrize(
    "path", [".gitignore", ".github/workflows/ci.yml", "src/git/config", "a.git", ".gitmodules"]
)
def test_near_names_are_ordinary_files(path: str, ws: Path) -> None:
    policy = Policy(workspace=ws, preset="auto")
    assert policy.decide("write_file", False, {"path": path}).verdict is Verdict.ALLOW


def test_reads_of_git_metadata_are_not_affected(ws: Path) -> None:
    policy = Policy(workspace=ws)
    assert policy.decide("read_file", True, {"path": ".git/config"}).verdict is Verdict.ALLOW


def test_workspace_inside_a_git_folder_still_writes(tmp_path: Path) -> None:
    ws = tmp_path / ".git" / "worktree-like"
    ws.mkdir(parents=True)
    policy = Policy(workspace=ws, preset="auto")
    assert policy.decide("write_file", False, {"path": "a.txt"}).verdict is Verdict.ALLOW


def test_explain_shows_the_refusal(ws: Path) -> None:
    policy = Policy(workspace=ws, preset="yolo")
    out = explain(policy, "write_file", ".git/hooks/pre-commit")
    assert "decision: deny" in out
    assert ".git/hooks/pre-commit is git metadata" in out
