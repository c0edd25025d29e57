"""The shadow store on its own: crash safety, the size bound, hostile names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reasonix_core.checkpoint.store import (
    NESTED_REPOSITORY,
    OVER_BOUND,
    ShadowStore,
    entry_on_disk,
)


def _open(tmp_path: Path, ws: Path) -> ShadowStore:
    store = ShadowStore.open(tmp_path / "store", ws)
    assert store is not None
    return store


def _disk(store: ShadowStore, tree: str) -> None:
    """Every entry of ``tree`` is what the disk holds, and nothing is missing."""
    entries = store.entries(tree)
    for name, entry in entries.items():
        assert entry_on_disk(store.workspace, name) == entry, name
    on_disk = {
        os.path.relpath(os.path.join(d, f), store.workspace)
        for d, dirs, files in os.walk(store.workspace)
        for f in files
    }
    assert on_disk == set(entries)


def test_kill_9_mid_snapshot_leaves_the_store_usable(tmp_path):
    ws = tmp_path / "ws"
    for i in range(3000):
        folder = ws / f"d{i % 30}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.txt").write_text(f"{i}\n" * 200)
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from reasonix_core.checkpoint.store import ShadowStore
        ws = Path({str(ws)!r})
        store = ShadowStore.open(Path({str(tmp_path / "store")!r}), ws)
        for round in range(10_000):
            for f in sorted(ws.rglob("*.txt")):
                f.write_text(f"{{round}} {{f.name}}\\n" * 200)
            store.snapshot()
        """
    )
    lock = tmp_path / "store" / "index.lock"
    for _attempt in range(5):  # the lock may vanish between the look and the kill
        child = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
        try:
            deadline = time.monotonic() + 120  # a sync point, not a timed assertion
            while not lock.exists():
                assert child.poll() is None, "the snapshotting child died on its own"
                assert time.monotonic() < deadline, "no snapshot was ever in flight"
                time.sleep(0.001)
            os.killpg(child.pid, signal.SIGKILL)  # the child and its git
        finally:
            child.wait()
        if lock.exists():
            break
    assert lock.exists()  # killed mid-snapshot: git's lock was left behind
    store = _open(tmp_path, ws)
    snap = store.snapshot()
    _disk(store, snap.tree)
    (ws / "d0" / "f0.txt").write_text("after the crash\n")
    again = store.snapshot()
    assert store.blobs([store.entries(again.tree)["d0/f0.txt"].oid]) == {
        store.entries(again.tree)["d0/f0.txt"].oid: b"after the crash\n"
    }


def test_the_size_bound_names_what_it_could_not_keep(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small.txt").write_text("s\n")
    (ws / "big.bin").write_bytes(b"x" * 10_000)
    store = _open(tmp_path, ws)
    snap = store.snapshot(budget=1000)
    assert snap.not_kept == {"big.bin": OVER_BOUND}
    assert set(store.entries(snap.tree)) == {"small.txt"}


def test_a_nested_repository_is_named_not_kept(tmp_path):
    ws = tmp_path / "ws"
    (ws / "vendor" / "lib").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws / "vendor" / "lib")], check=True)
    (ws / "vendor" / "lib" / "x.c").write_text("int x;\n")
    (ws / "top.txt").write_text("t\n")
    store = _open(tmp_path, ws)
    snap = store.snapshot()
    assert set(store.entries(snap.tree)) == {"top.txt"}
    assert snap.not_kept == {"vendor/lib": NESTED_REPOSITORY}


def test_an_unchanged_tree_reuses_the_previous_snapshot(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a").write_text("a\n")
    store = _open(tmp_path, ws)
    first = store.snapshot()
    assert store.snapshot().tree == first.tree
    (ws / "a").write_text("b\n")
    assert store.snapshot().tree != first.tree


def test_a_new_session_starts_from_the_previous_sessions_snapshot(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(50):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
    first = ShadowStore.open(tmp_path / "sessions" / "one.rewind", ws)
    assert first is not None
    one = first.snapshot()
    (ws / "f0.txt").write_text("changed between sessions\n")
    (ws / "f1.txt").unlink()
    second = ShadowStore.open(tmp_path / "sessions" / "two.rewind", ws)
    assert second is not None
    with second.locked():
        # Seeded: HEAD is the first session's last snapshot before any snapshot.
        assert second._head_tree() == one.tree
    two = second.snapshot()
    _disk(second, two.tree)
    changed = {c.path for c in second.changes(one.tree, two.tree)}
    assert changed == {"f0.txt", "f1.txt"}
    objects = list((tmp_path / "sessions").glob("*/objects")) + list(
        (tmp_path / "sessions").glob("checkpoint-objects")
    )
    assert [p.name for p in objects] == ["checkpoint-objects"]  # shared, not per session


@pytest.mark.parametrize(
    "name", ["../escape.txt", "/etc/passwd", "a/../../x", ".git/config", "a//b"]
)
def test_a_rewind_never_restores_a_path_outside_the_workspace(tmp_path, name):
    from reasonix_core.checkpoint.restore import plan_code
    from reasonix_core.checkpoint.store import MODE_FILE, Change, Entry
    from reasonix_core.errors import CheckpointError

    ws = tmp_path / "ws"
    ws.mkdir()
    change = Change(name, Entry(MODE_FILE, "0" * 40), None, None, None)
    with pytest.raises(CheckpointError, match="refusing to restore"):
        plan_code(ws, [change], {})
