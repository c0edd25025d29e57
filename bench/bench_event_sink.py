"""Cost per event of the turn's event sink (``agent/event_sink.py``) against the
nested async generators it replaced, measured side by side in one run.

The old loop re-yielded every event through about five generator levels
(run -> steps -> phase -> ModelCall.request -> attempt); now the same depth of
plain coroutines awaits ``emit`` and ``event_stream`` hands the event to the
consumer from the one level it drives. Printed: microseconds per event for both and their
ratio, and what that adds to a step of ``--per-step`` events.

Run: ``.venv/bin/python bench/bench_event_sink.py [--events 20000] [--reps 5]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.event_sink import EventSink, event_stream

EVENT = ev.Notice(seq=1, agent_path=(), level="info", text="x")


async def _leaf(n: int) -> AsyncGenerator[ev.Event, None]:
    for _ in range(n):
        yield EVENT


async def _nested(n: int, depth: int) -> AsyncGenerator[ev.Event, None]:
    if depth == 0:
        async with aclosing(_leaf(n)) as events:
            async for event in events:
                yield event
        return
    async with aclosing(_nested(n, depth - 1)) as events:
        async for event in events:
            yield event


async def _generators(n: int) -> float:
    start = time.perf_counter()
    async with aclosing(_nested(n, 4)) as events:
        async for _ in events:
            pass
    return time.perf_counter() - start


async def _emitting(n: int, depth: int, emit: EventSink) -> None:
    if depth == 0:
        for _ in range(n):
            await emit(EVENT)
        return
    await _emitting(n, depth - 1, emit)


async def _sink(n: int) -> float:
    async def work(emit: EventSink) -> None:
        await _emitting(n, 4, emit)

    start = time.perf_counter()
    async with aclosing(event_stream(work)) as events:
        async for _ in events:
            pass
    return time.perf_counter() - start


async def main(n: int, reps: int, per_step: int) -> None:
    old: list[float] = []
    new: list[float] = []
    for _ in range(reps):  # interleaved, so load on the machine hits both alike
        old.append(await _generators(n))
        new.append(await _sink(n))
    old_us = statistics.median(old) / n * 1e6
    new_us = statistics.median(new) / n * 1e6
    print(f"nested generators (depth 5): {old_us:6.2f} us/event")
    print(f"event sink (depth 5):        {new_us:6.2f} us/event")
    print(f"ratio sink / generators:     {new_us / old_us:6.2f}x")
    added = (new_us - old_us) * per_step / 1000
    print(f"added per step of {per_step} events: {added:.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--per-step", type=int, default=12)
    args = parser.parse_args()
    anyio.run(main, args.events, args.reps, args.per_step)
