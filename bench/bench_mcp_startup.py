"""Does starting MCP servers delay the first request? (issue 5, target <= 100 ms extra)

Each measurement is a fresh Python process (so the MCP SDK is not already imported)
that opens a session the way the TUI does - ``open_runtime`` with an interactive
approver, so nothing waits for MCP - and sends one prompt to the loopback fixture
server. The figure is the time from the start of ``open_runtime`` to the moment the
fixture server receives the first request, with:

- ``baseline``: no MCP server declared;
- ``tui``: three stdio servers declared (the example plugin, three times), still
  starting when the request goes out (the script checks that);
- ``headless``: the same three servers, as ``reasonix run`` opens them: it waits
  until they are ready (each bounded by its start-up timeout), so scripts can rely
  on their tools. Reported for information; not part of the target.

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

from _common import ROOT, bench_env, summary_ms, verdict, write_config

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply

TARGET_EXTRA_MS = 100.0
EXAMPLE = ROOT / "examples" / "reasonix-plugin-example" / "server.py"
SERVERS = ("alpha", "beta", "gamma")


def declare(workspace: Path, count: int) -> None:
    text = ""
    for name in SERVERS[:count]:
        text += (
            f'[[mcp.servers]]\nname = "{name}"\ncommand = {json.dumps(sys.executable)}\n'
            f"args = [{json.dumps(str(EXAMPLE))}]\n\n"
        )
    (workspace / "reasonix.toml").write_text(text, encoding="utf-8")


def child(mode: str, workspace: Path) -> None:
    """One measurement: print {"t0": monotonic start, "phases": [...]} as JSON."""
    import anyio

    from reasonix_core.agent.builder import RunSettings, open_runtime
    from reasonix_core.permission.approver import FailClosedApprover

    class TuiApprover(FailClosedApprover):
        interactive = True

    approver = FailClosedApprover() if mode == "headless" else TuiApprover()
    out: dict[str, object] = {}

    async def main() -> None:
        out["t0"] = time.monotonic()
        # The servers are declared in the workspace's reasonix.toml: a project's MCP
        # servers start only in a trusted folder (as with `reasonix run --trust-project`).
        settings = RunSettings(workspace=workspace, trust_project=True)
        async with open_runtime(settings, approver=approver) as rt:
            async for event in rt.agent.run("hi"):
                if event.kind == "step_started" and "phases" not in out:
                    out["phases"] = [s.phase for s in rt.mcp.status()] if rt.mcp else []

    anyio.run(main)
    sys.stdout.write(json.dumps(out) + "\n")


def measure(
    mode: str, runs: int, base: Path, server: FixtureServer, arrivals: list[float]
) -> list[float]:
    workspace = base / f"ws-{mode}"
    workspace.mkdir(exist_ok=True)
    declare(workspace, 0 if mode == "baseline" else len(SERVERS))
    env = bench_env(base / "home", pycache=base / "pycache")
    values: list[float] = []
    for i in range(runs + 1):  # the first run warms the bytecode cache
        before = len(arrivals)
        proc = subprocess.run(
            [sys.executable, __file__, "--child", mode, str(workspace)],
            env=env,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0:
            sys.exit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        if len(arrivals) != before + 1:
            sys.exit(f"{mode}: expected one request, got {len(arrivals) - before}")
        if mode != "baseline" and len(data["phases"]) != len(SERVERS):
            sys.exit(f"{mode}: expected {len(SERVERS)} MCP servers, got {data['phases']}")
        if mode == "tui" and any(p not in ("starting", "pending") for p in data["phases"]):
            sys.exit(
                f"tui: the servers were not still starting at the first request: {data['phases']}"
            )
        if mode == "headless" and any(p != "ready" for p in data["phases"]):
            sys.exit(f"headless: servers not ready at the first request: {data['phases']}")
        if i:
            values.append(arrivals[-1] - data["t0"])
    return values


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], Path(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()

    arrivals: list[float] = []

    def responder(request: RecordedRequest) -> Reply:
        arrivals.append(time.monotonic())  # CLOCK_MONOTONIC: comparable across processes
        return Reply(content="ok")

    with (
        tempfile.TemporaryDirectory(prefix="reasonix-bench-mcp-") as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=None) as server,
    ):
        base = Path(tmp)
        server.responder = responder
        write_config(base / "home", server.base_url)
        results: dict[str, list[float]] = {}
        for mode in ("baseline", "tui", "headless"):
            results[mode] = measure(mode, args.runs, base, server, arrivals)
            print(f"{mode:9} open_runtime -> first request: {summary_ms(results[mode])}")

    base_ms = statistics.median(results["baseline"]) * 1000
    tui_ms = statistics.median(results["tui"]) * 1000
    extra = tui_ms - base_ms
    print(
        f"\nextra time to the first request with {len(SERVERS)} MCP servers still starting: "
        f"{extra:+.1f} ms (target <= {TARGET_EXTRA_MS:.0f} ms: {verdict(extra, TARGET_EXTRA_MS)})"
    )
    print(
        f"headless (waits for the servers): {statistics.median(results['headless']) * 1000:.0f} ms"
    )
    print(
        f"SUMMARY mcp_startup baseline_ms={base_ms:.1f} tui_ms={tui_ms:.1f} extra_ms={extra:.1f} "
        f"headless_ms={statistics.median(results['headless']) * 1000:.1f} cpus={os.cpu_count()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
