"""Does declaring MCP servers delay the first request of ``reasonix run``? (issue 15)

Target: the first model request leaves at most **1.1 x** as late with 1 or 6 MCP
servers declared as with none. ``reasonix run`` never waits for servers before its
first request (the ``use_capability`` proxy keeps the prefix independent of them; a
call to a server waits for it), and the MCP SDK is imported in a worker thread.

Each measurement is a real ``reasonix run "hi" --trust-project`` subprocess (the
installed entry point, a fresh interpreter) against the loopback fixture server; the
figure is the time from spawning the process to the fixture server receiving the
first request (CLOCK_MONOTONIC, comparable across processes). The servers are the
example plugin (a Python stdio server importing the MCP SDK); the modes are
interleaved round by round so that load on the machine hits them alike.

Run: ``.venv/bin/python bench/bench_mcp_startup.py [--runs 10]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REASONIX_BIN, ROOT, bench_env, summary_ms, verdict, write_config

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply

TARGET_RATIO = 1.1
EXAMPLE = ROOT / "examples" / "reasonix-plugin-example" / "server.py"
COUNTS = (0, 1, 6)


def declare(workspace: Path, count: int) -> None:
    text = ""
    for i in range(count):
        text += (
            f'[[mcp.servers]]\nname = "plugin{i}"\ncommand = {json.dumps(sys.executable)}\n'
            f"args = [{json.dumps(str(EXAMPLE))}]\n\n"
        )
    (workspace / "reasonix.toml").write_text(text, encoding="utf-8")


def one_run(workspace: Path, env: dict[str, str], arrivals: list[float]) -> float:
    before = len(arrivals)
    started = time.monotonic()
    proc = subprocess.run(
        [str(REASONIX_BIN), "run", "hi", "--trust-project"],
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        sys.exit(f"run failed in {workspace.name}:\n{proc.stderr[-3000:]}")
    if len(arrivals) != before + 1:
        sys.exit(f"{workspace.name}: expected one request, got {len(arrivals) - before}")
    return arrivals[before] - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()

    arrivals: list[float] = []

    def responder(request: RecordedRequest) -> Reply:
        arrivals.append(time.monotonic())
        return Reply(content="ok")

    with (
        tempfile.TemporaryDirectory(prefix="reasonix-bench-mcp-") as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=None) as server,
    ):
        base = Path(tmp)
        server.responder = responder
        write_config(base / "home", server.base_url)
        env = bench_env(base / "home", pycache=base / "pycache")
        workspaces = {}
        for count in COUNTS:
            workspace = base / f"ws-{count}"
            workspace.mkdir()
            declare(workspace, count)
            workspaces[count] = workspace
        results: dict[int, list[float]] = {count: [] for count in COUNTS}
        for round_ in range(args.runs + 1):  # the first round warms the bytecode cache
            for count in COUNTS:
                value = one_run(workspaces[count], env, arrivals)
                if round_:
                    results[count].append(value)

    base_ms = statistics.median(results[0]) * 1000
    for count in COUNTS:
        median_ms = statistics.median(results[count]) * 1000
        ratio = median_ms / base_ms
        status = "" if count == 0 else f"  ratio {ratio:.2f} x ({verdict(ratio, TARGET_RATIO)})"
        print(f"{count} MCP servers: spawn -> first request {summary_ms(results[count])}{status}")
    medians = {c: statistics.median(results[c]) * 1000 for c in COUNTS}
    print(
        "SUMMARY mcp_startup "
        + " ".join(f"servers{c}_ms={medians[c]:.1f}" for c in COUNTS)
        + " "
        + " ".join(f"ratio{c}={medians[c] / base_ms:.3f}" for c in COUNTS[1:])
        + f" target={TARGET_RATIO} cpus={os.cpu_count()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
