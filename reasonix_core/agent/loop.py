"""The agent loop (seed 003).

One step: compaction at the threshold (the context manager) -> the request is
built once and frozen -> :class:`ModelCall` streams it through the unified retry
path, replaying the frozen bytes -> a clean final ends the turn; tool calls run,
their results are appended, and the next step begins. A provider overflow gets
one rescue (a summary or a truncation) and one rebuilt request. Any other
error ends the turn explicitly. No synthetic continuation, no hidden extra
requests.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.budget import BUDGET_EXHAUSTED_KIND, BudgetMeter
from reasonix_core.agent.cache_ledger import CacheLedger, Prefix
from reasonix_core.agent.compaction_events import outcome_events
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context import (
    CompactionOutcome,
    CompactionRequired,
    ContextManager,
    Conversation,
    Sent,
    is_context_overflow,
)
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.model_call import (
    COMPACTION,
    ModelCall,
    PriceFn,
    Purpose,
    Reply,
    no_price,
)
from reasonix_core.agent.prefix_change import PREFIX_KEY_PARTS, PrefixChangeReason
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.agent.session import SessionStore
from reasonix_core.agent.transcript import (
    FAILED_MARK,
    INTERRUPTED_MARK,
    NOT_STARTED,
    UNKNOWN_OUTCOME,
    reminder,
    repair_messages,
)
from reasonix_core.errors import (
    MISSING_REASONING_KIND,
    MissingToolCallReasoning,
    ProviderError,
    ReasoningReplayRequired,
    ToolArgumentError,
)
from reasonix_core.messages import HOST_TURN, Message, ToolCall
from reasonix_core.permission.gate import Gate
from reasonix_core.permission.summary import summarize_call
from reasonix_core.provider.base import PreparedRequest, Provider, Request
from reasonix_core.provider.output_ceiling import is_output_ceiling_refusal, parse_output_ceiling
from reasonix_core.tool.base import (
    ToolContext,
    ToolFamily,
    ToolResult,
    current_call_id,
    current_transcript,
)
from reasonix_core.tool.kept_results import KeptBudget
from reasonix_core.tool.preview import precondition_failure, preview_diff
from reasonix_core.tool.registry import ToolRegistry, internal_error
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.agent.runner import TurnMeta
    from reasonix_core.agent.snapshots import TurnSnapshots

log = logging.getLogger(__name__)

__all__ = ["Agent", "AgentOptions", "PriceFn"]


@dataclass(kw_only=True)
class AgentOptions:
    """How the agent runs: effort, limits and where its events come from."""

    effort: str = "auto"
    max_steps: int = 0
    # 0 automatic, > 0 explicit cap, < 0 omit (seed 000 §3.1)
    max_output_tokens: int = 0
    source: str = "executor"
    agent_path: tuple[str, ...] = ()
    # Task budgets (budget.py), shared by every agent of the task; None: no budget.
    budget: BudgetMeter | None = None


@dataclass(kw_only=True)
class _Step:
    """One step of a turn, carried through the phases of :meth:`Agent.run`."""

    number: int
    prepared: PreparedRequest | None = None
    # The same request as the prompt cache reads it (the ledger compares these).
    prefix: Prefix | None = None
    reply: Reply = field(default_factory=Reply)
    calls: tuple[ToolCall, ...] = ()
    # The turn ended in this step (TurnFinished or TurnFailed was yielded).
    over: bool = False


@dataclass(kw_only=True)
class _CallState:
    """One tool call of a batch: whether it started and its result message."""

    call: ToolCall
    started: bool = False
    message: Message | None = None


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
        gate: Gate | None = None,
        retry: RetryPolicy | None = None,
        options: AgentOptions | None = None,
        price: PriceFn = no_price,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        # (first_turn, raw user prompt) -> volatile text appended to the user turn.
        context_suffix: Callable[[bool, str], str] | None = None,
        context: ContextManager,
        # Snapshots before writing tools and at turn end (docs/REWIND.md).
        checkpoints: TurnSnapshots | None = None,
    ) -> None:
        self.provider = provider
        self._model = model
        self.tools = tools
        self.tool_context = tool_context
        self.session = session
        self.gate = gate
        self.retry = retry or RetryPolicy()
        self.options = options or AgentOptions()
        self.clock = clock
        self.context_suffix = context_suffix
        self.messages: list[Message] = list(history)
        if not self.messages or self.messages[0].role != "system":
            self.messages.insert(0, Message(role="system", content=system_prompt))
        # What the full copies of bounded results may still add to the session.
        self._kept = KeptBudget(self.messages)
        # Every billed request is recorded beside the transcript; the executor's
        # are checked for cache breaks (cache_ledger.py).
        self.ledger = CacheLedger.for_session(session.path, self.options.agent_path)
        self._events = EventSequence(self.options.agent_path, observer=self.ledger.observe)
        self.model_call = ModelCall(
            provider=provider,
            retry=self.retry,
            events=self._events,
            price=price,
            clock=clock,
            ledger=self.ledger,
            budget=self.options.budget,
        )
        self._last_prefix: tuple[str, ...] | None = None
        # The view each request sends: checkpoint projection + append-only tail. It
        # owns the context window (the output budget is sized against it too).
        self.context = context
        self._sent: Sent | None = None
        self._repeat_key: tuple[str, str] | None = None
        self._repeat_count = 0
        self.turns = 0
        self.checkpoints = checkpoints
        # A named prefix change owed to the next request (a chat rewind).
        self._pending_prefix_reason: PrefixChangeReason | None = None
        # Output ceilings learned from a provider's 400, per model (output_ceiling.py).
        self._output_ceilings: dict[str, int] = {}

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
            self.context.set_window(context_window)

    def set_effort(self, effort: str) -> None:
        self.options.effort = effort

    # -- helpers ----------------------------------------------------------

    def _append(self, msg: Message) -> None:
        self.messages.append(msg)
        self.session.append(msg)

    def estimated_prompt_tokens(self) -> int:
        """The next request's prompt: the last real count plus what was appended."""
        return self.context.estimate(self.messages, self.tools.fingerprint)

    def _max_output(self) -> int | None:
        wanted = self._wanted_output()
        ceiling = self._output_ceilings.get(self._model)
        if ceiling is None:
            return wanted
        return ceiling if wanted is None else min(wanted, ceiling)

    def _wanted_output(self) -> int | None:
        setting = self.options.max_output_tokens
        if setting < 0:
            return None
        window = self.context.window
        remaining = self.context.output_room(self.estimated_prompt_tokens())
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

    def _prefix_change(self) -> PrefixChangeReason | None:
        key = self._prefix_key()
        previous, self._last_prefix = self._last_prefix, key
        if self._pending_prefix_reason is not None:
            reason, self._pending_prefix_reason = self._pending_prefix_reason, None
            return reason
        if previous is None or previous == key:
            return None
        return next(
            part for part, a, b in zip(PREFIX_KEY_PARTS, previous, key, strict=True) if a != b
        )

    def note_prefix_baseline(self, tools_fingerprint: str, model: str, effort: str) -> None:
        """For a continued session: what the previous run's prefix was."""
        self._last_prefix = (self.messages[0].content or "", tools_fingerprint, model, effort)

    def note_rewound(self) -> None:
        """The conversation was rewound: the next request extends an earlier
        request, not the last one sent, and says why (``PrefixChanged("rewind")``)."""
        self._pending_prefix_reason = PrefixChangeReason.REWIND

    # -- the turn ---------------------------------------------------------

    async def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncIterator[ev.Event]:
        """prepare -> request with retry -> commit the answer, or run the tools
        and take the next step. Every phase says in ``step.over`` whether the
        turn ended (it then yielded TurnFinished or TurnFailed). ``meta`` routes a
        Coordinator's turn; a single model has one route, so it is not read here."""
        yield self._begin_turn(prompt, host_turn=meta is not None and meta.synthetic)
        try:
            async with aclosing(self._steps()) as events:
                async for event in events:
                    yield event
        finally:
            if self.checkpoints is not None:
                await self.checkpoints.turn_end(self._turn_number())

    async def _steps(self) -> AsyncIterator[ev.Event]:
        phases = (self._prepare, self._request_with_retry, self._commit_answer)
        for number in itertools.count(1):
            step = _Step(number=number)
            for phase in phases:
                async with aclosing(phase(step)) as events:
                    async for event in events:
                        yield event
                if step.over:
                    return
            async with aclosing(self._run_tools(step.calls)) as events:
                async for event in events:
                    yield event

    def _turn_number(self) -> int:
        """The running turn: its user message's rank in the conversation."""
        return sum(1 for m in self.messages if m.role == "user")

    async def compact(self, focus: str = "") -> AsyncIterator[ev.Event]:
        """Manual compaction (``/compact [focus]``, ``reasonix compact``): prune and
        fold the history now, retrying even after an automatic failure; ``focus``
        tells the summary what to keep."""
        self._repair()
        try:
            maintenance = self._maintain(CompactionReason.MANUAL, focus=focus)
            async with aclosing(maintenance) as events:
                async for event in events:
                    yield event
        except CompactionRequired as exc:
            yield self._events(ev.Notice, level="error", text=str(exc))

    # -- the phases of a step ---------------------------------------------

    def _repair(self) -> None:
        for repair in repair_messages(self.messages):
            self._append(repair)

    def _begin_turn(self, prompt: str, host_turn: bool = False) -> ev.TurnStarted:
        self._repair()
        self._observe_attachments(prompt)
        first_turn = not any(m.role == "user" for m in self.messages)
        text = prompt
        if self.context_suffix is not None:
            suffix = self.context_suffix(first_turn, prompt)
            if suffix:
                text = f"{prompt}\n\n{suffix}"
        self._append(
            Message(role="user", content=text, meta={HOST_TURN: True} if host_turn else {})
        )
        if self.checkpoints is not None:
            self.checkpoints.turn_started(self._turn_number())
        self.turns += 1
        top_level = self.options.source == "executor" and not self.options.agent_path
        if self.options.budget is not None and top_level:
            self.options.budget.restart()  # a budget is per task: a top-level turn
        self.context.begin_turn()
        return self._events(ev.TurnStarted, session_id=self.session_id, prompt=prompt)

    def _observe_attachments(self, prompt: str) -> None:
        """Files the user attached whole with ``@`` are in the transcript: the model has
        seen them at this version, as after a read_file (issue 14: no FS_NOT_OBSERVED)."""
        if '<file path="' not in prompt:
            return
        from reasonix_core.command.mentions import observe_attached
        from reasonix_core.tool.builtin._fs import services

        _, ledger = services(self.tool_context)
        observe_attached(prompt, self.tool_context.workspace, ledger)

    async def _prepare(self, step: _Step) -> AsyncIterator[ev.Event]:
        """The step limit, context maintenance (only at the compaction threshold,
        before the request is built: seed 000 §3.6), then the frozen request."""
        limit = self.options.max_steps
        if limit and step.number > limit:
            yield self._events(
                ev.Notice, level="warning", text=f"stopped after {limit} steps (--max-steps)"
            )
            yield self._events(ev.TurnFinished, stop_reason="max_steps", steps=step.number - 1)
            step.over = True
            return
        spent = self.options.budget.exhausted() if self.options.budget is not None else None
        if spent is not None:
            # A step boundary: the previous step's tools have all answered.
            yield self._events(ev.Notice, level="warning", text=f"stopped: {spent}")
            yield self._events(
                ev.TurnFailed, error=spent, kind=BUDGET_EXHAUSTED_KIND, steps=step.number - 1
            )
            step.over = True
            return
        try:
            maintenance = self._maintain(CompactionReason.AUTO)
            async with aclosing(maintenance) as events:
                async for event in events:
                    yield event
        except CompactionRequired as exc:
            yield self._events(
                ev.TurnFailed, error=str(exc), kind="compaction_required", steps=step.number - 1
            )
            step.over = True
            return
        reason = self._prefix_change()
        if reason:
            yield self._events(ev.PrefixChanged, reason=reason)
        step.prepared, step.prefix = self._freeze_request()
        yield self._events(ev.StepStarted, step=step.number, model=self._model)

    async def _request_with_retry(self, step: _Step) -> AsyncIterator[ev.Event]:
        """The frozen request through ModelCall's retry path; a provider overflow
        gets one rescue (a summary or a truncation) and one rebuilt request, and tool
        calls without the reasoning their protocol needs one resend of the same bytes."""
        rescued = replayed = ceiling_learned = reasoning_retried = False
        while True:
            assert step.prepared is not None
            purpose = Purpose(source=self.options.source)
            call = self.model_call.request(
                step.prepared,
                step.reply,
                purpose,
                on_usage=self._observe_usage,
                prefix=step.prefix,
            )
            try:
                async with aclosing(call) as events:
                    async for event in events:
                        yield event
            except BaseException:
                # Cancelled mid-stream: keep what was said so the transcript
                # stays valid and the model knows.
                if step.reply.streaming:
                    self._commit_interrupted(step.reply)
                raise
            error = step.reply.error
            if error is None and self._reasoning_missing(step):
                if reasoning_retried:
                    yield self._failed(MissingToolCallReasoning(self._model), step)
                    step.over = True
                    return
                # Never replay "" in its place (it would hide the fault): the same
                # frozen bytes once more; nothing of this answer is appended.
                reasoning_retried = True
                yield self._events(
                    ev.Retrying,
                    attempt=step.reply.attempts,
                    delay=0.0,
                    reason=f"{self._model}'s tool calls came without their reasoning",
                    error_kind=MISSING_REASONING_KIND,
                )
                continue
            if error is None:
                return
            if isinstance(error, ReasoningReplayRequired) and not replayed:
                # A DeepSeek model behind a host not known as DeepSeek: the provider
                # now replays reasoning_content for it; rebuild and send once more.
                replayed = True
                yield self._events(
                    ev.Notice,
                    level="warning",
                    text=f"{self._model} asked for its reasoning to be sent back "
                    "(DeepSeek's protocol): retrying with it; set reasoning_protocol = "
                    '"deepseek" for this provider to skip this',
                )
                yield self._events(ev.PrefixChanged, reason=PrefixChangeReason.REASONING_REPLAY)
                step.prepared, step.prefix = self._freeze_request()
                continue
            if is_output_ceiling_refusal(error) and not ceiling_learned:
                ceiling_learned = True
                ceiling = parse_output_ceiling(error.message)
                if ceiling is None:
                    yield self._failed(
                        ProviderError(
                            f"{error.message} (the provider refused max_tokens as too "
                            "large without naming its ceiling: set max_output_tokens for "
                            f"{self._model} in the provider's config)",
                            status=error.status,
                        ),
                        step,
                    )
                    step.over = True
                    return
                # Kept for the session: every later request of this model is sized to it.
                self._output_ceilings[self._model] = ceiling
                yield self._events(
                    ev.Notice,
                    level="warning",
                    text=f"{self._model} accepts at most {ceiling} output tokens: "
                    "retrying with that ceiling",
                )
                step.prepared, step.prefix = self._freeze_request()
                continue
            if rescued or not is_context_overflow(error):
                yield self._failed(error, step)
                step.over = True
                return
            rescued = True
            async with aclosing(self._rescue_overflow(step, error)) as events:
                async for event in events:
                    yield event
            if step.over:
                return
            step.prepared, step.prefix = self._freeze_request()

    def _reasoning_missing(self, step: _Step) -> bool:
        """Tool calls the answer keeps, without the reasoning its request's protocol
        replays with them (``PreparedRequest.calls_need_reasoning``)."""
        end = step.reply.end
        assert step.prepared is not None and end is not None
        if not end.tool_calls or end.finish_reason == "length" or step.reply.reasoning:
            return False
        return step.prepared.calls_need_reasoning

    async def _rescue_overflow(
        self, step: _Step, overflow: ProviderError
    ) -> AsyncIterator[ev.Event]:
        try:
            async with aclosing(self._overflow_compaction(overflow)) as events:
                async for event in events:
                    yield event
        except CompactionRequired as exc:
            yield self._events(
                ev.TurnFailed,
                error=str(exc),
                kind="compaction_required",
                status=overflow.status,
                steps=step.number,
            )
            step.over = True

    async def _commit_answer(self, step: _Step) -> AsyncIterator[ev.Event]:
        """Append the answer; without tool calls it ends the turn."""
        reply = step.reply
        end = reply.end
        assert end is not None
        calls = end.tool_calls
        if calls and end.finish_reason == "length":
            calls = ()
            yield self._events(
                ev.Notice,
                level="warning",
                text="the response hit the output limit mid tool call; the call was dropped",
            )
        self._append(
            Message(
                role="assistant",
                content=reply.text,
                reasoning_content=reply.reasoning or None,
                tool_calls=calls,
                # Replayed unchanged by providers that sign reasoning (Anthropic).
                meta={"reasoning_signature": end.reasoning_signature}
                if end.reasoning_signature
                else {},
            )
        )
        if calls:
            step.calls = calls
            return
        if end.finish_reason == "length":
            yield self._events(
                ev.Notice, level="warning", text="the answer was cut at the output token limit"
            )
        elif end.finish_reason == "content_filter":
            yield self._events(
                ev.Notice,
                level="warning",
                text="the provider's content filter stopped the answer",
            )
        yield self._events(
            ev.TurnFinished,
            stop_reason=end.finish_reason or "stop",
            text=reply.text,
            steps=step.number,
        )
        step.over = True

    # -- the model --------------------------------------------------------

    def _conversation(self, focus: str = "") -> Conversation:
        """What the context manager works on; it never sees the Agent itself."""
        return Conversation(
            messages=self.messages,
            tools=self.tools.fingerprint,
            summarize=self._summarize,
            focus=focus,
        )

    async def _maintain(
        self, reason: CompactionReason, *, force: bool = False, focus: str = ""
    ) -> AsyncIterator[ev.Event]:
        """Ask the context manager whether to compact; if so, run it and turn
        its outcome into this agent's events (raises CompactionRequired)."""
        conversation = self._conversation(focus)
        decision = await self.context.decide(conversation, reason, force=force)
        if decision is None:
            if reason is CompactionReason.MANUAL and self.context.busy:
                yield self._events(
                    ev.Notice, level="warning", text="a compaction is already running"
                )
            return
        with self.context.running():
            yield self._events(ev.CompactionStarted, reason=reason.value)
            outcome: CompactionOutcome | None = None
            async with aclosing(self.context.compact(decision, conversation)) as work:
                async for item in work:
                    if isinstance(item, CompactionOutcome):
                        outcome = item
                    else:
                        yield item
            assert outcome is not None
            for event in outcome_events(outcome, self._events):
                yield event

    async def _overflow_compaction(self, overflow: ProviderError) -> AsyncIterator[ev.Event]:
        """The provider refused the step's request as too long: learn what it
        said, then at most one summary (or a truncation) before the one retry."""
        reading = self.context.read_overflow(overflow, self._sent)
        if reading.learned_window is not None:
            yield self._events(
                ev.Notice,
                level="warning",
                text=(
                    f"the provider's context window is {reading.learned_window:,} tokens; "
                    "using that from now on"
                ),
            )
        rescue = self._maintain(CompactionReason.OVERFLOW, force=reading.prompt_tokens is None)
        async with aclosing(rescue) as events:
            async for event in events:
                yield event

    def _freeze_request(self) -> tuple[PreparedRequest, Prefix]:
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
        return self.model_call.prepare(request), self.ledger.render(request)

    def _observe_usage(self, usage: Usage) -> None:
        """The provider's prompt count for the request just sent: re-anchor the estimate."""
        self.context.observe(self._sent, usage.prompt_tokens)

    async def _summarize(
        self,
        messages: Sequence[Message],
        *,
        with_tools: bool,
        max_output_tokens: int,
        reply: Reply,
    ) -> AsyncIterator[ev.Event]:
        """Compaction's summary request: this agent's model, effort and tools."""
        request = Request(
            model=self._model,
            messages=tuple(messages),
            tools=self.tools.schemas() if with_tools else (),
            effort=self.options.effort,
            max_output_tokens=max_output_tokens,
        )
        call = self.model_call.request(self.model_call.prepare(request), reply, COMPACTION)
        async with aclosing(call) as events:
            async for event in events:
                yield event

    def _failed(self, exc: ProviderError, step: _Step) -> ev.TurnFailed:
        if self.messages and self.messages[-1].role == "user":
            # Close the turn now, honestly: left open, the next turn's repair would
            # close it as an interruption by the user.
            self._append(Message(role="assistant", content=FAILED_MARK))
        attempts = step.reply.attempts
        message = str(exc)
        if exc.retryable:
            message = f"{message} (gave up after {attempts} attempts)"
        return self._events(
            ev.TurnFailed,
            error=message,
            kind=exc.kind,
            status=exc.status,
            steps=step.number,
            details={"attempts": attempts},
        )

    def _commit_interrupted(self, reply: Reply) -> None:
        text = (reply.text + "\n\n" if reply.text else "") + INTERRUPTED_MARK
        self._append(
            Message(role="assistant", content=text, reasoning_content=reply.reasoning or None)
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
                    yield self._events(
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
                    yield self._events(
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
        than slowing a tool down. Delegation tools forward their children's
        events through ``ToolContext.child_events`` into the same stream.
        """
        send, receive = anyio.create_memory_object_stream[ev.Event](256)

        def report(progress: ev.ToolProgress) -> None:
            try:
                send.send_nowait(progress)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        async def forward(event: ev.Event) -> None:
            # A subagent's events: never dropped (the metrics count them), so
            # a full stream waits for this stream's consumer.
            try:
                await send.send(event)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        self.tool_context.tool_progress = report
        self.tool_context.child_events = forward

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
                    if not isinstance(progress, ev.ToolProgress):
                        yield self._events.adopt(progress)
                        continue
                    yield self._events(
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
        # This agent's own results for session:tool_result (a child's calls set theirs).
        current_transcript.set(self.messages)
        count = self._repeat(call)
        try:
            result = await self._authorize_and_call(state)
        except Exception as exc:
            # Whatever a hostile call trips over (the policy on a NUL byte, a bug
            # in a tool), the model reads it as this call's error and the run goes on.
            result = internal_error(call.name, exc)
        text, kept = self._kept.bound(result.text, call.id)
        text += reminder(count, call.name)
        meta: dict[str, Any] = {"outcome": result.outcome}
        if result.is_error:
            meta["is_error"] = True
        meta.update(kept)
        if "diff" in result.meta:
            meta["diff"] = result.meta["diff"]
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
            auth = await self.gate.authorize(
                tool=call.name,
                read_only=tool.read_only,
                args=args,
                call_id=call.id,
                summary=summarize_call(call.name, args),
                # Built only when the gate will show it to someone.
                preview=lambda: preview_diff(call.name, args, self.tool_context),
                # A write sure to fail (a file never read) fails before anyone is asked
                # to approve its diff.
                precheck=lambda: precondition_failure(call.name, args, self.tool_context),
            )
            if not auth.allowed:
                if auth.precondition_failed:
                    return ToolResult.error(auth.message)
                return ToolResult(text=auth.message, is_error=True, outcome="denied")
        if self.checkpoints is not None and tool.family != ToolFamily.READ:
            # Anything but a file read may change files (an MCP tool too, whatever
            # it declares): the workspace as it was before the call.
            await self.checkpoints.before_tool(self._turn_number(), call.name, args)
        state.started = True
        return await self.tools.call(call.name, call.arguments, self.tool_context)
