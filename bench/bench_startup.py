"""Start-up wall time of the installed ``reasonix`` console script.

1. ``reasonix --version`` (N runs; target median <= 150 ms);
2. a one-request ``reasonix run "hi"`` against the loopback fixture server
   (N runs; target median <= 500 ms): process start, imports, config, session
   file, one streamed request, exit;
3. side by side (issue 11's targets, as ratios, so a busy machine slows both
   sides alike): ``python -c pass``, the import of the libraries ``reasonix run``
   needs (``python -c "import httpx, pydantic, pydantic_settings, anyio, tomlkit"``),
   ``reasonix --version`` and ``reasonix run "hi"``, one of each in turn, N rounds;
   the ratios of the medians: run / libraries <= 1.25, run / pass <= 14,
   --version / pass <= 1.5; and, for information, the libraries' import with
   garbage collection paused as ``reasonix run`` pauses it while it starts;
4. ``python -X importtime`` of that ``reasonix run``: the imports that dominate.

Run: ``.venv/bin/python bench/bench_startup.py [--version-runs 20] [--run-runs 10] [--rounds 15]
[--before TREE]``
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REASONIX_BIN, bench_env, summary_ms, verdict, write_config

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply

VERSION_TARGET_MS = 150.0
RUN_TARGET_MS = 500.0
# Issue 11's start-up targets, as ratios of medians measured side by side.
LIBRARIES = "import httpx, pydantic, pydantic_settings, anyio, tomlkit"
# The same import with garbage collection paused and the heap frozen, as `reasonix
# run` starts (reasonix_core/startup_heap.py): run / this is Reasonix's own share
# alone, without what the pause saves on the libraries' import and at exit.
LIBRARIES_NO_GC = f"import gc; gc.disable(); {LIBRARIES}; gc.freeze()"
RUN_OVER_LIBRARIES = 1.25
RUN_OVER_PASS = 14.0
VERSION_OVER_PASS = 1.5
#: CPU seconds of every side-by-side run, by label (filled by side_by_side).
CPU_TIMES: dict[str, list[float]] = {}


def run_once(argv: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU is the child's user + system time, which
    other processes on a busy machine disturb far less than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def time_command(argv: list[str], *, cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    return [run_once(argv, cwd=cwd, env=env)[0] for _ in range(runs)]


def side_by_side(
    commands: dict[str, list[str]],
    *,
    cwd: Path,
    env: dict[str, str],
    rounds: int,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, list[float]]:
    """Wall times of each command, run one after the other in every round.

    Alternating spreads the load of other processes over all commands alike, so
    the ratios of the medians hold on a busy machine when the absolute times do not.
    ``envs``: a command's own environment instead of ``env``, by label.
    """
    envs = envs or {}
    walls: dict[str, list[float]] = {label: [] for label in commands}
    for label, argv in commands.items():  # warm-up: caches, bytecode
        run_once(argv, cwd=cwd, env=envs.get(label, env))
    for _ in range(rounds):
        for label, argv in commands.items():
            wall, cpu = run_once(argv, cwd=cwd, env=envs.get(label, env))
            walls[label].append(wall)
            CPU_TIMES.setdefault(label, []).append(cpu)
    return walls


def ratio_line(label: str, value: float, target: float) -> str:
    return f"  {label:<28} {value:5.2f} x   (target <= {target:g} x: {verdict(value, target)})"


def import_times(argv: list[str], *, cwd: Path, env: dict[str, str]) -> list[tuple[int, int, str]]:
    """(self_us, cumulative_us, module) for every import of one run."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"importtime run failed:\n{proc.stderr[-2000:]}")
    rows: list[tuple[int, int, str]] = []
    pattern = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")
    for line in proc.stderr.splitlines():
        m = pattern.match(line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), m.group(4)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version-runs", type=int, default=20)
    parser.add_argument("--run-runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=15, help="side-by-side rounds")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="TREE",
        help="also run this source tree's reasonix (PYTHONPATH=TREE) in the same rounds, "
        "e.g. an extracted `git archive` of an earlier commit",
    )
    args = parser.parse_args()

    if not REASONIX_BIN.exists():
        sys.exit(f"{REASONIX_BIN} not found: install with `.venv/bin/pip install -e .`")

    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        tmp_path = Path(tmp)
        home, workspace = tmp_path / "home", tmp_path / "ws"
        workspace.mkdir()
        # Headline figures: project bytecode cached, as on any normal install.
        modes: list[tuple[str, Path | None]] = [("bytecode cached", tmp_path / "pycache")]
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            modes.append(("PYTHONDONTWRITEBYTECODE=1 (as set in this shell)", None))
        results: dict[str, tuple[list[float], list[float]]] = {}

        with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:

            def responder(request: RecordedRequest) -> Reply:
                return Reply(reasoning="A greeting.", content="Hello! How can I help?")

            server.responder = responder
            write_config(home, server.base_url)
            version_argv = [str(REASONIX_BIN), "--version"]
            run_argv = [str(REASONIX_BIN), "run", "hi"]
            for label, pycache in modes:
                env = bench_env(home, pycache)
                print(f"== {label}")
                time_command(version_argv, cwd=workspace, env=env, runs=2)  # warm-up
                version = time_command(version_argv, cwd=workspace, env=env, runs=args.version_runs)
                print("reasonix --version")
                print("  " + summary_ms(version))
                time_command(run_argv, cwd=workspace, env=env, runs=1)  # warm-up
                before = len(server.requests)
                runs = time_command(run_argv, cwd=workspace, env=env, runs=args.run_runs)
                sent = len(server.requests) - before
                print('reasonix run "hi"  (one streamed request to the loopback fixture server)')
                print("  " + summary_ms(runs) + f"   requests served: {sent}")
                results[label] = (version, runs)

            headline_env = bench_env(home, modes[0][1])
            before = len(server.requests)
            commands = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "import libraries": [sys.executable, "-c", LIBRARIES],
                "libraries, no gc": [sys.executable, "-c", LIBRARIES_NO_GC],
                "reasonix --version": version_argv,
                'reasonix run "hi"': run_argv,
            }
            envs: dict[str, dict[str, str]] = {}
            if args.before is not None:
                tree_env = {**headline_env, "PYTHONPATH": str(args.before.resolve())}
                for label in ("reasonix --version", 'reasonix run "hi"'):
                    commands[f"{label} (before)"] = commands[label]
                    envs[f"{label} (before)"] = tree_env
            walls = side_by_side(
                commands, cwd=workspace, env=headline_env, rounds=args.rounds, envs=envs
            )
            served = len(server.requests) - before
            rows = import_times(run_argv, cwd=workspace, env=headline_env)

    medians = {label: statistics.median(w) * 1000 for label, w in walls.items()}
    print(f"\n== side by side ({modes[0][0]}), {args.rounds} rounds, one of each in turn")
    if args.before is not None:
        print(f"  (before: {args.before})")
    for label, values in walls.items():
        print(f"{label:<29} " + summary_ms(values))
    print(f"  (libraries: python -c {LIBRARIES!r}; requests served: {served})")
    run_libs = medians['reasonix run "hi"'] / medians["import libraries"]
    run_pass = medians['reasonix run "hi"'] / medians["python -c pass"]
    version_pass = medians["reasonix --version"] / medians["python -c pass"]
    print(ratio_line("run / import libraries", run_libs, RUN_OVER_LIBRARIES))
    print(ratio_line("run / python -c pass", run_pass, RUN_OVER_PASS))
    print(ratio_line("--version / python -c pass", version_pass, VERSION_OVER_PASS))
    own = medians['reasonix run "hi"'] / medians["libraries, no gc"]
    print(f"  {'run / libraries, no gc':<28} {own:5.2f} x   (information: Reasonix's own share)")
    cpu = {label: statistics.median(v) * 1000 for label, v in CPU_TIMES.items()}
    print("  CPU time (user + system) medians, the same runs:")
    print("    " + ", ".join(f"{label} {value:.1f} ms" for label, value in cpu.items()))
    for tag in ("", " (before)"):
        run, version = cpu.get(f'reasonix run "hi"{tag}'), cpu.get(f"reasonix --version{tag}")
        if run is not None and version is not None:
            print(
                f"    run{tag} / libraries {run / cpu['import libraries']:.2f} x, "
                f"/ pass {run / cpu['python -c pass']:.1f} x, "
                f"/ libraries no gc {run / cpu['libraries, no gc']:.2f} x; "
                f"--version{tag} / pass {version / cpu['python -c pass']:.2f} x"
            )
    if args.before is not None:
        run_before = medians['reasonix run "hi" (before)']
        version_before = medians["reasonix --version (before)"]
        print("  before, the same rounds:")
        for label, value, target in (
            (
                "run / import libraries",
                run_before / medians["import libraries"],
                RUN_OVER_LIBRARIES,
            ),
            ("run / python -c pass", run_before / medians["python -c pass"], RUN_OVER_PASS),
            (
                "--version / python -c pass",
                version_before / medians["python -c pass"],
                VERSION_OVER_PASS,
            ),
        ):
            print("  " + ratio_line(label, value, target))
        print(
            f"    {'run / libraries, no gc':<28} {run_before / medians['libraries, no gc']:5.2f} x"
        )

    total_us = sum(r[0] for r in rows)
    print(
        f'\npython -X importtime reasonix run "hi" (bytecode cached): {len(rows)} modules, '
        f"{total_us / 1000:.1f} ms of imports in total (self times summed)"
    )
    print("  top 10 by cumulative time:")
    for self_us, cum_us, name in sorted(rows, key=lambda r: -r[1])[:10]:
        print(f"    {cum_us / 1000:7.1f} ms  (self {self_us / 1000:5.1f} ms)  {name}")
    third_party = [r for r in rows if not r[2].startswith(("reasonix_core", "reasonix_tui"))]
    print("  top 10 by cumulative time, excluding reasonix_* modules:")
    for self_us, cum_us, name in sorted(third_party, key=lambda r: -r[1])[:10]:
        print(f"    {cum_us / 1000:7.1f} ms  (self {self_us / 1000:5.1f} ms)  {name}")
    loaded_textual = any(r[2] == "textual" or r[2].startswith("textual.") for r in rows)
    print(
        f"  textual imported by `reasonix run`: {'YES (regression!)' if loaded_textual else 'no'}"
    )

    version, runs = results[modes[0][0]]
    v_med = statistics.median(version) * 1000
    r_med = statistics.median(runs) * 1000
    print(
        f"\nSUMMARY startup ({modes[0][0]}): --version median {v_med:.1f} ms "
        f"(target <= {VERSION_TARGET_MS:.0f} ms: {verdict(v_med, VERSION_TARGET_MS)}); "
        f"run median {r_med:.1f} ms (target <= {RUN_TARGET_MS:.0f} ms: "
        f"{verdict(r_med, RUN_TARGET_MS)}); side by side: run/libraries "
        f"{run_libs:.2f} x ({verdict(run_libs, RUN_OVER_LIBRARIES)}), run/pass {run_pass:.1f} x "
        f"({verdict(run_pass, RUN_OVER_PASS)}), --version/pass {version_pass:.2f} x "
        f"({verdict(version_pass, VERSION_OVER_PASS)}); run/libraries-no-gc {own:.2f} x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
