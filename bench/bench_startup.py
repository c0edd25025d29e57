"""Start-up wall time of the installed ``reasonix`` console script.

1. ``reasonix --version`` (N runs; target median <= 150 ms);
2. a one-request ``reasonix run "hi"`` against the loopback fixture server
   (N runs; target median <= 500 ms): process start, imports, config, session
   file, one streamed request, exit;
3. ``python -X importtime`` of that ``reasonix run``: the imports that dominate.

Run: ``.venv/bin/python bench/bench_startup.py [--version-runs 20] [--run-runs 10]``
"""

from __future__ import annotations

import argparse
import os
import re
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


def time_command(argv: list[str], *, cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    walls: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - started)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    return walls


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

            rows = import_times(run_argv, cwd=workspace, env=bench_env(home, modes[0][1]))

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
        f"{verdict(r_med, RUN_TARGET_MS)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
