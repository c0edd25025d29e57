"""Checkpoint snapshot cost on a 10,000-file repository (docs/PERFORMANCE.md#checkpoints).

    .venv/bin/python bench/bench_checkpoint.py [--files 10000] [--reps 50]

Builds a source tree of ``--files`` files (200 folders, 0.2-8 KB each, a
``.gitignore``d build folder and a ``node_modules`` folder beside them) with its
own git repository, then times, interleaved round by round so both sides share
the machine's moment:

- ``snapshot, unchanged``: :meth:`Checkpointer.take` (what the agent runs before
  a writing tool call: the shadow store's snapshot plus the transcript record
  decision) with nothing changed since the previous one;
- ``snapshot, one file changed``: the same after one file was edited;
- ``git status`` of the workspace's own repository (the user's everyday command
  over the same tree), and ``bash -c true`` (the cheapest possible bash tool
  step: one process start), as side-by-side baselines.

The first snapshot of a workspace's first session (the whole tree into an
empty store) is timed once, and the first snapshot of a second session, which
starts from the first one's index and HEAD.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import _common  # noqa: F401  (puts the repository root on sys.path)

from reasonix_core.agent.session import SessionHeader, SessionStore
from reasonix_core.checkpoint.recorder import Checkpointer
from reasonix_core.checkpoint.store import ShadowStore


def build_tree(root: Path, files: int) -> None:
    rng = random.Random(7)
    words = "def class return import self value item total name index result".split()
    for i in range(files):
        folder = root / f"pkg{i % 20}" / f"mod{i % 200}"
        folder.mkdir(parents=True, exist_ok=True)
        size = rng.randint(200, 8000)
        text = " ".join(rng.choice(words) for _ in range(size // 6))
        (folder / f"file{i}.py").write_text(text + "\n")
    (root / ".gitignore").write_text("build/\n")
    for extra in ("build", "node_modules/lib"):
        (root / extra).mkdir(parents=True)
        for j in range(200):
            (root / extra / f"x{j}.js").write_text("x" * 500)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    run = lambda *a: subprocess.run(["git", *a], cwd=root, env=env, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("add", "-A")
    run("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "tree")


def ms(seconds: list[float]) -> str:
    q = statistics.quantiles(seconds, n=10)
    return f"median {statistics.median(seconds) * 1000:6.1f} ms  p90 {q[-1] * 1000:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-checkpoint-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        build_tree(ws, args.files)
        header = SessionHeader("bench", str(ws), "", "m", "auto", "", "")
        session = SessionStore.create(tmp / "sessions", ws, header)
        store = ShadowStore.open(tmp / "sessions" / "one.rewind", ws)
        assert store is not None, "no git on this host"
        recorder = Checkpointer(store, session, lambda: datetime.now(UTC), max_bytes=1 << 40)

        started = time.perf_counter()
        recorder.take(1, "tool")
        first = time.perf_counter() - started
        recorder.take(1, "tool")  # the index's stat data settles

        unchanged: list[float] = []
        changed: list[float] = []
        status: list[float] = []
        bash: list[float] = []
        target = ws / "pkg0" / "mod0" / "file0.py"
        for rep in range(args.reps):
            t = time.perf_counter()
            recorder.take(1, "tool")
            unchanged.append(time.perf_counter() - t)
            target.write_text(f"edit {rep}\n")
            t = time.perf_counter()
            recorder.take(1, "tool")
            changed.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(
                ["git", "status", "--porcelain"], cwd=ws, capture_output=True, check=True
            )
            status.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(["bash", "-c", "true"], check=True)
            bash.append(time.perf_counter() - t)
        session.close()
        # A second session of the same workspace, one file edited in between.
        target.write_text("between sessions\n")
        second = ShadowStore.open(tmp / "sessions" / "two.rewind", ws)
        assert second is not None
        started = time.perf_counter()
        snap = second.snapshot()
        seeded = time.perf_counter() - started
        kept = len(second.entries(snap.tree))
        print(f"tree: {args.files} files kept ({kept} in the snapshot), 400 ignored or skipped")
        print(f"first snapshot (whole tree into an empty store): {first * 1000:.0f} ms")
        print(f"first snapshot of a second session (seeded):     {seeded * 1000:.0f} ms")
        print(f"snapshot, unchanged        {ms(unchanged)}")
        print(f"snapshot, one file changed {ms(changed)}")
        print(f"git status (workspace)     {ms(status)}")
        print(f"bash -c true               {ms(bash)}")
        ratio = statistics.median(unchanged) / statistics.median(status)
        ratio_bash = statistics.median(unchanged) / statistics.median(bash)
        print(
            f"SUMMARY unchanged_median_ms={statistics.median(unchanged) * 1000:.1f} "
            f"changed_median_ms={statistics.median(changed) * 1000:.1f} "
            f"vs_git_status={ratio:.2f}x vs_bash_true={ratio_bash:.2f}x first_ms={first * 1000:.0f} "
            f"seeded_first_ms={seeded * 1000:.0f}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
