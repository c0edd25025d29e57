"""The agent loop (seed 003).

build the request once per step (then it is frozen) -> provider stream ->
clean final: the turn ends -> tool calls: execute, append results, next step ->
request error: one unified retry path replaying the frozen request byte for
byte -> unhandled error: explicit failure. No synthetic continuation, no hidden
extra requests.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.context import (
    CompactionRequired,
    ContextManager,
    Sent,
    is_context_overflow,
)
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.agent.session import SessionStore
from reasonix_core.agent.transcript import (
    INTERRUPTED_MARK,
    NOT_STARTED,
    UNKNOWN_OUTCOME,
    bound_result,
    reminder,
    repair_messages,
)
from reasonix_core.errors import EmptyResponse, ProviderError, ToolArgumentError
from reasonix_core.messages import Message, ToolCall
from reasonix_core.permission.summary import summarize_call
from reasonix_core.provider.base import (
    Provider,
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
)
from reasonix_core.tool.base import ToolContext, ToolResult, current_call_id
from reasonix_core.tool.preview import preview_diff
from reasonix_core.tool.registry import ToolRegistry, internal_error
from reasonix_core.usage import Usage

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4

PriceFn = Callable[[str, Usage, datetime], tuple[float, str]]


def _no_price(model: str, usage: Usage, when: datetime) -> tuple[float, str]:
    return 0.0, "USD"


@dataclass
class _StepOutput:
    # Deltas are collected in lists: a long answer arrives in thousands of them.
    text_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    end: StreamEnd | None = None

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


@dataclass(kw_only=True)
class AgentOptions:
    effort: str = "auto"
    max_steps: int = 0
    context_window: int = 131072
    # 0 automatic, > 0 explicit cap, < 0 omit (seed 000 §3.1)
    max_output_tokens: int = 0
    source: str = "executor"
    agent_path: tuple[str, ...] = ()


@dataclass(kw_only=True)
class _CallState:
    call: ToolCall
    started: bool = False
    message: Message | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Agent:
    """One model, one append-only transcript, one tool registry."""

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        tools: ToolRegistry,
        tool_context: ToolContext,
        session: SessionStore,
        system_prompt: str,
        history: Sequence[Message] = (),
        gate: Any = None,
        retry: RetryPolicy | None = None,
        options: AgentOptions | None = None,
        price: PriceFn = _no_price,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        # (first_turn, raw user prompt) -> volatile text appended to the user turn.
        context_suffix: Callable[[bool, str], str] | None = None,
        context: ContextManager | None = None,
    ) -> None:
        self.provider = provider
        self._model = model
        self.tools = tools
        self.tool_context = tool_context
        self.session = session
        self.gate = gate
        self.retry = retry or RetryPolicy()
        self.options = options or AgentOptions()
        self.price = price
        self.clock = clock
        self.context_suffix = context_suffix
        self.messages: list[Message] = list(history)
        if not self.messages or self.messages[0].role != "system":
            self.messages.insert(0, Message(role="system", content=system_prompt))
        self._seq = 0
        self._last_prefix: tuple[str, ...] | None = None
        # The view each request sends: checkpoint projection + append-only tail.
        self.context = context or ContextManager(window=self.options.context_window)
        self._sent: Sent | None = None
        self._repeat_key: tuple[str, str] | None = None
        self._repeat_count = 0
        self.turns = 0

    # -- Runner protocol --------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def model(self) -> str:
        return self._model

    @property
    def effort(self) -> str:
        return self.options.effort

    def set_model(self, model: str, context_window: int | None = None) -> None:
        """Switch the model for the next request; ``context_window``: the new model's
        window, so that compaction triggers at its threshold (kept in the checkpoint)."""
        self._model = model
        if context_window and context_window != self.context.window:
            self.context.set_window(self, context_window)

    def set_effort(self, effort: str) -> None:
        self.options.effort = effort

    # -- helpers ----------------------------------------------------------

    def _event(self, cls: type[ev.Event], **fields: Any) -> Any:
        self._seq += 1
        return cls(seq=self._seq, agent_path=self.options.agent_path, **fields)

    @staticmethod
    def _chars(msg: Message) -> int:
        n = len(msg.content or "") + len(msg.reasoning_content or "")
        for call in msg.tool_calls:
            n += len(call.arguments) + len(call.name) + len(call.id)
        return n + 8

    def _append(self, msg: Message) -> None:
        self.messages.append(msg)
        self.session.append(msg)

    def estimated_prompt_tokens(self) -> int:
        """The next request's prompt: the last real count plus what was appended."""
        return self.context.estimate(self.messages, self.tools.fingerprint)

    def _max_output(self) -> int | None:
        setting = self.options.max_output_tokens
        if setting < 0:
            return None
        window = self.options.context_window
        remaining = self.context.output_room(self.estimated_prompt_tokens(), window)
        if setting > 0:
            return min(setting, remaining)
        auto = self.provider.max_output_tokens(self._model)
        if auto is None or self.estimated_prompt_tokens() + auto <= window:
            return None
        return remaining

    def _prefix_key(self) -> tuple[str, ...]:
        return (
            self.messages[0].content or "",
            self.tools.fingerprint,
            self._model,
            self.options.effort,
        )

    def _prefix_change(self) -> str | None:
        key = self._prefix_key()
        previous, self._last_prefix = self._last_prefix, key
        if previous is None or previous == key:
            return None
        for index, reason in enumerate(("system", "tools", "model", "effort")):
            if previous[index] != key[index]:
                return reason
        return None

    def note_prefix_baseline(self, tools_fingerprint: str, model: str, effort: str) -> None:
        """For a continued session: what the previous run's prefix was."""
        self._last_prefix = (self.messages[0].content or "", tools_fingerprint, model, effort)

    # -- the turn ---------------------------------------------------------

    async def run(self, prompt: str) -> AsyncIterator[ev.Event]:
        for repair in repair_messages(self.messages):
            self._append(repair)
        first_turn = not any(m.role == "user" for m in self.messages)
        text = prompt
        if self.context_suffix is not None:
            suffix = self.context_suffix(first_turn, prompt)
            if suffix:
                text = f"{prompt}\n\n{suffix}"
        self._append(Message(role="user", content=text))
        self.turns += 1
        self.context.begin_turn()
        yield self._event(ev.TurnStarted, session_id=self.session_id, prompt=prompt)
        step = 0
        while True:
            step += 1
            if self.options.max_steps and step > self.options.max_steps:
                yield self._event(
                    ev.Notice,
                    level="warning",
                    text=f"stopped after {self.options.max_steps} steps (--max-steps)",
                )
                yield self._event(ev.TurnFinished, stop_reason="max_steps", steps=step - 1)
                return
            # Context maintenance happens here, before the request is built,
            # and only at the compaction threshold (seed 000 §3.6).
            try:
                async with aclosing(self.context.maintain(self, "auto")) as maintenance:
                    async for event in maintenance:
                        yield event
            except CompactionRequired as exc:
                yield self._event(
                    ev.TurnFailed, error=str(exc), kind="compaction_required", steps=step - 1
                )
                return
            reason = self._prefix_change()
            if reason:
                yield self._event(ev.PrefixChanged, reason=reason)
            prepared = self._prepare_step()  # frozen from here on
            yield self._event(ev.StepStarted, step=step, model=self._model)

            output: _StepOutput | None = None
            attempt = 0
            rescued = False
            while output is None:
                attempt += 1
                current = _StepOutput()
                overflow: ProviderError | None = None
                try:
                    async for event in self._stream(prepared, current):
                        yield event
                    if current.empty:
                        raise EmptyResponse()
                    output = current
                except ProviderError as exc:
                    if is_context_overflow(exc) and not rescued:
                        overflow = exc
                    elif not exc.retryable or attempt >= self.retry.attempts:
                        yield self._failed(exc, step, attempt)
                        return
                    else:
                        delay = self.retry.delay(attempt, exc.retry_after)
                        yield self._event(
                            ev.Retrying, attempt=attempt, delay=delay, reason=str(exc)
                        )
                        await self.retry.sleep(delay)
                except BaseException:
                    # Cancelled mid-stream: keep what was said so the
                    # transcript stays valid and the model knows.
                    self._commit_interrupted(current)
                    raise
                if overflow is not None:
                    # Too long for the provider: at most one summary (or a lossy
                    # truncation), then one retry of the rebuilt request.
                    rescued = True
                    try:
                        async with aclosing(
                            self.context.rescue_overflow(self, overflow, self._sent)
                        ) as rescue:
                            async for event in rescue:
                                yield event
                    except CompactionRequired as exc:
                        yield self._event(
                            ev.TurnFailed,
                            error=str(exc),
                            kind="compaction_required",
                            status=overflow.status,
                            steps=step,
                        )
                        return
                    prepared = self._prepare_step()

            assert output.end is not None
            end = output.end
            calls = end.tool_calls
            if calls and end.finish_reason == "length":
                calls = ()
                yield self._event(
                    ev.Notice,
                    level="warning",
                    text="the response hit the output limit mid tool call; the call was dropped",
                )
            self._append(
                Message(
                    role="assistant",
                    content=output.text,
                    reasoning_content=output.reasoning or None,
                    tool_calls=calls,
                    # Replayed unchanged by providers that sign reasoning (Anthropic).
                    meta={"reasoning_signature": end.reasoning_signature}
                    if end.reasoning_signature
                    else {},
                )
            )
            if not calls:
                if end.finish_reason == "length":
                    yield self._event(
                        ev.Notice,
                        level="warning",
                        text="the answer was cut at the output token limit",
                    )
                elif end.finish_reason == "content_filter":
                    yield self._event(
                        ev.Notice,
                        level="warning",
                        text="the provider's content filter stopped the answer",
                    )
                yield self._event(
                    ev.TurnFinished,
                    stop_reason=end.finish_reason or "stop",
                    text=output.text,
                    steps=step,
                )
                return
            async for event in self._run_tools(calls):
                yield event

    async def compact(self) -> AsyncIterator[ev.Event]:
        """Manual compaction (``/compact``, ``reasonix compact``): prune and fold
        the history now, retrying even after an automatic failure."""
        for repair in repair_messages(self.messages):
            self._append(repair)
        try:
            async with aclosing(self.context.maintain(self, "manual")) as maintenance:
                async for event in maintenance:
                    yield event
        except CompactionRequired as exc:
            yield self._event(ev.Notice, level="error", text=str(exc))

    def _prepare_step(self) -> Any:
        """Build and freeze one step's request from the context manager's view."""
        view = self.context.view(self.messages)
        request = Request(
            model=self._model,
            messages=tuple(view),
            tools=self.tools.schemas(),
            effort=self.options.effort,
            max_output_tokens=self._max_output(),
        )
        self._sent = self.context.note_sent(view, self.tools.fingerprint)
        return self.provider.prepare(request)

    def _failed(self, exc: ProviderError, step: int, attempt: int) -> ev.TurnFailed:
        details = {"attempts": attempt}
        message = str(exc)
        if exc.retryable:
            message = f"{message} (gave up after {attempt} attempts)"
        return self._event(
            ev.TurnFailed,
            error=message,
            kind=exc.kind,
            status=exc.status,
            steps=step,
            details=details,
        )

    def _commit_interrupted(self, current: _StepOutput) -> None:
        text = (current.text + "\n\n" if current.text else "") + INTERRUPTED_MARK
        self._append(
            Message(role="assistant", content=text, reasoning_content=current.reasoning or None)
        )

    async def _stream(self, prepared: Any, out: _StepOutput) -> AsyncIterator[ev.Event]:
        async with aclosing(self.provider.stream(prepared)) as chunks:
            async for chunk in chunks:
                if isinstance(chunk, TextChunk):
                    out.text_parts.append(chunk.text)
                    yield self._event(ev.TextDelta, text=chunk.text)
                elif isinstance(chunk, ReasoningChunk):
                    out.reasoning_parts.append(chunk.text)
                    yield self._event(ev.ReasoningDelta, text=chunk.text)
                elif isinstance(chunk, ToolCallFragment):
                    yield self._event(
                        ev.ToolCallDelta,
                        index=chunk.index,
                        call_id=chunk.id,
                        name=chunk.name,
                        arguments=chunk.arguments,
                    )
                elif isinstance(chunk, StreamEnd):
                    out.end = chunk
        if out.end is not None and out.end.usage is not None:
            self.context.observe(self._sent, out.end.usage.prompt_tokens)
            yield self._usage_event(out.end.usage, out.end.model or prepared.model)

    def _usage_event(self, usage: Usage, model: str, source: str | None = None) -> ev.UsageReported:
        cost, currency = self.price(model, usage, self.clock())
        return self._event(
            ev.UsageReported,
            usage=usage,
            model=model,
            source=source or self.options.source,
            cost=cost,
            currency=currency,
        )

    # -- tools ------------------------------------------------------------

    def _batches(self, calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
        """Consecutive read-only calls form one concurrent batch; writers run alone."""
        batches: list[list[ToolCall]] = []
        previous_read_only = False
        for call in calls:
            tool = self.tools.get(call.name)
            read_only = bool(tool is not None and tool.read_only)
            if read_only and previous_read_only:
                batches[-1].append(call)
            else:
                batches.append([call])
            previous_read_only = read_only
        return batches

    async def _run_tools(self, calls: Sequence[ToolCall]) -> AsyncIterator[ev.Event]:
        states = [_CallState(call=c) for c in calls]
        by_id = {id(s.call): s for s in states}
        try:
            for batch in self._batches(calls):
                batch_states = [by_id[id(c)] for c in batch]
                for state in batch_states:
                    yield self._event(
                        ev.ToolCallStarted,
                        call_id=state.call.id,
                        name=state.call.name,
                        arguments=state.call.arguments,
                    )
                async for progress in self._run_batch(batch_states):
                    yield progress
                for state in batch_states:
                    assert state.message is not None
                    self._append(state.message)
                    meta = state.message.meta
                    yield self._event(
                        ev.ToolCallFinished,
                        call_id=state.call.id,
                        name=state.call.name,
                        result=state.message.content or "",
                        is_error=bool(meta.get("is_error")),
                        outcome=str(meta.get("outcome", "ok")),
                        diff=str(meta.get("diff") or ""),
                    )
        except BaseException:
            # Cancelled: every call gets exactly one result so the next request
            # is valid. Finished results are kept; the rest are marked.
            for state in states:
                if any(m.tool_call_id == state.call.id for m in self.messages if m.role == "tool"):
                    continue
                if state.message is not None:
                    self._append(state.message)
                elif state.started:
                    self._append(
                        Message(
                            role="tool",
                            tool_call_id=state.call.id,
                            content=UNKNOWN_OUTCOME,
                            meta={"outcome": "unknown", "is_error": True},
                        )
                    )
                else:
                    self._append(
                        Message(
                            role="tool",
                            tool_call_id=state.call.id,
                            content=NOT_STARTED,
                            meta={"outcome": "cancelled", "is_error": True},
                        )
                    )
            raise

    async def _run_batch(self, batch: list[_CallState]) -> AsyncIterator[ev.Event]:
        """Run one batch, yielding tool progress live while it runs.

        Tools report progress through ``ToolContext.tool_progress`` (MCP
        ``notifications/progress``); the reports reach the single event stream
        through a bounded memory stream. A full stream drops reports rather
        than slowing a tool down.
        """
        send, receive = anyio.create_memory_object_stream[ev.ToolProgress](256)

        def report(progress: ev.ToolProgress) -> None:
            try:
                send.send_nowait(progress)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        self.tool_context.tool_progress = report

        async def work() -> None:
            async with send:
                if len(batch) == 1:
                    await self._execute(batch[0])
                else:
                    async with anyio.create_task_group() as inner:
                        for state in batch:
                            inner.start_soon(self._execute, state)

        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            async with receive:
                async for progress in receive:
                    yield self._event(
                        ev.ToolProgress,
                        call_id=progress.call_id,
                        name=progress.name,
                        progress=progress.progress,
                        total=progress.total,
                        message=progress.message,
                    )

    def _repeat(self, call: ToolCall) -> int:
        try:
            canonical = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
        except (ValueError, TypeError, RecursionError):
            # Not JSON, or nested too deep to parse: the raw text is the key (the
            # call itself then gets an argument error result).
            canonical = call.arguments
        key = (call.name, canonical)
        if key == self._repeat_key:
            self._repeat_count += 1
        else:
            self._repeat_key, self._repeat_count = key, 1
        return self._repeat_count

    async def _execute(self, state: _CallState) -> None:
        call = state.call
        current_call_id.set(call.id)  # this task's context only
        count = self._repeat(call)
        try:
            result = await self._authorize_and_call(state)
        except Exception as exc:
            # Whatever a hostile call trips over (the policy on a NUL byte, a bug
            # in a tool), the model reads it as this call's error and the run goes on.
            result = internal_error(call.name, exc)
        text, bounded = bound_result(result.text)
        text += reminder(count, call.name)
        meta: dict[str, Any] = {"outcome": result.outcome}
        if result.is_error:
            meta["is_error"] = True
        if bounded:
            meta["full_content"] = result.text
        for key in ("diff",):
            if key in result.meta:
                meta[key] = result.meta[key]
        state.message = Message(role="tool", tool_call_id=call.id, content=text, meta=meta)

    async def _authorize_and_call(self, state: _CallState) -> ToolResult:
        call = state.call
        tool = self.tools.get(call.name)
        if tool is None:
            return ToolResult.error(
                f"unknown tool {call.name!r}; available tools: {', '.join(self.tools.names)}"
            )
        try:
            args = ToolRegistry.parse_arguments(call.arguments)
        except ToolArgumentError as exc:
            return ToolResult.error(f"{call.name}: {exc}")
        if self.gate is not None:
            preview = ""
            approver = getattr(self.gate, "approver", None)
            if getattr(approver, "interactive", False):
                verdict = self.gate.policy.decide(call.name, tool.read_only, args).verdict
                if verdict.name == "ASK":
                    preview = preview_diff(call.name, args, self.tool_context)
            auth = await self.gate.authorize(
                tool=call.name,
                read_only=tool.read_only,
                args=args,
                call_id=call.id,
                summary=summarize_call(call.name, args),
                preview=preview,
            )
            if not auth.allowed:
                return ToolResult(text=auth.message, is_error=True, outcome="denied")
        state.started = True
        return await self.tools.call(call.name, call.arguments, self.tool_context)
