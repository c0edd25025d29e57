"""What skills cost a session: discovery at start-up and the index in the prefix.

1. In process: ``load_catalog`` for a workspace with 0, 20 and 200 skills
   (median of N calls; the 0 case is the stat of the four roots and nothing else);
2. side by side: ``reasonix run "hi"`` in a workspace with no skills folder, with 20
   skills and with 200 skills (the index is capped), one of each in turn, N rounds
   against the loopback fixture server; the ratios of the medians to the run
   without skills;
3. the size of the index each session sends (characters of the system prompt's
   ``# Skills`` section), which the prompt cache serves after the first request.

Run: ``.venv/bin/python bench/bench_skills.py [--rounds 10] [--calls 50]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import REASONIX_BIN, bench_env, summary_ms, write_config

from reasonix_core.skills import load_catalog
from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply

SIZES = (0, 20, 200)


def make_workspace(root: Path, count: int) -> Path:
    workspace = root / f"ws-{count}"
    for i in range(count):
        folder = workspace / ".reasonix" / "skills" / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:03d}\ndescription: Does task number {i} for the project. "
            "Use when the user asks for that task.\nallowed-tools: read_file, grep\n---\n\n"
            + "Step one. Step two. Step three.\n"
            * 20,
            encoding="utf-8",
        )
    workspace.mkdir(exist_ok=True)
    return workspace


def time_run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    import subprocess

    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="side-by-side rounds")
    parser.add_argument("--calls", type=int, default=50, help="in-process load_catalog calls")
    args = parser.parse_args()
    if not REASONIX_BIN.exists():
        sys.exit(f"{REASONIX_BIN} not found: install with `.venv/bin/pip install -e .`")

    with tempfile.TemporaryDirectory(prefix="reasonix-bench-skills-") as tmp:
        tmp_path = Path(tmp)
        home, user = tmp_path / "home", tmp_path / "user"
        user.mkdir()
        workspaces = {n: make_workspace(tmp_path, n) for n in SIZES}

        print(f"== load_catalog in process, median of {args.calls} calls")
        for n, workspace in workspaces.items():
            walls = []
            for _ in range(args.calls):
                started = time.perf_counter()
                catalog = load_catalog(workspace, home, user)
                walls.append(time.perf_counter() - started)
            print(
                f"  {n:>3} skills: {statistics.median(walls) * 1000:7.2f} ms   index "
                f"{len(catalog.index.text):>6} chars, {len(catalog.index.omitted)} left out"
            )

        with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:

            def responder(request: RecordedRequest) -> Reply:
                return Reply(content="Hello!")

            server.responder = responder
            write_config(home, server.base_url)
            env = bench_env(home, tmp_path / "pycache")
            env["HOME"] = str(user)
            argv = [str(REASONIX_BIN), "run", "hi"]
            for workspace in workspaces.values():  # warm-up: bytecode, caches
                time_run(argv, workspace, env)
            walls: dict[int, list[float]] = {n: [] for n in SIZES}
            for _ in range(args.rounds):
                for n, workspace in workspaces.items():
                    walls[n].append(time_run(argv, workspace, env))
            systems = {}
            for request in server.requests[-len(SIZES) :]:
                system = json.loads(request.body)["messages"][0]["content"]
                systems[system.count("\n- skill-")] = system

    print(f'\n== reasonix run "hi", side by side, {args.rounds} rounds, one of each in turn')
    base = statistics.median(walls[0])
    for n in SIZES:
        median = statistics.median(walls[n])
        print(f"  {n:>3} skills: " + summary_ms(walls[n]) + f"   ratio {median / base:.3f} x")
    for listed, system in sorted(systems.items()):
        index = system[system.find("# Skills") :] if "# Skills" in system else ""
        print(f"  system prompt with {listed} index lines: {len(index)} chars of index")
    return 0


if __name__ == "__main__":
    sys.exit(main())
