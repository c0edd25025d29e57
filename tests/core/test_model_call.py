"""ModelCall: one request, its frozen bytes, the unified retry path, and usage
reported with its purpose - driven over HTTP against the loopback fixture server."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from datetime import UTC, datetime
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.event_sink import EventSink, event_stream
from reasonix_core.agent.model_call import COMPACTION, ModelCall, Purpose, Reply
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.messages import Message
from reasonix_core.provider.base import PreparedRequest, Request
from reasonix_core.usage import Usage
from reasonix_testkit import FixtureServer, HttpError
from reasonix_testkit import Reply as Scripted

from ..conftest import TEST_KEY
from .provider_helpers import fixture_provider

STEP = Purpose(source="executor")
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _model_call(
    server: FixtureServer, events: EventSequence | None = None, attempts: int = 3
) -> tuple[ModelCall, list[float]]:
    sleeps: list[float] = []

    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    call = ModelCall(
        provider=fixture_provider(server, TEST_KEY),
        retry=RetryPolicy(attempts=attempts, sleep=sleep),
        events=events or EventSequence(("main",)),
        price=lambda model, usage, when: (usage.prompt_tokens / 1000, "CNY"),
        clock=lambda: WHEN,
    )
    return call, sleeps


def _request(text: str = "hello") -> Request:
    return Request(
        model="deepseek-flash",
        messages=(Message(role="system", content="sys"), Message(role="user", content=text)),
    )


def _events(
    call: ModelCall, prepared: PreparedRequest, reply: Reply, purpose: Purpose, **kw: Any
) -> AsyncGenerator[ev.Event, None]:
    """The events ``request`` sends to its sink, read as a stream."""

    async def send(emit: EventSink) -> None:
        assert await call.request(prepared, purpose, emit, reply=reply, **kw) is reply

    return event_stream(send)


async def _drive(call: ModelCall, reply: Reply, purpose: Purpose, **kw: Any) -> list[ev.Event]:
    prepared = call.prepare(_request())
    out: list[ev.Event] = []
    try:
        async with aclosing(_events(call, prepared, reply, purpose, **kw)) as events:
            async for event in events:
                out.append(event)
    finally:
        await call.provider.aclose()  # type: ignore[attr-defined]
    return out


async def test_a_step_streams_deltas_and_reports_usage_under_its_source(server) -> None:
    server.enqueue(Scripted(content="hello world", reasoning="think", chunk_size=4))
    call, _ = _model_call(server)
    seen: list[Usage] = []
    reply = Reply()
    events = await _drive(call, reply, STEP, on_usage=seen.append)

    assert reply.error is None and reply.attempts == 1 and not reply.streaming
    assert reply.text == "hello world" and reply.reasoning == "think"
    assert reply.end is not None and reply.end.finish_reason == "stop"
    deltas = [e.text for e in events if isinstance(e, ev.TextDelta)]
    assert "".join(deltas) == "hello world" and len(deltas) > 1
    assert any(isinstance(e, ev.ReasoningDelta) for e in events)
    usage = events[-1]
    assert isinstance(usage, ev.UsageReported)
    assert usage.source == "executor" and usage.model == "deepseek-flash"
    assert usage.currency == "CNY" and usage.cost == usage.usage.prompt_tokens / 1000
    # The caller saw the count before the event (the context manager calibrates on it).
    assert seen == [usage.usage] and reply.usage == usage.usage
    # One numbering, one agent path, for every event of the call.
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert {e.agent_path for e in events} == {("main",)}


async def test_a_retry_replays_the_frozen_bytes_and_continues_the_numbering(server) -> None:
    server.enqueue(HttpError(503, "busy"), Scripted(content="ok"))
    numbering = EventSequence()
    numbering(ev.Notice, level="info", text="an earlier event of the same agent")
    call, sleeps = _model_call(server, numbering)
    reply = Reply()
    events = await _drive(call, reply, STEP)

    first, second = (r.body for r in server.requests)
    assert first == second  # byte for byte
    retrying = [e for e in events if isinstance(e, ev.Retrying)]
    assert [(r.attempt, r.delay) for r in retrying] == [(1, sleeps[0])]
    assert "busy" in retrying[0].reason
    assert events[0].seq == 2 and reply.attempts == 2 and reply.text == "ok"


async def test_a_summary_request_is_silent_and_counted_as_compaction(server) -> None:
    server.enqueue(HttpError(429, "slow down", retry_after=0), Scripted(content="the digest"))
    call, _ = _model_call(server)
    reply = Reply()
    events = await _drive(call, reply, COMPACTION)

    assert reply.text == "the digest"
    assert not [e for e in events if isinstance(e, ev.TextDelta | ev.ReasoningDelta)]
    kinds = [type(e) for e in events]
    assert kinds == [ev.Retrying, ev.UsageReported]
    retrying, usage = events
    assert isinstance(retrying, ev.Retrying) and retrying.reason.startswith("compaction: ")
    assert isinstance(usage, ev.UsageReported) and usage.source == "compaction"


async def test_a_final_error_is_returned_not_retried(server) -> None:
    server.enqueue(HttpError(400, "bad request"))
    call, sleeps = _model_call(server)
    reply = Reply()
    events = await _drive(call, reply, STEP)

    assert events == [] and sleeps == [] and len(server.requests) == 1
    assert reply.error is not None and not reply.error.retryable and reply.error.status == 400
    assert reply.attempts == 1


async def test_the_retry_budget_ends_in_the_last_error(server) -> None:
    server.enqueue(HttpError(503, "busy"), HttpError(503, "busy"), HttpError(503, "busy"))
    call, sleeps = _model_call(server, attempts=3)
    reply = Reply()
    events = await _drive(call, reply, STEP)

    assert len(server.requests) == 3 and len(sleeps) == 2
    assert [e.attempt for e in events if isinstance(e, ev.Retrying)] == [1, 2]
    assert reply.error is not None and reply.error.retryable and reply.attempts == 3


async def test_an_empty_answer_is_retried_for_a_step_but_not_for_a_summary(server) -> None:
    server.enqueue(Scripted(content=""), Scripted(content="now"))
    call, _ = _model_call(server)
    step = Reply()
    await _drive(call, step, STEP)
    assert step.text == "now" and step.attempts == 2

    server.enqueue(Scripted(content=""))
    call, _ = _model_call(server)
    summary = Reply()
    await _drive(call, summary, COMPACTION)
    assert summary.error is None and summary.text == "" and summary.attempts == 1


async def test_closing_mid_stream_leaves_the_partial_answer_marked_streaming(server) -> None:
    server.enqueue(Scripted(content="a long answer that is cut", chunk_size=2))
    call, _ = _model_call(server)
    reply = Reply()
    prepared = call.prepare(_request())
    try:
        async with aclosing(_events(call, prepared, reply, STEP)) as events:
            async for event in events:
                if isinstance(event, ev.TextDelta) and len(reply.text_parts) == 3:
                    break
    finally:
        await call.provider.aclose()  # type: ignore[attr-defined]
    # The caller commits what was said (the Agent marks it interrupted).
    assert reply.streaming and reply.text == "a long"
    assert reply.error is None and reply.end is None


async def test_the_retry_budget_is_the_replys_across_rebuilt_requests(server) -> None:
    """After an overflow rescue the Agent sends a rebuilt request with the same
    reply: the retry budget is the step's, not each request's."""
    server.enqueue(HttpError(503, "busy"), HttpError(400, "prompt is too long"))
    server.enqueue(HttpError(503, "busy"))
    call, sleeps = _model_call(server, attempts=3)
    reply = Reply()
    try:
        for text in ("first", "rebuilt"):
            prepared = call.prepare(_request(text))
            async with aclosing(_events(call, prepared, reply, STEP)) as events:
                async for _ in events:
                    pass
            if text == "first":
                assert reply.attempts == 2 and reply.error is not None
                assert reply.error.status == 400
    finally:
        await call.provider.aclose()  # type: ignore[attr-defined]
    # The third attempt was the last one the budget allowed: no retry after it.
    assert reply.attempts == 3 and reply.error is not None and reply.error.retryable
    assert len(server.requests) == 3 and len(sleeps) == 1
