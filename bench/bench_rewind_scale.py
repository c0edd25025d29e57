"""Rewind at repository scale: what checkpoints add to a bash step, through the real CLI.

    .venv/bin/python bench/bench_rewind_scale.py [--files 30000] [--steps 12] [--reps 3]

Generates a git repository of ``--files`` files under /tmp (about 20 files a
folder, 0.2-2 KB each, committed), then drives ``reasonix run`` (the installed
console script, a process of its own) against the loopback fixture server
(``reasonix_testkit.FixtureServer``, in a thread of this process). The scripted
model asks for ``--steps`` bash calls, each appending a line to a tracked file
(``echo N >> notes/log.txt``: every snapshot has one change to record), then
answers. The server notes when each request arrives: the time between two
requests is one step (answer streamed, parsed, the checkpoint, bash run,
transcript appended, next request built).

Figures (paired: the two sides of each ratio run interleaved in the same run):

- **step ratio**: median bash step with ``[checkpoints]`` on over the same step
  with ``enabled = false`` (target <= 1.3);
- **first-call wait**: the first bash step of the workspace's first session
  (an empty checkpoint store: the whole tree is new to it) minus the first bash
  step of a later session (target <= 1.5 s). Between the two the bench waits
  for the first session's background copy of the repository's blobs into the
  store to finish (printed), so the later sessions measure the steady state;
- **rewind check**: the bench then rewinds the last session to its first turn
  (``reasonix rewind 1 --scope code --force``) after a bash call deleted,
  created and modified files, and checks every one came back.

The generated tree and homes are deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from _common import REASONIX_BIN, bench_env, config_toml, verdict

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec

STEP_TARGET = 1.3
FIRST_TARGET_S = 1.5
_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def build_repo(root: Path, files: int) -> None:
    words = b"def class return import self value item total name index result "
    root.mkdir(parents=True)
    folders = max(1, files // 20)
    for i in range(files):
        folder = root / f"pkg{i % folders % 30}" / f"mod{i % folders}"
        if i < folders:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").write_bytes(words * (3 + i % 30) + b"%d\n" % i)
    (root / "notes").mkdir()
    (root / "notes" / "log.txt").write_text("log\n")
    (root / "notes" / "keep.txt").write_text("keep me\n")
    (root / ".gitignore").write_text("build/\n")
    git = lambda *a: subprocess.run(["git", *a], cwd=root, env=_GIT_ENV, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("add", "-A")
    git("-c", "gc.auto=0", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "tree")


class BashScript:
    """``steps`` bash calls, then an answer; records when each request arrived."""

    def __init__(self, steps: int, commands: list[str] | None = None) -> None:
        self.steps = steps
        self.commands = commands
        self.arrivals: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.arrivals.append(time.perf_counter())
        done = sum(1 for m in (request.json or {}).get("messages", ()) if m.get("role") == "assistant")
        if done >= self.steps:
            return Reply(content="Done.")
        command = self.commands[done] if self.commands else f"echo {done} >> notes/log.txt"
        return Reply(tool_calls=[ToolCallSpec("bash", json.dumps({"command": command}))])

    def intervals(self) -> list[float]:
        return [b - a for a, b in zip(self.arrivals, self.arrivals[1:], strict=False)]


#: ``--sandbox``: "enforce" (the default, bubblewrap around every command) or "off".
SANDBOX = {"mode": "enforce"}


def run_session(
    home: Path, ws: Path, steps: int, *, checkpoints: bool, commands: list[str] | None = None
) -> list[float]:
    """One ``reasonix run`` of ``steps`` bash calls; the step intervals (seconds)."""
    script = BashScript(steps, commands)
    with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:
        server.responder = script
        extra = "" if checkpoints else "\n[checkpoints]\nenabled = false\n"
        home.mkdir(parents=True, exist_ok=True)
        text = config_toml(server.base_url, extra)
        text = text.replace('bash = "off"', f'bash = "{SANDBOX["mode"]}"')
        (home / "config.toml").write_text(text, encoding="utf-8")
        argv = [str(REASONIX_BIN), "run", "--permission-mode", "yolo", "go"]
        proc = subprocess.run(argv, cwd=ws, env=bench_env(home), capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"reasonix run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    got = script.intervals()
    if len(got) != steps:
        raise SystemExit(f"expected {steps} steps, saw {len(got)}")
    return got


def rewind_check(home: Path, ws: Path) -> str:
    """A bash call deletes, creates and modifies; a code rewind puts all back."""
    victim = sorted((ws / "pkg1").rglob("*.py"))[0]
    deleted_bytes = victim.read_bytes()
    keep_before = (ws / "notes" / "keep.txt").read_bytes()
    rel = victim.relative_to(ws).as_posix()
    commands = [f"rm {rel} && echo new > notes/new.txt && echo changed >> notes/keep.txt"]
    run_session(home, ws, 1, checkpoints=True, commands=commands)
    assert not victim.exists() and (ws / "notes" / "new.txt").exists()
    proc = subprocess.run(
        [str(REASONIX_BIN), "rewind", "1", "--scope", "code", "-c", "--force", "--json"],
        cwd=ws, env=bench_env(home), capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        return f"FAILED: rewind exited {proc.returncode}: {proc.stderr[-500:]}"
    problems = []
    if not victim.is_file() or victim.read_bytes() != deleted_bytes:
        problems.append("the deleted file did not come back")
    if (ws / "notes" / "new.txt").exists():
        problems.append("the created file is still there")
    if (ws / "notes" / "keep.txt").read_bytes() != keep_before:
        problems.append("the modified file was not restored")
    return "ok (deleted, created and modified files restored)" if not problems else "FAILED: " + "; ".join(problems)


def wait_for_seed_copy(home: Path, timeout: float = 600) -> float:
    """Wait until the first session's background copy of the repository's blobs
    into the store has finished (no seed marker left); returns the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if not any((home / "sessions").rglob("checkpoint-objects/info/seed-*.lender")):
            break
        time.sleep(0.2)
    return time.perf_counter() - started


