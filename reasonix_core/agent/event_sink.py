"""One sink for a turn's events, and the stream a consumer reads them from.

The agent's phases are plain coroutines: they return values (a reply, a
compaction outcome) and send every event they make to one :data:`EventSink`
(``await emit(event)``). :func:`event_stream` runs such a coroutine and hands
its events to the consumer as an async iterator.

It drives the coroutine itself, in the consumer's task: every ``await
emit(event)`` suspends the coroutine and hands ``event`` to the consumer, and
everything else the coroutine awaits (a socket, a sleep, a lock) is passed
through to the event loop unchanged, as a ``yield`` from a nested async
generator would. So the stream has the semantics the generator chain it
replaced had, at about the same cost per event:

* lockstep: the work never runs ahead of its consumer (an approval, a cancel
  or a test reading the transcript after an event see the state as it was);
* one task: cancel scopes, context variables and cancellation are the
  consumer's, and an exception of the work reaches the consumer as raised;
* closing the stream early (``aclose`` at an event) raises
  :class:`StreamClosed` inside the work at its ``emit``, so its cleanup (an
  interrupted answer kept, unfinished tool calls answered, its own streams
  closed) runs, awaits included, before the close returns. Like the
  ``GeneratorExit`` a generator would see there, it is no ``Exception``: only
  ``finally`` and ``except BaseException`` blocks see it. (``GeneratorExit``
  itself cannot be used: thrown into a chain of coroutines, Python closes the
  innermost one at once, and a cleanup that awaits would then fail.)

``emit`` may only be awaited inside the work it was given to (not in another
task): awaited elsewhere, its suspension would reach an event loop that does
not know it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Generator

from reasonix_core import events as ev

EventSink = Callable[[ev.Event], Awaitable[None]]


class StreamClosed(BaseException):
    """The consumer closed the event stream at the event being sent."""


class _Emission:
    """What ``await emit(event)`` suspends the work with: the event to hand over."""

    __slots__ = ("event",)

    def __init__(self, event: ev.Event) -> None:
        self.event = event

    def __await__(self) -> Generator[object, object, None]:
        yield self


class _PassThrough:
    """Suspends the stream with what the work suspended on (a future, an event
    loop trap) and returns what the event loop resumes it with."""

    __slots__ = ("suspended",)

    def __init__(self, suspended: object) -> None:
        self.suspended = suspended

    def __await__(self) -> Generator[object, object, object]:
        return (yield self.suspended)


def _emit(event: ev.Event) -> _Emission:
    return _Emission(event)


_FINISHED = object()


def _advance(
    coro: Coroutine[object, object, None], resume: object, thrown: BaseException | None
) -> object:
    """Run the work to its next suspension (what it awaits); ``_FINISHED`` when it returned."""
    try:
        if thrown is not None:
            return coro.throw(thrown)
        return coro.send(resume)
    except StopIteration:
        return _FINISHED


async def _pass_through(suspended: object) -> tuple[object, BaseException | None]:
    """Wait in the event loop for what the work waits for: (resume value, or the
    exception to throw into the work, such as a cancellation)."""
    try:
        return await _PassThrough(suspended), None
    except BaseException as exc:
        return None, exc


async def event_stream(
    work: Callable[[EventSink], Coroutine[object, object, None]],
) -> AsyncGenerator[ev.Event, None]:
    """The events ``work`` sends to its sink, one at a time, as it sends them."""
    coro = work(_emit)
    resume: object = None
    thrown: BaseException | None = None
    while (suspended := _advance(coro, resume, thrown)) is not _FINISHED:
        resume, thrown = None, None
        if not isinstance(suspended, _Emission):
            resume, thrown = await _pass_through(suspended)
            continue
        try:
            yield suspended.event
        except GeneratorExit:
            await _close(coro)  # the consumer closed the stream at this event
            return
        except BaseException as exc:  # thrown in by the consumer (athrow)
            thrown = exc


async def _close(coro: Coroutine[object, object, None]) -> None:
    """Run the work's cleanup after the consumer closed the stream at an event."""
    resume: object = None
    thrown: BaseException | None = StreamClosed()
    try:
        while (suspended := _advance(coro, resume, thrown)) is not _FINISHED:
            if isinstance(suspended, _Emission):
                coro.close()
                raise RuntimeError("the event stream was closed: its work may not send events")
            resume, thrown = await _pass_through(suspended)
    except StreamClosed:
        pass
