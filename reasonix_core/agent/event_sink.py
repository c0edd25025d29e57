"""One sink for a turn's events, and the stream a consumer reads them from.

The agent's phases are plain coroutines: they return values (a reply, a
compaction outcome) and send every event they make to one :data:`EventSink`.
:func:`event_stream` runs such a coroutine and hands its events to the
consumer as an async iterator, **in lockstep**: ``await emit(event)`` returns
only when the consumer asks for the next event, exactly as a ``yield`` would,
so the agent never runs ahead of whoever reads it (an approval, a cancel, a
test reading the transcript after an event see the same state as before).

An exception the work raises reaches the consumer unchanged (not wrapped in
an exception group); closing the stream early cancels the work, whose cleanup
(an interrupted answer kept, unfinished tool calls closed) runs before the
close returns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

from reasonix_core import events as ev

EventSink = Callable[[ev.Event], Awaitable[None]]


async def event_stream(work: Callable[[EventSink], Awaitable[None]]) -> AsyncIterator[ev.Event]:
    """The events ``work`` sends to its sink, one at a time, as it sends them."""
    send, receive = anyio.create_memory_object_stream[tuple[ev.Event, anyio.Event]](0)
    failure: list[Exception] = []

    async def emit(event: ev.Event) -> None:
        resumed = anyio.Event()
        await send.send((event, resumed))
        await resumed.wait()

    async def run() -> None:
        async with send:
            try:
                await work(emit)
            except Exception as exc:
                # Re-raised below in the consumer's frame, as it was raised.
                failure.append(exc)

    closed = False
    async with anyio.create_task_group() as tg, receive:
        tg.start_soon(run)
        try:
            async for event, resumed in receive:
                yield event
                # Not reached when the consumer closes the stream at this event: the
                # work is then cancelled inside ``emit``, as a generator would stop
                # at its ``yield``.
                resumed.set()
        except GeneratorExit:
            # Closed early: cancel the work and wait for its cleanup; raised
            # inside the task group, GeneratorExit would come out wrapped.
            closed = True
            tg.cancel_scope.cancel()
    if closed:
        raise GeneratorExit
    if failure:
        raise failure[0]
