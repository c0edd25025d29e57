"""The turn's event sink: lockstep with its consumer, in its task, errors as
raised; an early close stops the work at its emit and lets its cleanup run,
awaits included."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

import anyio
import anyio.lowlevel
import pytest

from reasonix_core import events as ev
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.event_sink import EventSink, event_stream


class Boom(Exception):
    pass


async def test_the_work_never_runs_ahead_of_its_consumer() -> None:
    events = EventSequence()
    progress: list[int] = []

    async def work(emit: EventSink) -> None:
        for n in range(3):
            progress.append(n)
            await emit(events(ev.Notice, level="info", text=str(n)))
            await anyio.lowlevel.checkpoint()

    seen: list[tuple[str, list[int]]] = []
    async with aclosing(event_stream(work)) as stream:
        async for event in stream:
            assert isinstance(event, ev.Notice)
            for _ in range(10):  # the work could run now if it were not in lockstep
                await anyio.lowlevel.checkpoint()
            seen.append((event.text, list(progress)))
    assert seen == [("0", [0]), ("1", [0, 1]), ("2", [0, 1, 2])]


async def test_an_error_of_the_work_reaches_the_consumer_as_raised() -> None:
    async def work(emit: EventSink) -> None:
        await emit(EventSequence()(ev.Notice, level="info", text="before"))
        raise Boom("the work failed")

    got: list[ev.Event] = []
    with pytest.raises(Boom, match="the work failed"):
        async with aclosing(event_stream(work)) as stream:
            async for event in stream:
                got.append(event)
    assert len(got) == 1


async def test_closing_early_stops_the_work_at_its_emit_and_runs_its_cleanup() -> None:
    after_emit: list[str] = []
    cleanup: list[str] = []

    async def source() -> AsyncGenerator[int, None]:
        try:
            for n in range(3):
                yield n
        finally:
            await anyio.lowlevel.checkpoint()  # a cleanup that awaits (an HTTP close)
            async with anyio.Lock():
                cleanup.append("source closed")

    async def work(emit: EventSink) -> None:
        try:
            async with aclosing(source()) as numbers:
                async for n in numbers:
                    await emit(EventSequence()(ev.Notice, level="info", text=str(n)))
                    after_emit.append("ran past the closed event")
        except Exception:  # not an error: an early close is no Exception
            cleanup.append("wrongly caught")
        finally:
            await anyio.lowlevel.checkpoint()
            cleanup.append("work closed")

    async with aclosing(event_stream(work)) as stream:
        async for _ in stream:
            break
    assert after_emit == [] and cleanup == ["source closed", "work closed"]


async def test_the_work_runs_in_the_consumers_task() -> None:
    consumer = anyio.get_current_task().id
    seen: list[int] = []

    async def work(emit: EventSink) -> None:
        seen.append(anyio.get_current_task().id)
        await emit(EventSequence()(ev.Notice, level="info", text="x"))

    async with aclosing(event_stream(work)) as stream:
        async for _ in stream:
            pass
    assert seen == [consumer]


async def test_cancelling_the_consumer_cancels_the_work() -> None:
    cleanup: list[str] = []

    async def work(emit: EventSink) -> None:
        try:
            await emit(EventSequence()(ev.Notice, level="info", text="first"))
            await anyio.sleep_forever()
        finally:
            cleanup.append("cancelled")

    with anyio.CancelScope() as scope:
        async with aclosing(event_stream(work)) as stream:
            async for _ in stream:
                scope.cancel()  # the consumer's next wait is cancelled
    assert cleanup == ["cancelled"]
