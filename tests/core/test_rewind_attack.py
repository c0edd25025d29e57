"""An attack on the checkpoint mechanism of issue 33 (the inotify watcher, the
in-memory tree, the seed from the workspace's git index), as a hostile model,
a hostile repository and a faulty environment would drive it. Every quick
snapshot must equal a full read of the same tree (a store with no watcher
and no seed); a restore must give the bytes the file had, or refuse."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix_core.checkpoint import watcher as watcher_mod
from reasonix_core.checkpoint.store import ShadowStore
from tests.core.rewind_helpers import call, state, turn
from tests.core.test_rewind_scale import _full_read, _repo, _same


def _store(tmp_path: Path, ws: Path, name: str = "a") -> ShadowStore:
    store = ShadowStore.open(tmp_path / "sessions" / "ws" / f"{name}.rewind", ws, watch=True)
    assert store is not None
    return store


def _check(store: ShadowStore, tmp_path: Path, ws: Path) -> str:
    tree = store.snapshot().tree
    _same(store, tree, *_full_read(tmp_path / "sessions", ws))
    return tree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    _repo(ws, 120, commit=False)
    return ws


# -- the watcher's blind spots -------------------------------------------------


def test_a_background_writer_across_steps_is_seen_at_each_snapshot(tmp_path, repo):
    store = _store(tmp_path, repo)
    store.snapshot()
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time\n"
         "for i in range(3):\n"
         "    open('bg.txt','a').write(f'{i}\\n'); sys.stdout.write('w\\n'); sys.stdout.flush()\n"
         "    sys.stdin.readline()\n"],
        cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for _ in range(3):
            assert proc.stdout.readline() == "w\n"
            _check(store, tmp_path, repo)
            proc.stdin.write("\n")
            proc.stdin.flush()
    finally:
        proc.wait()
    _check(store, tmp_path, repo)
    assert store.quick_snapshots == 4
    store.close()


def test_a_folder_made_and_filled_at_once_is_read_whole(tmp_path, repo):
    store = _store(tmp_path, repo)
    store.snapshot()
    # Files appear before any watch on their folders can exist.
    subprocess.run(
        "mkdir -p q/a/b/c && for i in 1 2 3; do echo $i > q/a/b/c/f$i; echo $i > q/a/g$i; done",
        shell=True, cwd=repo, check=True,
    )  # fmt: skip
    _check(store, tmp_path, repo)
    # Written after the watches were added: events.
    (repo / "q" / "a" / "b" / "c" / "f1").write_text("later\n")
    _check(store, tmp_path, repo)
    assert store.quick_snapshots == 2
    store.close()


def test_trees_moved_in_and_out_and_swapped(tmp_path, repo):
    outside = tmp_path / "outside"
    (outside / "deep" / "er").mkdir(parents=True)
    (outside / "deep" / "er" / "x.txt").write_text("x\n")
    (outside / "deep" / "y.txt").write_text("y\n")
    store = _store(tmp_path, repo)
    store.snapshot()
    os.rename(outside / "deep", repo / "in")  # moved in: no event for its files
    _check(store, tmp_path, repo)
    (repo / "in" / "er" / "x.txt").write_text("changed in\n")  # its watch is there
    _check(store, tmp_path, repo)
    os.rename(repo / "pkg1", tmp_path / "pkg1-out")  # moved out
    _check(store, tmp_path, repo)
    (tmp_path / "pkg1-out" / "mod1" / "f1.txt").write_text("outside now\n")  # no longer ours
    _check(store, tmp_path, repo)
    # Two folders swapped through a third name.
    os.rename(repo / "pkg2", repo / "tmp")
    os.rename(repo / "pkg3", repo / "pkg2")
    os.rename(repo / "tmp", repo / "pkg3")
    _check(store, tmp_path, repo)
    # A folder moved back in over the same name, then written through its old watch.
    os.rename(tmp_path / "pkg1-out", repo / "pkg1")
    (repo / "pkg1" / "mod1" / "f1.txt").write_text("back\n")
    _check(store, tmp_path, repo)
    assert store.quick_snapshots == 6
    store.close()


def test_a_folder_replaced_by_a_symlink_is_kept_as_a_symlink(tmp_path, repo):
    """Issue 29 item 3, at the store: ``mv sub sub.moved && ln -s sub.moved sub``."""
    store = _store(tmp_path, repo)
    store.snapshot()
    (repo / "pkg1" / "mod1" / "f1.txt").write_text("written just before\n")
    subprocess.run("mv pkg1 pkg1.moved && ln -s pkg1.moved pkg1", shell=True, cwd=repo, check=True)
    tree = _check(store, tmp_path, repo)
    assert store.entries(tree)["pkg1"].mode == "120000"
    # Written through the symlink: the file is pkg1.moved's.
    (repo / "pkg1" / "mod1" / "f1.txt").write_text("through the link\n")
    tree = _check(store, tmp_path, repo)
    assert "pkg1/mod1/f1.txt" not in store.entries(tree)
    store.close()


def test_a_folder_replaced_by_a_symlink_in_a_full_read(tmp_path, repo):
    """The full read (a new session, or no watcher) lists the folder's old files
    as deleted: they must not be looked up through the symlink."""
    first = ShadowStore.open(tmp_path / "sessions" / "ws" / "a.rewind", repo)
    assert first is not None
    first.snapshot()
    subprocess.run("mv pkg1 pkg1.moved && ln -s pkg1.moved pkg1", shell=True, cwd=repo, check=True)
    tree = first.snapshot().tree
    entries = first.entries(tree)
    assert entries["pkg1"].mode == "120000"
    assert not any(p.startswith("pkg1/") for p in entries)


def test_a_hard_link_made_after_the_first_look_from_inside_is_seen(tmp_path, repo):
    store = _store(tmp_path, repo)
    store.snapshot()
    os.link(repo / "pkg1" / "mod1" / "f1.txt", repo / "twin.txt")  # an event: twin.txt
    _check(store, tmp_path, repo)
    with open(repo / "pkg1" / "mod1" / "f1.txt", "a") as f:  # writes both names
        f.write("both\n")
    _check(store, tmp_path, repo)
    store.close()


def test_an_old_mtime_with_the_same_size_is_seen(tmp_path, repo):
    target = repo / "pkg1" / "mod1" / "f1.txt"
    store = _store(tmp_path, repo)
    store.snapshot()
    info = target.stat()
    target.write_bytes(target.read_bytes().upper())  # same size
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    _check(store, tmp_path, repo)
    # And in a full read of a new session (git's stat cache: ctime changed).
    info = target.stat()
    target.write_bytes(target.read_bytes().lower())
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    store.close()
    second = ShadowStore.open(tmp_path / "sessions" / "ws" / "b.rewind", repo)
    assert second is not None
    _same(second, second.snapshot().tree, *_full_read(tmp_path / "sessions", repo))


def test_changed_and_changed_back_is_unchanged(tmp_path, repo):
    target = repo / "pkg1" / "mod1" / "f1.txt"
    store = _store(tmp_path, repo)
    first = store.snapshot().tree
    old = target.read_bytes()
    target.write_text("other\n")
    target.write_bytes(old)
    assert _check(store, tmp_path, repo) == first


def test_a_gitignore_edited_to_unignore_a_folder(tmp_path, repo):
    (repo / "build").mkdir()
    (repo / "build" / "o.txt").write_text("o\n")
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitignore").write_text("*.tmp\n")
    (repo / "sub" / "a.tmp").write_text("t\n")
    store = _store(tmp_path, repo)
    store.snapshot()
    (repo / ".gitignore").write_text("*.log\n")  # build/ is kept now
    _check(store, tmp_path, repo)
    (repo / "sub" / ".gitignore").unlink()  # a nested .gitignore removed
    _check(store, tmp_path, repo)
    # A folder moved in with its own .gitignore.
    (tmp_path / "inbound").mkdir()
    (tmp_path / "inbound" / ".gitignore").write_text("secret*\n")
    (tmp_path / "inbound" / "secret.txt").write_text("s\n")
    (tmp_path / "inbound" / "plain.txt").write_text("p\n")
    os.rename(tmp_path / "inbound", repo / "inbound")
    _check(store, tmp_path, repo)
    store.close()


def test_mmap_writes_then_close_are_seen(tmp_path, repo):
    target = repo / "pkg1" / "mod1" / "f1.txt"
    store = _store(tmp_path, repo)
    store.snapshot()
    with open(target, "r+b") as f:
        with mmap.mmap(f.fileno(), 0) as m:
            m[0:4] = b"MMAP"
            m.flush()
    _check(store, tmp_path, repo)
    store.close()


def test_a_queue_overflow_falls_back_to_a_full_read(tmp_path, repo):
    store = _store(tmp_path, repo)
    store.snapshot()
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    a, b = repo / "pkg1" / "mod1" / "f1.txt", repo / "pkg1" / "mod11" / "f11.txt"
    fa, fb = os.open(a, os.O_WRONLY), os.open(b, os.O_WRONLY)
    try:
        for i in range(limit // 2 + 100):  # alternating: the kernel cannot merge them
            os.pwrite(fa, b"x", i % 5)
            os.pwrite(fb, b"y", i % 5)
    finally:
        os.close(fa)
        os.close(fb)
    (repo / "after.txt").write_text("made during the overflow\n")
    _check(store, tmp_path, repo)
    assert store.quick_snapshots == 0
    (repo / "later.txt").write_text("the watches are back\n")
    _check(store, tmp_path, repo)
    assert store.quick_snapshots == 1
    store.close()


def test_the_watch_limit_falls_back_to_a_full_read(tmp_path, repo, monkeypatch):
    real = watcher_mod.ChangeWatcher._add
    budget = {"left": 10_000}

    def limited(self, rel):  # fs.inotify.max_user_watches reached part-way
        budget["left"] -= 1
        if budget["left"] < 0:
            raise watcher_mod.WatchFailed("cannot watch: No space left on device")
        return real(self, rel)

    monkeypatch.setattr(watcher_mod.ChangeWatcher, "_add", limited)
    store = _store(tmp_path, repo)
    store.snapshot()
    budget["left"] = 0  # the next folder made cannot be watched
    subprocess.run("mkdir -p late/deep && echo 1 > late/deep/x", shell=True, cwd=repo, check=True)
    _check(store, tmp_path, repo)
    (repo / "late" / "deep" / "x").write_text("unwatched folder written\n")
    _check(store, tmp_path, repo)
    store.close()


def test_two_sessions_on_one_workspace_at_once(tmp_path, repo):
    a, b = _store(tmp_path, repo, "a"), _store(tmp_path, repo, "b")
    a.snapshot()
    b.snapshot()
    for i in range(4):
        (repo / f"s{i}.txt").write_text(str(i))
        (repo / "pkg1" / "mod1" / "f1.txt").write_text(f"v{i}\n")
        _check(a if i % 2 else b, tmp_path, repo)
        _check(b if i % 2 else a, tmp_path, repo)
    a.close()
    b.close()


# -- through the real CLI --------------------------------------------------------


@pytest.fixture
def ws(workspace: Path, configured: object, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    return workspace


def test_a_folder_replaced_by_a_symlink_leaves_every_turn_restorable(ws, configured, capsys):
    """Issue 29 item 3: the model cannot disable rewind with ``mv sub sub.moved
    && ln -s sub.moved sub``; the link is kept as a link."""
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("one\n")
    (ws / "top.txt").write_text("top\n")
    turn(configured, "look", call("bash", command="true"))
    before_2 = state(ws)
    turn(
        configured,
        "swap",
        call("bash", command="echo two >> sub/a.txt && mv sub sub.moved && ln -s sub.moved sub"),
        call("bash", command="echo three >> sub/a.txt && echo t2 > top.txt"),
    )
    before_3 = state(ws)
    turn(configured, "more", call("bash", command="echo four >> sub/a.txt && rm top.txt"))
    capsys.readouterr()
    from reasonix_tui.cli import main

    assert main(["rewind", "--list"]) == 0
    assert "refused" not in capsys.readouterr().out.lower()
    assert main(["rewind", "3", "--scope", "code"]) == 0
    assert state(ws) == before_3
    assert main(["rewind", "2", "--scope", "code", "--force"]) == 0
    assert state(ws) == before_2
    assert (ws / "sub").is_dir() and not (ws / "sub").is_symlink()
