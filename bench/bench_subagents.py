"""Do a fleet's children really run at the same time? Six read-only children against
an instant loopback provider, side by side with each child alone.

The session is built by ``build_session`` from a temporary ``REASONIX_HOME`` and
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
process's GIL); ``--server thread`` puts it in a thread of this process. It keeps
connections alive between streamed answers, as a real API does
(``--close-streams``: the fixture's default, a new connection per request).

Beside the walls, the CPU time this process spends (``time.process_time``): with
the server in its own process that is the harness's own work. Six children's
CPU work cannot overlap on one event loop, so whatever the scheduling

    fleet wall >= children x CPU of one child alone
    floor = children x CPU of a child / the slowest child's wall

and the ratio cannot go below that floor; the bench prints it next to the ratio.

What the ratio shows: with an instant provider a child's wall time is the
harness's own work (building and encoding requests, parsing the stream, running
the tools, writing the transcript) plus the loopback round trips. The round
trips overlap across children; the harness's CPU work cannot (one event loop),
so the ratio is bounded below by how CPU-bound one child is (the floor above). A
real provider spends seconds per request where this one spends microseconds, so
real fleets overlap far better than this bench (``--delay``: a paced provider).

Run: ``.venv/bin/python bench/bench_subagents.py [--children 6] [--steps 8]
[--reps 5] [--server process|thread] [--close-streams]``
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
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_core.subagent.runner import SubagentRunner
from reasonix_core.subagent.tools import FleetTool
from reasonix_core.tool.base import current_call_id

TARGET = 1.5


def prompt(k: int) -> str:
    return f"CHILD-{k}: look at tiny.txt and the folder listing, then say what the file says."


async def one_rep(
    home: Path, workspace: Path, children: int
) -> tuple[list[float], list[float], float, float]:
    """Each child alone, then all of them as one fleet: the children's walls and
    CPU times alone, the fleet's wall and CPU time (seconds)."""
    settings = RunSettings(workspace=workspace, home=home)
    async with build_session(settings, approver=FailClosedApprover()) as rt:
        ctx = rt.agent.tool_context
        runner = ctx.subagents.runner()  # type: ignore[union-attr]  # the session's Delegation
        assert isinstance(runner, SubagentRunner)
        sink = MetricsSink(home / "metrics.json")

        async def forward(event: ev.Event) -> None:
            sink.record(event)

        ctx.child_events = forward
        alone: list[float] = []
        cpu: list[float] = []
        for k in range(children):
            started, cpu_started = time.perf_counter(), time.process_time()
            result = await runner.run(runner.spec(prompt(k), read_only=True), emit=forward)
            alone.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            assert result.ok, result.render()

        items = [{"id": f"c{k}", "prompt": prompt(k), "read_only": True} for k in range(children)]
        token = current_call_id.set("call_fleet")
        try:
            started, cpu_started = time.perf_counter(), time.process_time()
            out = await FleetTool().execute({"items": items}, ctx)
            fleet = time.perf_counter() - started
            fleet_cpu = time.process_time() - cpu_started
        finally:
            current_call_id.reset(token)
        assert not out.is_error, out.text
        assert sink.metrics.subagent_runs == 2 * children
        sink.finish("success")
    return alone, cpu, fleet, fleet_cpu


def measure(
    mode: str, children: int, steps: int, reps: int, delay: float, root: Path, keep_alive: bool
) -> tuple[float, float]:
    """(median ratio, median CPU floor) of ``reps`` reps after a warm-up."""
    rows: list[tuple[float, float, float, float, float]] = []
    cpu_shares: list[float] = []
    for rep in range(reps + 1):  # the first is a warm-up (imports, first connections)
        tag = f"{mode}-{delay}-{rep}"
        home, workspace = root / f"home-{tag}", root / f"ws-{tag}"
        workspace.mkdir(parents=True)
        (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
        use_env(home)
        with tool_loop_server(mode, steps, delay, keep_alive=keep_alive) as url:
            write_config(home, url)
            alone, cpu, fleet, fleet_cpu = anyio.run(one_rep, home, workspace, children)
        if rep:
            cpu_shares.append(fleet_cpu / sum(cpu))
            cpu_child = statistics.median(cpu)
            rows.append((max(alone), statistics.median(alone), sum(alone), fleet, cpu_child))
    ratios = sorted(f / slowest for slowest, _, _, f, _ in rows)
    median = statistics.median(ratios)
    floors = sorted(children * c / slowest for slowest, _, _, _, c in rows)
    floor = statistics.median(floors)
    pace = f"{delay * 1000:g} ms between stream events" if delay else "instant"
    conns = "connections kept alive" if keep_alive else "a connection per request"
    print(
        f"== server in a {mode}, {pace}, {conns}: {children} read-only children of "
        f"{steps} steps, {reps} reps"
    )
    for slowest, typical, total, fleet, cpu_child in rows:
        print(
            f"  alone: slowest {slowest * 1000:7.1f} ms (median {typical * 1000:6.1f} ms, "
            f"CPU {cpu_child * 1000:6.1f} ms; one after another {total * 1000:7.1f} ms)   "
            f"fleet {fleet * 1000:7.1f} ms   ratio {fleet / slowest:4.2f}   "
            f"floor {children * cpu_child / slowest:4.2f}"
        )
    serial = statistics.median(f / total for _, _, total, f, _ in rows)
    print(f"  median ratio {median:.2f}   (all: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(
        f"  median CPU floor {floor:.2f} (= {children} x a child's CPU / the slowest "
        f"child's wall; all: {', '.join(f'{r:.2f}' for r in floors)})"
    )
    print(f"  median fleet / one after another {serial:.2f}")
    print(
        f"  median fleet CPU / the children's CPU alone {statistics.median(cpu_shares):.2f}"
        " (above 1: what running together adds)"
    )
    return median, floor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=6)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--server", choices=("both", "process", "thread"), default="process")
    parser.add_argument(
        "--close-streams",
        action="store_true",
        help="a new connection per request (the fixture's default) instead of keep-alive",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.01,
        help="also measure a model that waits this many seconds between stream events "
        "(0: only the instant one)",
    )
    args = parser.parse_args()
    modes = ["process", "thread"] if args.server == "both" else [args.server]
    keep_alive = not args.close_streams
    results: dict[str, tuple[float, float]] = {}
    paced = 0.0
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        for mode in modes:
            results[mode] = measure(
                mode, args.children, args.steps, args.reps, 0.0, Path(tmp), keep_alive
            )
        if args.delay > 0:
            paced, _ = measure(
                modes[0], args.children, args.steps, args.reps, args.delay, Path(tmp), keep_alive
            )
    head = modes[0]
    ratio, floor = results[head]
    print(
        "SUMMARY "
        + json.dumps(
            {
                "bench": "subagents",
                "children": args.children,
                "steps": args.steps,
                "server": head,
                "keep_alive": keep_alive,
                "fleet_over_slowest_child": round(ratio, 2),
                "cpu_floor": round(floor, 2),
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
