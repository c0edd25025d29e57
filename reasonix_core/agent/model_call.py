"""One model call: prepare (freeze the bytes) -> stream -> the unified retry path -> usage.

Every request to a model goes through :class:`ModelCall`: the Agent's steps and
compaction's summary requests alike. It is the only module outside
``provider/`` that prepares a request or reads a provider stream (a test holds
that), so retries, usage and cost are reported the same way for every caller,
each tagged with its :class:`Purpose`.

A prepared request is frozen: every retry replays it byte for byte. A call
never fabricates an answer and never sends a hidden extra request: a failure
ends in ``Reply.error`` for the caller to act on (give up, or rescue an
overflow and prepare a new request). The call returns its :class:`Reply`
and sends its events (deltas, retries, usage) to the caller's sink.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime

from reasonix_core import events as ev
from reasonix_core.agent.budget import BudgetMeter
from reasonix_core.agent.cache_ledger import CacheLedger, Prefix, rebill_cost
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.event_sink import EventSink
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.agent.usage_estimate import estimate_usage
from reasonix_core.errors import EmptyResponse, ProviderError
from reasonix_core.provider.base import (
    PreparedRequest,
    Provider,
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
    WebSearchChunk,
)
from reasonix_core.usage import Usage

PriceFn = Callable[[str, Usage, datetime], tuple[float, str]]

USAGE_ESTIMATED = (
    "the provider reported no token usage: tokens and cost are estimated locally "
    "(marked ~ in the status bar, estimated_usage_requests in the metrics)"
)


def no_price(model: str, usage: Usage, when: datetime) -> tuple[float, str]:
    return 0.0, "USD"


@dataclass(frozen=True, slots=True)
class Purpose:
    """What a call is for, and so how it reports itself."""

    # ``UsageReported.source``: the bucket its cost is counted in.
    source: str
    # Stream the answer as TextDelta / ReasoningDelta / ToolCallDelta events.
    deltas: bool = True
    # An answer without text, reasoning or tool calls is retried (EmptyResponse).
    retry_empty: bool = True
    # Put before the error in ``Retrying.reason``.
    retry_label: str = ""


# A summary request: silent (its text is not the conversation's), its own cost bucket.
COMPACTION = Purpose(
    source="compaction", deltas=False, retry_empty=False, retry_label="compaction: "
)


@dataclass
class Reply:
    """What one call produced so far; filled in by :meth:`ModelCall.request`.

    ``attempts`` counts every attempt made with this reply, across the
    requests of one step (an overflow rescue continues the count)."""

    # Deltas are collected in lists: a long answer arrives in thousands of them.
    text_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    end: StreamEnd | None = None
    usage: Usage | None = None
    error: ProviderError | None = None
    attempts: int = 0
    # True while an attempt's stream is being read (its deltas and usage
    # yielded): an exception then interrupts a partly received answer.
    streaming: bool = False
    # The current attempt: when it started (monotonic), and the milliseconds to
    # its first streamed output.
    started: float = 0.0
    ttft_ms: int | None = None

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_parts)

    @property
    def empty(self) -> bool:
        calls = self.end.tool_calls if self.end else ()
        return not self.text_parts and not self.reasoning_parts and not calls

    @property
    def replay_meta(self) -> dict[str, str]:
        """What the assistant message keeps for its provider kind to replay unchanged:
        the reasoning signature (Anthropic signs reasoning) and the kind's own records
        (its server-side web search blocks, :attr:`StreamEnd.replay_meta`)."""
        if self.end is None:
            return {}
        meta = dict(self.end.replay_meta)
        if self.end.reasoning_signature:
            meta["reasoning_signature"] = self.end.reasoning_signature
        return meta

    def _begin_attempt(self) -> None:
        self.text_parts = []
        self.reasoning_parts = []
        self.end = None
        self.usage = None
        self.error = None
        self.attempts += 1
        self.streaming = True
        self.started = time.monotonic()
        self.ttft_ms = None

    def _first_output(self) -> None:
        if self.ttft_ms is None:
            self.ttft_ms = int((time.monotonic() - self.started) * 1000)


class ModelCall:
    """Prepare, stream and retry model requests for one agent."""

    def __init__(
        self,
        *,
        provider: Provider,
        retry: RetryPolicy,
        events: EventSequence,
        price: PriceFn = no_price,
        clock: Callable[[], datetime],
        ledger: CacheLedger | None = None,
        budget: BudgetMeter | None = None,
    ) -> None:
        self.provider = provider
        self.retry = retry
        self.events = events
        self.price = price
        self.clock = clock
        # Numbers and records every billed request; checks the agent's chain.
        self.ledger = ledger or CacheLedger()
        # Charged by every billed call, whatever its purpose (budget.py).
        self.budget = budget
        self._estimate_said = False  # USAGE_ESTIMATED is said once per agent

    def prepare(self, request: Request) -> PreparedRequest:
        """Freeze the request's bytes; every retry of it sends exactly these."""
        return self.provider.prepare(request)

    async def request(
        self,
        prepared: PreparedRequest,
        purpose: Purpose,
        emit: EventSink,
        *,
        reply: Reply | None = None,
        on_usage: Callable[[Usage], None] | None = None,
        prefix: Prefix | None = None,
    ) -> Reply:
        """Send ``prepared`` until an answer, a final error or the retry budget's
        end; returns the reply (``reply``, when given, continues its attempt count
        and shows what was received should the call be cancelled).

        ``on_usage`` sees the provider's count before the usage event is
        sent (the context manager calibrates on it). ``prefix``: the
        request as the cache reads it, for a request of the agent's chain
        (compared with the chain's previous one); None for a side request."""
        reply = reply if reply is not None else Reply()
        while True:
            reply._begin_attempt()
            try:
                await self._attempt(prepared, reply, purpose, emit, on_usage, prefix)
                if purpose.retry_empty and reply.empty:
                    raise EmptyResponse()
                if reply.end is None:
                    raise ProviderError("the stream ended without a finish", kind="stream")
                reply.streaming = False
                return reply
            except ProviderError as exc:
                reply.streaming = False
                if not exc.retryable or reply.attempts >= self.retry.attempts:
                    reply.error = exc
                    return reply
                refusal = self.retry.refusal(exc.retry_after)
                if refusal is not None:
                    reply.error = ProviderError(
                        f"{exc.message} ({refusal})",
                        status=exc.status,
                        retry_after=exc.retry_after,
                        kind=exc.kind,
                    )
                    return reply
                delay = self.retry.delay(reply.attempts, exc.retry_after)
                await emit(
                    self.events(
                        ev.Retrying,
                        attempt=reply.attempts,
                        delay=delay,
                        reason=f"{purpose.retry_label}{exc}",
                        error_kind=exc.kind,
                    )
                )
                await self.retry.sleep(delay)

    async def _attempt(
        self,
        prepared: PreparedRequest,
        reply: Reply,
        purpose: Purpose,
        emit: EventSink,
        on_usage: Callable[[Usage], None] | None,
        prefix: Prefix | None,
    ) -> None:
        async with aclosing(self.provider.stream(prepared)) as chunks:
            async for chunk in chunks:
                if not isinstance(chunk, StreamEnd):
                    reply._first_output()
                if isinstance(chunk, TextChunk):
                    reply.text_parts.append(chunk.text)
                    if purpose.deltas:
                        await emit(self.events(ev.TextDelta, text=chunk.text))
                elif isinstance(chunk, ReasoningChunk):
                    reply.reasoning_parts.append(chunk.text)
                    if purpose.deltas:
                        await emit(self.events(ev.ReasoningDelta, text=chunk.text))
                elif isinstance(chunk, ToolCallFragment):
                    if purpose.deltas:
                        await emit(
                            self.events(
                                ev.ToolCallDelta,
                                index=chunk.index,
                                call_id=chunk.id,
                                name=chunk.name,
                                arguments=chunk.arguments,
                            )
                        )
                elif isinstance(chunk, WebSearchChunk):
                    if purpose.deltas:
                        await emit(
                            self.events(
                                ev.WebSearched,
                                call_id=chunk.call_id,
                                query=chunk.query,
                                results=chunk.results,
                                error=chunk.error,
                            )
                        )
                elif isinstance(chunk, StreamEnd):
                    reply.end = chunk
        if reply.end is not None:
            if reply.end.usage is not None:
                reply.usage = reply.end.usage
                if on_usage is not None:  # a real count: the estimator calibrates on it
                    on_usage(reply.usage)
            else:
                reply.usage = self._estimate(prepared, reply)
                if not self._estimate_said:
                    self._estimate_said = True
                    await emit(self.events(ev.Notice, level="warning", text=USAGE_ESTIMATED))
            model = reply.end.model or prepared.model
            for event in self._account(reply.usage, model, purpose, prefix, reply.ttft_ms):
                await emit(event)

    @staticmethod
    def _estimate(prepared: PreparedRequest, reply: Reply) -> Usage:
        calls = reply.end.tool_calls if reply.end is not None else ()
        arguments = "".join(call.name + call.arguments for call in calls)
        return estimate_usage(prepared.body, reply.text, reply.reasoning, arguments)

    def _account(
        self,
        usage: Usage,
        model: str,
        purpose: Purpose,
        prefix: Prefix | None,
        ttft_ms: int | None,
    ) -> list[ev.Event]:
        """Price one billed request, record it, and report its cache break (if
        its prefix broke the chain) then its usage."""
        when = self.clock()
        cost, currency = self.price(model, usage, when)
        if self.budget is not None:
            self.budget.charge(usage, cost)
        number, broken = self.ledger.settle(
            prefix=prefix,
            usage=usage,
            source=purpose.source,
            model=model,
            cost=cost,
            currency=currency,
            when=when,
            ttft_ms=ttft_ms,
            rebill_cost=self.rebill_cost,
        )
        out: list[ev.Event] = []
        if broken is not None:
            where = broken.divergence
            out.append(
                self.events(
                    ev.CacheBroken,
                    request=number,
                    reason=broken.reason,
                    first_diff_byte=where.first_diff_byte,
                    rebilled_tokens=where.rebilled_tokens,
                    rebilled_cost=broken.rebilled_cost,
                    currency=currency,
                    context=where.context,
                )
            )
        out.append(
            self.events(
                ev.UsageReported,
                usage=usage,
                model=model,
                source=purpose.source,
                cost=cost,
                currency=currency,
                request=number,
                ttft_ms=ttft_ms,
            )
        )
        return out

    def rebill_cost(self, model: str, tokens: int, when: datetime) -> tuple[float, str]:
        """What billing ``tokens`` cached tokens as misses adds, at ``when``'s price."""
        return rebill_cost(self.price, model, tokens, when)