def store_size(home: Path) -> int:
    total = 0
    for folder in (home / "sessions").rglob("checkpoint-objects"):
        for path in folder.rglob("*"):
            if path.is_file():
                total += path.stat().st_size
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=30_000)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sandbox", choices=("enforce", "off"), default="enforce")
    args = parser.parse_args()
    SANDBOX["mode"] = args.sandbox
    if not REASONIX_BIN.exists():
        raise SystemExit(f"{REASONIX_BIN} not found: install with `.venv/bin/pip install -e .`")
    tmp = Path(tempfile.mkdtemp(prefix="bench-rewind-scale-"))
    try:
        ws = tmp / "ws"
        started = time.perf_counter()
        build_repo(ws, args.files)
        print(f"generated {args.files} files in {time.perf_counter() - started:.1f} s: {ws}")
        # First session vs a later one: the first bash call's step, paired by round.
        firsts: list[float] = []
        laters: list[float] = []
        on: list[float] = []
        off: list[float] = []
        copies: list[float] = []
        home = tmp / "home"
        for rep in range(args.reps):
            fresh = tmp / f"home-fresh-{rep}"
            first = run_session(fresh, ws, args.steps, checkpoints=True)
            # The steady state: the first session's background copy has landed.
            copies.append(wait_for_seed_copy(fresh))
            later = run_session(fresh, ws, args.steps, checkpoints=True)
            firsts.append(first[0])
            laters.append(later[0])
            on.extend(later[1:])
            off.extend(run_session(home, ws, args.steps, checkpoints=False)[1:])
            on.extend(run_session(fresh, ws, args.steps, checkpoints=True)[1:])
            if rep < args.reps - 1:
                shutil.rmtree(fresh)
        ratio = statistics.median(on) / statistics.median(off)
        wait = statistics.median(a - b for a, b in zip(firsts, laters, strict=True))
        print(
            f"== {args.files} files, {args.steps} bash steps a session, {args.reps} rounds, "
            f"sandbox {args.sandbox}"
        )
        print(f"  bash step, checkpoints off      median {statistics.median(off) * 1000:7.1f} ms")
        print(f"  bash step, checkpoints on       median {statistics.median(on) * 1000:7.1f} ms")
        print(f"  step ratio on/off               {ratio:7.2f}x   target <= {STEP_TARGET}x  {verdict(ratio, STEP_TARGET)}")
        print(f"  first bash step, first session  median {statistics.median(firsts) * 1000:7.1f} ms")
        print(f"  first bash step, later session  median {statistics.median(laters) * 1000:7.1f} ms")
        print(f"  first-session extra wait        {wait:7.2f} s    target <= {FIRST_TARGET_S} s  {verdict(wait, FIRST_TARGET_S)}")
        print(f"  seed copy still running after the first session: up to {max(copies):.1f} s more")
        last = tmp / f"home-fresh-{args.reps - 1}"
        print(f"  shared checkpoint objects       {store_size(last) / 1e6:7.1f} MB (workspace files: "
              f"{sum(p.stat().st_size for p in ws.rglob('*.py')) / 1e6:.1f} MB)")
        print(f"  rewind check                    {rewind_check(last, ws)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
