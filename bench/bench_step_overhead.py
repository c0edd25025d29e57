"""Harness overhead per step with an instant provider and instant tools.

Drives the real ``Agent`` (built by ``reasonix_core.session.build.build_session``
from a temporary ``REASONIX_HOME`` and workspace, exactly as ``reasonix run``
builds it) through one turn of N steps against the loopback fixture server.
The scripted "model" answers at once: a ``read_file`` of a one-line file or an
``ls`` of a one-file folder on every step but the last, a short final answer
on the last. Every event goes through a ``MetricsSink`` writing a metrics file,
as in ``reasonix run --metrics``.

Baseline: the very request bodies the Agent sent (captured from the provider),
replayed in order with bare ``httpx`` to a fresh server with the same script,
reading each streamed response to the end without parsing it. That is the time
spent in the server, on loopback and in httpx's transport.

    harness overhead per step = (agent turn wall - sum of baseline walls) / N

What the overhead therefore includes: building and JSON-encoding each request
(the whole growing transcript, every step), SSE line splitting and JSON
decoding of every chunk, tool-call accumulation, event objects, the permission
gate, argument validation, running the tool (a real file read / directory
listing, in a worker thread), result bounding, the session JSONL append and
flush per message, and the metrics sink. What it excludes: process start-up,
config loading and ``build_session`` (see bench_startup.py).

The server runs in its own process by default (``--server process``: the
harness does not share a GIL with it, as with a real remote API); ``--server
thread`` runs it in a thread of this process, where the harness and the server
take turns on the GIL, a stricter (pessimistic) setting. By default both are
measured; the summary line reports the process figure.

Run: ``.venv/bin/python bench/bench_step_overhead.py [--steps 50] [--reps 5]
[--server both|process|thread] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import io
import pstats
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
from _common import tool_loop_server, use_env, verdict, write_config

from reasonix_core import events as ev
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.provider.base import PreparedRequest
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings

TARGET_MS = 5.0
PROMPT = "Look at tiny.txt and the folder listing a few times, then tell me what the file says."


@dataclass
class Turn:
    wall: float
    marks: list[float]  # perf_counter at each StepStarted, then at the end of the turn
    sent: list[PreparedRequest]
    parts: dict[str, float]  # seconds spent in instrumented parts of the harness


def _timed(parts: dict[str, float], key: str, fn: Any) -> Any:
    """Wrap a sync or async callable so its wall time adds up in ``parts[key]``."""
    if inspect.iscoroutinefunction(fn):

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                parts[key] += time.perf_counter() - started

        return timed_async

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            parts[key] += time.perf_counter() - started

    return timed


async def agent_turn(home: Path, workspace: Path, base_url: str, steps: int) -> Turn:
    write_config(home, base_url)
    settings = RunSettings(workspace=workspace, home=home)
    async with build_session(settings, approver=FailClosedApprover()) as rt:
        agent = rt.agent
        provider = agent.provider
        sent: list[PreparedRequest] = []
        original = provider.stream

        def capture(prepared: PreparedRequest):  # type: ignore[no-untyped-def]
            sent.append(prepared)
            return original(prepared)

        provider.stream = capture  # type: ignore[method-assign]
        # Instrument the parts of a step that are easy to isolate (public seams only).
        parts = dict.fromkeys(("prepare", "gate", "tool", "session"), 0.0)
        provider.prepare = _timed(parts, "prepare", provider.prepare)  # type: ignore[method-assign]
        agent.tools.call = _timed(parts, "tool", agent.tools.call)  # type: ignore[method-assign]
        agent.session.append = _timed(parts, "session", agent.session.append)  # type: ignore[method-assign]
        if agent.gate is not None:
            agent.gate.authorize = _timed(parts, "gate", agent.gate.authorize)
        sink = MetricsSink(home / "metrics.json")
        marks: list[float] = []
        finished: ev.TurnFinished | None = None
        started = time.perf_counter()
        async with aclosing(agent.run(PROMPT)) as events:
            async for event in events:
                sink.record(event)
                if isinstance(event, ev.StepStarted):
                    marks.append(time.perf_counter())
                elif isinstance(event, ev.TurnFinished):
                    finished = event
                elif isinstance(event, ev.TurnFailed):
                    raise SystemExit(f"the turn failed: {event.error}")
        wall = time.perf_counter() - started
        marks.append(started + wall)
        sink.finish("success")
    if finished is None or finished.steps != steps or len(sent) != steps:
        raise SystemExit(f"expected {steps} steps, got {finished and finished.steps} / {len(sent)}")
    return Turn(wall=wall, marks=marks, sent=sent, parts=parts)


async def replay(base_url: str, sent: list[PreparedRequest]) -> list[float]:
    """Bare httpx: POST each recorded body, read the stream to the end, nothing else."""
    url = base_url + "/chat/completions"
    walls: list[float] = []
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        for prepared in sent:
            started = time.perf_counter()
            async with client.stream(
                "POST", url, content=prepared.body, headers=list(prepared.headers)
            ) as response:
                async for _ in response.aiter_bytes():
                    pass
            walls.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"baseline request answered {response.status_code}")
    return walls


def measure(mode: str, steps: int, reps: int, root: Path) -> dict[str, float]:
    home, workspace = root / f"home-{mode}", root / f"ws-{mode}"
    workspace.mkdir()
    (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
    use_env(home)
    turns: list[dict[str, float]] = []
    for rep in range(reps + 1):  # the first repetition warms up and is not counted
        with tool_loop_server(mode, steps) as url:
            turn = anyio.run(agent_turn, home, workspace, url, steps)
        with tool_loop_server(mode, steps) as url:
            base = anyio.run(replay, url, turn.sent)
        if rep == 0:
            continue
        # Step i runs from its StepStarted to the next one: request i on the
        # wire, its tool call, and building request i+1.
        intervals = [b - a for a, b in zip(turn.marks, turn.marks[1:], strict=False)]
        over = [i - b for i, b in zip(intervals, base, strict=True)]
        row = {
            "agent": turn.wall / steps,
            "base": sum(base) / steps,
            "over": (turn.wall - sum(base)) / steps,
            "first": over[0],
            "steady": statistics.median(over[1:]),
            "early": statistics.median(over[1:11]),
            "late": statistics.median(over[-10:]),
        }
        row.update({k: v / steps for k, v in turn.parts.items()})
        turns.append({k: v * 1000 for k, v in row.items()})
    turns.sort(key=lambda r: r["over"])
    out = turns[(len(turns) - 1) // 2]  # the median turn (by overhead): its figures add up
    spread = f"{turns[0]['over']:.2f} .. {turns[-1]['over']:.2f}"
    known = out["prepare"] + out["gate"] + out["tool"] + out["session"]
    print(f"== server in a {mode}: {reps} turns of {steps} steps; the median turn by overhead")
    print(f"  agent wall per step (turn wall / {steps})   {out['agent']:6.2f} ms")
    print(f"  bare httpx baseline per step           {out['base']:6.2f} ms")
    print(
        f"  harness overhead per step (all in)     {out['over']:6.2f} ms   (all turns: {spread} ms)"
    )
    print(f"    build + encode the request            {out['prepare']:6.2f} ms")
    print(f"    permission gate                       {out['gate']:6.2f} ms")
    print(f"    tool execution (worker thread)        {out['tool']:6.2f} ms")
    print(f"    session JSONL appends                 {out['session']:6.2f} ms")
    print(
        f"    the rest                              {out['over'] - known:6.2f} ms   (SSE and JSON "
        "parsing, events, metrics sink, scheduling, httpx beyond the bare read)"
    )
    print(
        f"  step 1 alone                           {out['first']:6.2f} ms   "
        "(the provider's first request creates its httpx client and TLS context)"
    )
    print(f"  typical step (median of steps 2..{steps})    {out['steady']:6.2f} ms")
    print(
        f"  median at steps 2-11: {out['early']:.2f} ms, at steps {steps - 9}-{steps}: "
        f"{out['late']:.2f} ms   (request body {len(turn.sent[0].body)} -> "
        f"{len(turn.sent[-1].body)} bytes)"
    )
    return out


def profile(steps: int, root: Path) -> None:
    home, workspace = root / "home-prof", root / "ws-prof"
    workspace.mkdir()
    (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
    use_env(home)
    with tool_loop_server("process", steps) as url:
        anyio.run(agent_turn, home, workspace, url, steps)  # warm-up
    with tool_loop_server("process", steps) as url:
        prof = cProfile.Profile()
        prof.enable()
        anyio.run(agent_turn, home, workspace, url, steps)
        prof.disable()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(20)
    print("\n== cProfile of one turn (includes build_session), top 20 by own time")
    print(text.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--server", choices=("both", "process", "thread"), default="both")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one turn")
    args = parser.parse_args()
    if args.steps < 20:
        parser.error("--steps must be at least 20")
    modes = ["process", "thread"] if args.server == "both" else [args.server]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        for mode in modes:
            results[mode] = measure(mode, args.steps, args.reps, Path(tmp))
        if args.profile:
            profile(args.steps, Path(tmp))
    head = modes[0]
    over = results[head]["over"]
    extra = ""
    if "thread" in results and head != "thread":
        extra = f"; {results['thread']['over']:.2f} ms with the server in-process"
    print(
        f"SUMMARY step overhead: {over:.2f} ms per step (server in a {head}, {args.steps} steps"
        f"{extra}); target <= {TARGET_MS:.0f} ms: {verdict(over, TARGET_MS)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
