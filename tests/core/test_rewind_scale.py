"""Rewind at repository scale: snapshots that read only what changed (the
inotify watcher and the in-memory tree), the first store seeded from the
workspace's git index, and a rewind in a generated repository of 3,000 files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reasonix_core.checkpoint import seed as seed_mod
from reasonix_core.checkpoint.store import ShadowStore
from reasonix_core.checkpoint.watcher import MAX_PATHS
from tests.core.rewind_helpers import call, state, turn

_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ws, env=_GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


def _repo(ws: Path, files: int, *, commit: bool = True) -> None:
    for i in range(files):
        folder = ws / f"pkg{i % 10}" / f"mod{i % 150}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.txt").write_text(f"file {i}\n" * (1 + i % 7))
    (ws / ".gitignore").write_text("build/\n*.log\n")
    if commit:
        _git(ws, "init", "-q")
        _git(ws, "add", "-A")
        _git(ws, "-c", "gc.auto=0", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")


def _full_read(sessions: Path, ws: Path) -> tuple[ShadowStore, str]:
    """A store with no watcher and no seed, in its own objects folder: the
    whole tree read by git status, the reference every quick snapshot must match."""
    store = ShadowStore.open(sessions / f"ref-{os.urandom(4).hex()}" / "x.rewind", ws)
    assert store is not None
    return store, store.snapshot().tree


def _same(store: ShadowStore, tree: str, ref: ShadowStore, want: str) -> None:
    got = store._git("ls-tree", "-r", "-z", tree, work_tree=False, borrow=True)
    expected = ref._git("ls-tree", "-r", "-z", want, work_tree=False)
    assert got == expected
    assert tree == want


def _operations(ws: Path) -> list:
    return [
        lambda: (ws / "pkg1" / "mod1" / "f1.txt").write_text("changed\n"),
        lambda: (ws / "pkg2" / "mod2" / "f2.txt").unlink(),
        lambda: subprocess.run(
            "mkdir -p new/deep && echo n > new/deep/n.txt && echo x > x.log", shell=True, cwd=ws
        ),
        lambda: subprocess.run("mkdir build && echo o > build/o.txt", shell=True, cwd=ws),
        lambda: os.chmod(ws / "pkg3" / "mod3" / "f3.txt", 0o755),
        lambda: os.symlink("pkg1", ws / "link"),
        lambda: shutil.rmtree(ws / "pkg4" / "mod4"),
        lambda: os.rename(ws / "pkg0", ws / "moved"),
        lambda: (ws / "moved" / "mod0" / "late.txt").write_text("late"),
        lambda: subprocess.run(
            "mkdir -p a/b/c && echo 1 > a/b/c/x && mv a/b a/z", shell=True, cwd=ws
        ),
        lambda: shutil.rmtree(ws / "new"),
        lambda: (ws / "pkg5").rename(ws / "was5") or (ws / "pkg5").write_text("a file now"),
        lambda: (ws / "pkg6" / "mod6" / "f6.txt").write_bytes(b"\0binary\xff"),
        lambda: None,
    ]


@pytest.mark.parametrize("committed", [True, False])
def test_quick_snapshots_match_a_full_read(tmp_path, committed):
    ws = tmp_path / "ws"
    _repo(ws, 600, commit=committed)
    sessions = tmp_path / "sessions"
    store = ShadowStore.open(sessions / "ws" / "a.rewind", ws, watch=True)
    assert store is not None
    first = store.snapshot().tree
    _same(store, first, *_full_read(sessions, ws))
    for n, operation in enumerate(_operations(ws), start=1):
        operation()
        tree = store.snapshot().tree
        _same(store, tree, *_full_read(sessions, ws))
        assert store.quick_snapshots == n  # no full read was needed
    store.close()


def test_what_the_watcher_cannot_vouch_for_is_read_whole(tmp_path):
    ws = tmp_path / "ws"
    _repo(ws, 200)
    sessions = tmp_path / "sessions"
    store = ShadowStore.open(sessions / "ws" / "a.rewind", ws, watch=True)
    assert store is not None
    store.snapshot()
    # More changes than the watcher lists: a full read.
    many = ws / "many"
    many.mkdir()
    for i in range(MAX_PATHS + 10):
        (many / f"m{i}").write_text(str(i))
    tree = store.snapshot().tree
    assert store.quick_snapshots == 0
    _same(store, tree, *_full_read(sessions, ws))
    # A .gitignore change decides what else is kept: a full read.
    (ws / ".gitignore").write_text("build/\n")
    (ws / "now.log").write_text("kept now")
    tree = store.snapshot().tree
    assert store.quick_snapshots == 0
    _same(store, tree, *_full_read(sessions, ws))
    # A nested repository appears: a full read names it as not kept.
    (ws / "sub").mkdir()
    _git(ws / "sub", "init", "-q")
    snap = store.snapshot()
    assert "sub" in snap.not_kept
    _same(store, snap.tree, *_full_read(sessions, ws))
    # And the quick path is back for the next small change.
    (ws / "pkg1" / "mod1" / "f1.txt").write_text("small\n")
    snap = store.snapshot()
    assert store.quick_snapshots == 1 and "sub" in snap.not_kept
    _same(store, snap.tree, *_full_read(sessions, ws))


def test_a_write_through_a_hard_link_outside_the_workspace_is_seen(tmp_path):
    ws = tmp_path / "ws"
    _repo(ws, 50, commit=False)
    outside = tmp_path / "outside.txt"
    outside.write_text("one\n")
    os.link(outside, ws / "linked.txt")
    sessions = tmp_path / "sessions"
    store = ShadowStore.open(sessions / "ws" / "a.rewind", ws, watch=True)
    assert store is not None
    store.snapshot()
    with open(outside, "a") as f:  # no event in the workspace's folders
        f.write("two\n")
    tree = store.snapshot().tree
    assert store.quick_snapshots == 1
    _same(store, tree, *_full_read(sessions, ws))


def test_the_first_store_is_seeded_from_the_workspace_repository(tmp_path):
    ws = tmp_path / "ws"
    _repo(ws, 500)
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "m.js").write_text("never kept")
    _git(ws, "add", "-f", "node_modules/m.js")
    (ws / "pkg1" / "mod1" / "f1.txt").write_text("modified, not staged\n")
    (ws / "untracked.txt").write_text("new\n")
    (ws / "pkg2" / "mod2" / "f2.txt").unlink()
    sessions = tmp_path / "sessions"
    store = ShadowStore.open(sessions / "ws" / "a.rewind", ws, watch=True)
    assert store is not None
    snap = store.snapshot()
    copy = store._seed_copy
    assert copy is not None  # seeded: its blobs are being copied in
    ref, want = _full_read(sessions, ws)
    _same(store, snap.tree, ref, want)
    # The seed's trees are one pack git reads and verifies.
    packs = list((store.objects / "pack").glob("pack-*.idx"))
    assert packs
    for idx in packs:
        subprocess.run(["git", "verify-pack", str(idx)], check=True, capture_output=True)
    assert copy.wait(60)
    assert not seed_mod.borrowed_object_dirs(store.objects)
    shutil.rmtree(ws / ".git")  # the repository's objects are gone; the store has its own
    entries = store.entries(snap.tree)
    blobs = store.blobs([e.oid for e in entries.values()])
    assert blobs[entries["pkg3/mod3/f3.txt"].oid] == (ws / "pkg3/mod3/f3.txt").read_bytes()
    assert "node_modules/m.js" not in entries


def test_a_killed_seed_copy_is_resumed_by_the_next_session(tmp_path):
    ws = tmp_path / "ws"
    _repo(ws, 300)
    sessions = tmp_path / "sessions"
    first = ShadowStore.open(sessions / "ws" / "a.rewind", ws)
    assert first is not None
    snap = first.snapshot()
    assert first._seed_copy is not None
    first._seed_copy.cancel()
    first._seed_copy = None
    # Killed before or after its pack landed: either way the next session checks.
    second = ShadowStore.open(sessions / "ws" / "b.rewind", ws)
    assert second is not None
    second.snapshot()
    if second._seed_copy is not None:
        assert second._seed_copy.wait(60)
    assert not seed_mod.borrowed_object_dirs(first.objects)
    shutil.rmtree(ws / ".git")
    entries = first.entries(snap.tree)
    assert len(first.blobs([e.oid for e in entries.values()])) == len(
        {e.oid for e in entries.values()}
    )


@pytest.fixture
def ws(workspace: Path, configured: object, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    return workspace


def test_rewind_in_a_big_repository_restores_what_bash_did(ws, configured):
    _repo(ws, 3000)
    turn(configured, "look", call("bash", command="true"))
    before = state(ws)
    turn(
        configured,
        "change things",
        call("bash", command="rm pkg1/mod1/f1.txt && rm -r pkg2/mod2 && echo new > pkg3/new.txt"),
        call("bash", command="echo more >> pkg4/mod4/f4.txt && chmod +x pkg5/mod5/f5.txt"),
        call("edit_file", path="pkg6/mod6/f6.txt", old_string="file 6", new_string="FILE 6"),
        call("bash", command="mkdir -p made/deep && echo m > made/deep/m.txt && mv pkg7 moved7"),
    )
    assert not (ws / "pkg1/mod1/f1.txt").exists() and (ws / "moved7").is_dir()
    from reasonix_tui.cli import main

    assert main(["rewind", "2", "--scope", "code"]) == 0
    assert state(ws) == before
