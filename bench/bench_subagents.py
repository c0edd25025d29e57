"""Do a fleet's children really run at the same time? Six read-only children against
an instant loopback provider, side by side with each child alone.

The session is built by ``open_runtime`` from a temporary ``REASONIX_HOME`` and
workspace, exactly as ``reasonix run`` builds it, and every child goes through the
one runner (``SubagentRunner.run``). The scripted "model" answers at once: each
child makes ``STEPS - 1`` cheap read-only tool calls (``read_file`` of a one-line
file, ``ls`` of a one-file folder), then a short answer.

- alone: each of the six children run by itself (``runner.run``), one after the
  other; the slowest of them is the reference;
- fleet: the six as one ``fleet`` call (``FleetTool``: preflight, the scheduler,
  the session's slots, the children's events forwarded into a metrics sink as in
  ``reasonix run --metrics``).

    ratio = fleet wall / slowest single child's wall      target <= 1.5

Both are measured in the same process, alternately, ``--reps`` times; the
median ratio is reported (and every rep's). The server runs in its own process
by default (``--server process``: as a remote API, it does not share this
process's GIL); ``--server thread`` puts it in a thread of this process.

What the ratio shows: with an instant provider a child's wall time is the
harness's own work (building and encoding requests, parsing the stream, running
the tools, writing the transcript) plus the loopback round trips. The round
trips overlap across children; the harness's CPU work cannot (one event loop),
so the ratio is bounded below by how CPU-bound one child is. A real provider
spends seconds per request where this one spends microseconds, so real fleets
overlap far better than this bench.

Run: ``.venv/bin/python bench/bench_subagents.py [--children 6] [--steps 8]
[--reps 5] [--server process|thread]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from _common import tool_loop_server, use_env, verdict, write_config

from reasonix_core import events as ev
from reasonix_core.agent.builder import RunSettings, open_runtime
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.subagent.runner import SubagentRunner
from reasonix_core.subagent.tools import FleetTool
from reasonix_core.tool.base import current_call_id

TARGET = 1.5


def prompt(k: int) -> str:
    return f"CHILD-{k}: look at tiny.txt and the folder listing, then say what the file says."


async def one_rep(home: Path, workspace: Path, children: int) -> tuple[list[float], float]:
    """Each child alone, then all of them as one fleet; wall seconds."""
    settings = RunSettings(workspace=workspace, home=home)
    async with open_runtime(settings, approver=FailClosedApprover()) as rt:
        ctx = rt.agent.tool_context
        runner = ctx.subagents.runner()  # type: ignore[union-attr]  # the session's Delegation
        assert isinstance(runner, SubagentRunner)
        sink = MetricsSink(home / "metrics.json")

        async def forward(event: ev.Event) -> None:
            sink.record(event)

        ctx.child_events = forward
        alone: list[float] = []
        for k in range(children):
            started = time.perf_counter()
            result = await runner.run(runner.spec(prompt(k), read_only=True), emit=forward)
            alone.append(time.perf_counter() - started)
            assert result.ok, result.render()

        items = [{"id": f"c{k}", "prompt": prompt(k), "read_only": True} for k in range(children)]
        token = current_call_id.set("call_fleet")
        try:
            started = time.perf_counter()
            out = await FleetTool().execute({"items": items}, ctx)
            fleet = time.perf_counter() - started
        finally:
            current_call_id.reset(token)
        assert not out.is_error, out.text
        assert sink.metrics.subagent_runs == 2 * children
        sink.finish("success")
    return alone, fleet


def measure(mode: str, children: int, steps: int, reps: int, delay: float, root: Path) -> float:
    rows: list[tuple[float, float, float, float]] = []
    for rep in range(reps + 1):  # the first is a warm-up (imports, first connections)
        tag = f"{mode}-{delay}-{rep}"
        home, workspace = root / f"home-{tag}", root / f"ws-{tag}"
        workspace.mkdir(parents=True)
        (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
        use_env(home)
        with tool_loop_server(mode, steps, delay) as url:
            write_config(home, url)
            alone, fleet = anyio.run(one_rep, home, workspace, children)
        if rep:
            rows.append((max(alone), statistics.median(alone), sum(alone), fleet))
    ratios = sorted(f / slowest for slowest, _, _, f in rows)
    median = statistics.median(ratios)
    pace = f"{delay * 1000:g} ms between stream events" if delay else "instant"
    print(
        f"== server in a {mode}, {pace}: {children} read-only children of {steps} steps, "
        f"{reps} reps"
    )
    for slowest, typical, total, fleet in rows:
        print(
            f"  alone: slowest {slowest * 1000:7.1f} ms (median {typical * 1000:6.1f} ms, "
            f"one after another {total * 1000:7.1f} ms)   fleet {fleet * 1000:7.1f} ms   "
            f"ratio {fleet / slowest:4.2f}"
        )
    serial = statistics.median(f / total for _, _, total, f in rows)
    print(f"  median ratio {median:.2f}   (all: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"  median fleet / one after another {serial:.2f}")
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=6)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--server", choices=("both", "process", "thread"), default="process")
    parser.add_argument(
        "--delay",
        type=float,
        default=0.01,
        help="also measure a model that waits this many seconds between stream events "
        "(0: only the instant one)",
    )
    args = parser.parse_args()
    modes = ["process", "thread"] if args.server == "both" else [args.server]
    results: dict[str, float] = {}
    paced = 0.0
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        for mode in modes:
            results[mode] = measure(mode, args.children, args.steps, args.reps, 0.0, Path(tmp))
        if args.delay > 0:
            paced = measure(modes[0], args.children, args.steps, args.reps, args.delay, Path(tmp))
    head = modes[0]
    ratio = results[head]
    print(
        "SUMMARY "
        + json.dumps(
            {
                "bench": "subagents",
                "children": args.children,
                "steps": args.steps,
                "server": head,
                "fleet_over_slowest_child": round(ratio, 2),
                "paced_delay_s": args.delay,
                "paced_fleet_over_slowest_child": round(paced, 2),
            }
        )
        + f"; target <= {TARGET} (instant): {verdict(ratio, TARGET)}"
        + (f", paced: {verdict(paced, TARGET)}" if args.delay > 0 else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
