"""The search tools' walk at scale (issue 34): descriptors instead of path
resolution, the deny rules resolved once per walk, and a budget that says how far
it got. Tools are called as the agent calls them, with a real ToolContext whose
``read_denied`` is the permission policy's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix_core.tool.builtin import _walk
from reasonix_core.tool.builtin import grep as grep_mod
from tests.core.tool_helpers import call_tool, policy_for, walk_ctx


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for i in range(5):
        folder = root / f"d{i}"
        folder.mkdir(parents=True)
        (folder / "a.py").write_text(f"needle {i}\n")
    return root


# -- the budget says how far it got ------------------------------------------------------------


async def test_grep_within_its_budget_is_complete(tmp_path: Path, ws: Path) -> None:
    r = await call_tool(walk_ctx(tmp_path, ws, policy_for(ws)), "grep", pattern="needle")
    assert sorted(r.text.splitlines()) == [f"d{i}/a.py:1:needle {i}" for i in range(5)]
    assert "files_total" not in r.meta


async def test_grep_past_its_budget_says_how_many_files_of_how_many(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A budget of nothing: the first file is searched, then the budget is spent
    # (no wall-clock race: any time at all is past it).
    monkeypatch.setattr(grep_mod, "TIME_BUDGET_SECONDS", 0.0)
    r = await call_tool(walk_ctx(tmp_path, ws, policy_for(ws)), "grep", pattern="needle")
    assert r.text.splitlines()[0] == "d0/a.py:1:needle 0"
    assert "search stopped early" in r.text
    assert "after 1 of 5 files" in r.text
    assert r.meta["files_done"] == 1
    assert r.meta["files_total"] == 5 and r.meta["files_total_known"] is True


async def test_grep_budget_counts_only_the_files_its_glob_takes(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        (ws / f"d{i}" / "b.txt").write_text("needle\n")
    monkeypatch.setattr(grep_mod, "TIME_BUDGET_SECONDS", 0.0)
    r = await call_tool(walk_ctx(tmp_path, ws, policy_for(ws)), "grep", pattern="needle", glob="*.txt")
    assert "after 1 of 3 files" in r.text


# -- deny rules and protected paths, judged once per walk ----------------------------------------


async def test_deny_rules_deep_in_the_tree_still_hide_entries(tmp_path: Path, ws: Path) -> None:
    deep = ws / "d1" / "x" / "y"
    deep.mkdir(parents=True)
    (deep / "secret.txt").write_text("needle SECRET-A\n")
    (ws / "d2" / "id.key").write_text("needle SECRET-B\n")
    (ws / "d3" / "vault").mkdir()
    (ws / "d3" / "vault" / "v.txt").write_text("needle SECRET-C\n")
    (ws / "d4" / "alias.txt").symlink_to(deep / "secret.txt")
    policy = policy_for(
        ws,
        deny=("Read(d1/x/y/secret.txt)", "Read(**/*.key)"),
        forbid=(ws / "d3" / "vault",),
    )
    ctx = walk_ctx(tmp_path, ws, policy)
    for name, args in (
        ("grep", {"pattern": "needle"}),
        ("grep", {"pattern": "needle", "glob": "**/*"}),
        ("glob", {"pattern": "**/*"}),
        ("ls", {"path": ".", "recursive": True}),
    ):
        r = await call_tool(ctx, name, **args)
        assert "SECRET" not in r.text, (name, r.text)
        for hidden in ("secret.txt", "id.key", "v.txt", "alias.txt"):
            assert hidden not in r.text, (name, hidden, r.text)
        assert "a.py" in r.text, (name, r.text)


def test_read_filter_tells_which_folders_need_no_check(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src" / "deep").mkdir(parents=True)
    policy = policy_for(ws, deny=("Read(src/deep/.env)",), forbid=(ws / "vault",))
    walk = policy.read_filter("grep")
    root = str(ws.resolve())
    assert walk.may_deny_in(root)  # vault and src/deep/.env are below it
    assert walk.may_deny_in(f"{root}/src/deep")
    assert not walk.may_deny_in(f"{root}/lib")
    assert not walk.may_deny_in(f"{root}/src/other")
    assert walk(f"{root}/src/deep/.env", is_link=False)
    assert walk(f"{root}/vault/x", is_link=False)
    assert not walk(f"{root}/src/deep/ok.py", is_link=False)
    # The same answers as read_denied, which judges one path at a time.
    for rel in ("src/deep/.env", "vault/x", "src/deep/ok.py", "lib/a.py"):
        assert walk(f"{root}/{rel}") == policy.read_denied("grep", f"{root}/{rel}")
    # A glob rule: every folder it could reach below its literal lead is checked.
    globbed = policy_for(ws, deny=("Read(src/**/*.pem)",)).read_filter("grep")
    assert globbed.may_deny_in(f"{root}/src/deep")
    assert not globbed.may_deny_in(f"{root}/lib")
    # A rule for every read: every folder.
    assert policy_for(ws, deny=("Read",)).read_filter("grep").may_deny_in(f"{root}/lib")


# -- descriptors ---------------------------------------------------------------------------------


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
async def test_a_walk_stopped_early_leaves_no_descriptor_open(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = walk_ctx(tmp_path, ws, policy_for(ws))
    before = _open_fds()
    monkeypatch.setattr(grep_mod, "MAX_MATCHES", 1)  # the output fills at the first match
    r = await call_tool(ctx, "grep", pattern="needle")
    assert "results capped" in r.text
    monkeypatch.setattr(grep_mod, "TIME_BUDGET_SECONDS", 0.0)
    await call_tool(ctx, "grep", pattern="needle")
    await call_tool(ctx, "glob", pattern="**/*.py")
    assert _open_fds() == before


async def test_a_tree_deeper_than_the_walk_holds_open_is_reported_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_walk, "WALK_MAX_DEPTH", 4)
    ws = tmp_path / "ws"
    deep = ws.joinpath(*["n"] * 8)
    deep.mkdir(parents=True)
    (ws / "n" / "top.txt").write_text("needle\n")
    (deep / "bottom.txt").write_text("needle\n")
    r = await call_tool(walk_ctx(tmp_path, ws, policy_for(ws)), "ls", path=".", recursive=True)
    assert "n/top.txt" in r.text and "bottom.txt" not in r.text
    assert "could not be read" in r.text


# -- the literal every match holds ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "case_insensitive", "literal"),
    [
        ("handle_request", False, "handle_request"),
        (r"def \w+_request\(", False, "_request("),
        ("foo|bar", False, ""),
        ("ab*c", False, "a"),
        ("(?:abc)?d", False, "d"),
        ("abc", True, ""),
        ("(?i)abc", False, ""),
        ("(?i:abc)de", False, "de"),
        ("(unclosed", False, ""),
    ],
)
def test_required_literal(pattern: str, case_insensitive: bool, literal: str) -> None:
    assert grep_mod.required_literal(pattern, case_insensitive) == literal


@pytest.mark.parametrize(
    "pattern",
    ["needle", r"ne+dle \d", "^needle", r"needle$", "dle 3|x", r"(?<=ee)dle", "needle\n", "e\r"],
)
async def test_grep_with_the_literal_check_finds_what_re_finds(
    tmp_path: Path, ws: Path, pattern: str
) -> None:
    import re

    (ws / "d0" / "crlf.txt").write_bytes(b"needle 7\r\nneedle\r\n")
    (ws / "d0" / "cr.txt").write_bytes(b"one\rtwo e\r\n")
    r = await call_tool(walk_ctx(tmp_path, ws, policy_for(ws)), "grep", pattern=pattern)
    want = []
    for path in sorted(ws.rglob("*")):
        if path.is_file():
            text = path.read_bytes().decode().replace("\r\n", "\n")
            rel = path.relative_to(ws).as_posix()
            for n, line in enumerate(text.split("\n")[:-1], 1):
                if re.search(pattern, line, re.M):
                    want.append(f"{rel}:{n}:{line}")
    got = [] if r.text.startswith("no matches") else r.text.split("\n")
    assert sorted(got) == sorted(want)
