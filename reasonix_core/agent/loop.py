"""The agent loop (seed 003).

One step: compaction at the threshold (the context manager) -> the request is
built once and frozen -> :class:`ModelCall` streams it through the unified retry
path, replaying the frozen bytes -> a clean final ends the turn; tool calls run,
their results are appended, and the next step begins. A provider overflow gets
one rescue (a summary or a truncation) and one rebuilt request. Any other
error ends the turn explicitly. No synthetic continuation, no hidden extra
requests.

A turn is a plain coroutine: each phase returns what the next one needs (the
frozen request, the reply, the tool calls) and sends its events to one sink
(``agent/event_sink.py``); a phase that ends the turn raises :class:`TurnOver`
with the turn's last event. :meth:`Agent.run` hands the sink's events to its
consumer in lockstep, so the event order is the order they were made in.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, TypeVar

from reasonix_core import events as ev
from reasonix_core.agent.budget import BUDGET_EXHAUSTED_KIND, BudgetMeter
from reasonix_core.agent.cache_ledger import CacheLedger, Prefix
from reasonix_core.agent.compaction_events import nothing_to_compact_text, outcome_events
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context import (
    CompactionRequired,
    ContextManager,
    Conversation,
    Sent,
    is_context_overflow,
)
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.event_sink import EventSink, event_stream
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
from reasonix_core.agent.tool_batch import ToolBatchRunner
from reasonix_core.agent.transcript import (
    FAILED_MARK,
    FAILURE,
    INTERRUPTED_MARK,
    repair_messages,
)
from reasonix_core.errors import (
    MISSING_REASONING_KIND,
    MissingToolCallReasoning,
    ProviderError,
    ReasoningReplayRequired,
)
from reasonix_core.messages import HOST_TURN, PASTED, Message, ToolCall
from reasonix_core.permission.gate import Gate
from reasonix_core.provider.base import PreparedRequest, Provider, Request
from reasonix_core.provider.output_ceiling import is_output_ceiling_refusal, parse_output_ceiling
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.registry import ToolRegistry
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.agent.snapshots import TurnSnapshots
    from reasonix_core.agent.turn_meta import TurnMeta
    from reasonix_core.agent.vision import VisionFallback
    from reasonix_core.images import ImagePart
    from reasonix_core.pasted import PastedSpan

log = logging.getLogger(__name__)
E = TypeVar("E", bound=ev.Event)

__all__ = ["Agent", "AgentOptions", "PriceFn", "TurnOver"]


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
    # What a turn's images become (agent/vision.py); None: sent as the provider decides.
    vision: VisionFallback | None = None


class TurnOver(Exception):
    """A phase ended the turn: ``final`` (TurnFinished or TurnFailed) is its last event."""

    def __init__(self, final: ev.TurnFinished | ev.TurnFailed) -> None:
        super().__init__(type(final).__name__)
        self.final = final


@dataclass(kw_only=True)
class _Recovery:
    """The recoveries one step has used: each is tried once."""

    rescued: bool = False  # an overflow's compaction
    replayed: bool = False  # reasoning sent back (ReasoningReplayRequired)
    ceiling_learned: bool = False  # the output ceiling a refusal named
    reasoning_retried: bool = False  # tool calls without their reasoning, resent


@dataclass(frozen=True, slots=True)
class _Frozen:
    """One step's request: the prepared bytes every retry replays, and the same
    request as the prompt cache reads it (the ledger compares these)."""

    prepared: PreparedRequest
    prefix: Prefix


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
        self.turns = 0
        self.checkpoints = checkpoints
        # A named prefix change owed to the next request (a chat rewind).
        self._pending_prefix_reason: PrefixChangeReason | None = None
        # Output ceilings learned from a provider's 400, per model (output_ceiling.py).
        self._output_ceilings: dict[str, int] = {}
        self._tool_runner = ToolBatchRunner(self, self._events)

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

    def append_message(self, msg: Message) -> None:
        """Append to the transcript and its session file (never rewritten)."""
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

    async def run(
        self, prompt: str, meta: TurnMeta | None = None
    ) -> AsyncGenerator[ev.Event, None]:
        """The turn's events as its phases make them: TurnStarted, then steps
        (prepare -> request with retry -> commit the answer, or run the tools)
        until one ends the turn with TurnFinished or TurnFailed. ``meta`` routes a
        Coordinator's turn; a single model has one route, so only its images are read."""
        images = meta.images if meta is not None else ()
        # Describing the images (a model without them, [agent] vision_model) comes
        # before the turn: its events (usage, retries, notices) in the order made.
        notices: list[ev.Event] = []
        descriptions = await self._describe_images(images, prompt, notices) if images else []
        for notice in notices:
            yield notice
        yield self._begin_turn(
            prompt,
            host_turn=meta is not None and meta.synthetic,
            images=images,
            descriptions=descriptions,
            pasted=meta.pasted if meta is not None else (),
        )
        try:
            async with aclosing(event_stream(self._turn)) as events:
                async for event in events:
                    yield event
        finally:
            if self.checkpoints is not None:
                await self.checkpoints.turn_end(self.turn_number())

    async def _turn(self, emit: EventSink) -> None:
        """Steps until one ends the turn; its last event is sent, then it returns."""
        try:
            for number in itertools.count(1):
                calls = await self._step(number, emit)
                await self._tool_runner.run(calls, emit)
        except TurnOver as over:
            await emit(over.final)

    async def _step(self, number: int, emit: EventSink) -> tuple[ToolCall, ...]:
        """One step; returns the tool calls its answer asks for (none: raises TurnOver)."""
        frozen = await self._prepare(number, emit)
        reply = await self._request_with_retry(number, frozen, emit)
        return await self._commit_answer(number, reply, emit)

    def turn_number(self) -> int:
        """The running turn: its user message's rank in the conversation."""
        return sum(1 for m in self.messages if m.role == "user")

    async def compact(self, focus: str = "") -> AsyncIterator[ev.Event]:
        """Manual compaction (``/compact [focus]``, ``reasonix compact``): prune and
        fold the history now, retrying even after an automatic failure; ``focus``
        tells the summary what to keep."""
        self._repair()

        async def manual(emit: EventSink) -> None:
            nothing = self.nothing_to_compact()
            if nothing:  # no transaction, no hook, no cache break: the one line
                await emit(self._events(ev.Notice, level="info", text=nothing))
                return
            try:
                await self._maintain(CompactionReason.MANUAL, emit, focus=focus)
            except CompactionRequired as exc:
                await emit(self._events(ev.Notice, level="error", text=str(exc)))

        async with aclosing(event_stream(manual)) as events:
            async for event in events:
                yield event

    def nothing_to_compact(self) -> str:
        """The line ``/compact`` gives when it would change nothing now (the context
        planner's reason), or "" when it would prune or summarise."""
        why = self.context.manual_blocker(self.messages, self.tools.fingerprint)
        return nothing_to_compact_text(why) if why else ""

    # -- the phases of a step ---------------------------------------------

    def _repair(self) -> None:
        for repair in repair_messages(self.messages):
            self.append_message(repair)

    async def _describe_images(
        self, images: tuple[ImagePart, ...], prompt: str, notices: list[ev.Event]
    ) -> list[str]:
        """Descriptions of the turn's images when the model takes none and a vision
        model is set (one extra request per image), else none: a model that takes
        images gets them directly (agent/vision.py)."""
        vision = self.options.vision
        if vision is None or vision.takes_images(self._model):
            return []
        if vision.describer is None:
            notices.append(
                self._events(
                    ev.Notice,
                    level="warning",
                    text=f"{self._model} does not take images; set [agent] vision_model to "
                    "have them described (the image is only noted)",
                )
            )
            return []
        from reasonix_core.agent.vision import describe_all

        def notice(level: Literal["info", "warning"], text: str) -> None:
            notices.append(self._events(ev.Notice, level=level, text=text))

        async def keep(event: ev.Event) -> None:
            notices.append(event)  # its usage and retries

        # The agent's own call machinery (retries, usage, cost, budget) over the vision
        # model's provider; a side request: its own ledger, not the session's records.
        call = ModelCall(
            provider=vision.describer.provider,
            retry=self.retry,
            events=self._events,
            price=self.model_call.price,
            clock=self.clock,
            budget=self.options.budget,
        )
        return await describe_all(vision.describer, call, images, prompt, keep, notice)

    def _begin_turn(
        self,
        prompt: str,
        host_turn: bool = False,
        images: tuple[ImagePart, ...] = (),
        descriptions: Sequence[str] = (),
        pasted: Sequence[PastedSpan] = (),
    ) -> ev.TurnStarted:
        self._repair()
        self._observe_attachments(prompt)
        first_turn = not any(m.role == "user" for m in self.messages)
        text = prompt
        meta: dict[str, object] = {HOST_TURN: True} if host_turn else {}
        if pasted:  # the prompt starts the content, so the offsets hold
            meta[PASTED] = [span.to_record() for span in pasted]
        if descriptions:
            # Hidden content of this turn (not drawn): what the executor reads instead.
            text = "\n\n".join([prompt, *descriptions])
        if self.context_suffix is not None:
            suffix = self.context_suffix(first_turn, prompt)
            if suffix:
                text = f"{text}\n\n{suffix}"
        self.append_message(
            Message(
                role="user",
                content=text,
                images=images,
                meta=meta,
            )
        )
        if self.checkpoints is not None:
            self.checkpoints.turn_started(self.turn_number())
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

    async def _check_limits(self, number: int, emit: EventSink) -> None:
        """The step limit and the task budget, at a step boundary (the previous
        step's tools have all answered): raises TurnOver when one is reached."""
        limit = self.options.max_steps
        if limit and number > limit:
            await emit(
                self._events(
                    ev.Notice, level="warning", text=f"stopped after {limit} steps (--max-steps)"
                )
            )
            raise TurnOver(self._events(ev.TurnFinished, stop_reason="max_steps", steps=number - 1))
        spent = self.options.budget.exhausted() if self.options.budget is not None else None
        if spent is not None:
            await emit(self._events(ev.Notice, level="warning", text=f"stopped: {spent}"))
            raise TurnOver(
                self._events(
                    ev.TurnFailed, error=spent, kind=BUDGET_EXHAUSTED_KIND, steps=number - 1
                )
            )

    async def _prepare(self, number: int, emit: EventSink) -> _Frozen:
        """The limits, context maintenance (only at the compaction threshold,
        before the request is built: seed 000 §3.6), then the frozen request."""
        await self._check_limits(number, emit)
        try:
            await self._maintain(CompactionReason.AUTO, emit)
        except CompactionRequired as exc:
            raise TurnOver(
                self._events(
                    ev.TurnFailed, error=str(exc), kind="compaction_required", steps=number - 1
                )
            ) from None
        reason = self._prefix_change()
        if reason:
            await emit(self._events(ev.PrefixChanged, reason=reason))
        frozen = self._freeze_request()
        await emit(self._events(ev.StepStarted, step=number, model=self._model))
        return frozen

    async def _request_with_retry(self, number: int, frozen: _Frozen, emit: EventSink) -> Reply:
        """The frozen request through ModelCall's retry path; a provider overflow
        gets one rescue (a summary or a truncation) and one rebuilt request, and tool
        calls without the reasoning their protocol needs one resend of the same bytes."""
        reply = Reply()
        recovery = _Recovery()
        while True:
            try:
                await self.model_call.request(
                    frozen.prepared,
                    Purpose(source=self.options.source),
                    emit,
                    reply=reply,
                    on_usage=self._observe_usage,
                    prefix=frozen.prefix,
                )
            except BaseException:
                # Cancelled mid-stream: keep what was said so the transcript
                # stays valid and the model knows.
                if reply.streaming:
                    self._commit_interrupted(reply)
                raise
            error = reply.error
            if error is None and self._reasoning_missing(frozen.prepared, reply):
                await self._resend_for_reasoning(number, reply, recovery, emit)
                continue
            if error is None:
                return reply
            frozen = await self._recover(number, reply, error, recovery, emit)

    async def _resend_for_reasoning(
        self, number: int, reply: Reply, recovery: _Recovery, emit: EventSink
    ) -> None:
        """Tool calls came without their reasoning: the same frozen bytes once
        more (never "" replayed in its place, which would hide the fault)."""
        if recovery.reasoning_retried:
            raise TurnOver(self._failed(MissingToolCallReasoning(self._model), reply, number))
        # Nothing of this answer is appended.
        recovery.reasoning_retried = True
        await emit(
            self._events(
                ev.Retrying,
                attempt=reply.attempts,
                delay=0.0,
                reason=f"{self._model}'s tool calls came without their reasoning",
                error_kind=MISSING_REASONING_KIND,
            )
        )

    async def _recover(
        self,
        number: int,
        reply: Reply,
        error: ProviderError,
        recovery: _Recovery,
        emit: EventSink,
    ) -> _Frozen:
        """The request to send after ``error``, each recovery at most once;
        raises TurnOver when the error ends the turn."""
        if isinstance(error, ReasoningReplayRequired) and not recovery.replayed:
            # A DeepSeek model behind a host not known as DeepSeek: the provider
            # now replays reasoning_content for it; rebuild and send once more.
            recovery.replayed = True
            await emit(
                self._events(
                    ev.Notice,
                    level="warning",
                    text=f"{self._model} asked for its reasoning to be sent back "
                    "(DeepSeek's protocol): retrying with it; set reasoning_protocol = "
                    '"deepseek" for this provider to skip this',
                )
            )
            await emit(self._events(ev.PrefixChanged, reason=PrefixChangeReason.REASONING_REPLAY))
            return self._freeze_request()
        if is_output_ceiling_refusal(error) and not recovery.ceiling_learned:
            recovery.ceiling_learned = True
            await self._learn_output_ceiling(number, reply, error, emit)
            return self._freeze_request()
        if recovery.rescued or not is_context_overflow(error):
            raise TurnOver(self._failed(error, reply, number))
        recovery.rescued = True
        await self._rescue_overflow(number, error, emit)
        return self._freeze_request()

    async def _learn_output_ceiling(
        self, number: int, reply: Reply, error: ProviderError, emit: EventSink
    ) -> None:
        """The provider refused max_tokens as too large: keep the ceiling it named."""
        ceiling = parse_output_ceiling(error.message)
        if ceiling is None:
            raise TurnOver(
                self._failed(
                    ProviderError(
                        f"{error.message} (the provider refused max_tokens as too "
                        "large without naming its ceiling: set max_output_tokens for "
                        f"{self._model} in the provider's config)",
                        status=error.status,
                    ),
                    reply,
                    number,
                )
            )
        # Kept for the session: every later request of this model is sized to it.
        self._output_ceilings[self._model] = ceiling
        await emit(
            self._events(
                ev.Notice,
                level="warning",
                text=f"{self._model} accepts at most {ceiling} output tokens: "
                "retrying with that ceiling",
            )
        )

    def _reasoning_missing(self, prepared: PreparedRequest, reply: Reply) -> bool:
        """Tool calls the answer keeps, without the reasoning its request's protocol
        replays with them (``PreparedRequest.calls_need_reasoning``)."""
        end = reply.end
        assert end is not None
        if not end.tool_calls or end.finish_reason == "length" or reply.reasoning:
            return False
        return prepared.calls_need_reasoning

    async def _rescue_overflow(self, number: int, overflow: ProviderError, emit: EventSink) -> None:
        try:
            await self._overflow_compaction(overflow, emit)
        except CompactionRequired as exc:
            raise TurnOver(
                self._events(
                    ev.TurnFailed,
                    error=str(exc),
                    kind="compaction_required",
                    status=overflow.status,
                    steps=number,
                )
            ) from None

    async def _commit_answer(
        self, number: int, reply: Reply, emit: EventSink
    ) -> tuple[ToolCall, ...]:
        """Append the answer; returns its tool calls. Without any it ends the turn."""
        end = reply.end
        assert end is not None
        calls = end.tool_calls
        if calls and end.finish_reason == "length":
            calls = ()
            await emit(
                self._events(
                    ev.Notice,
                    level="warning",
                    text="the response hit the output limit mid tool call; the call was dropped",
                )
            )
        self.append_message(
            Message(
                role="assistant",
                content=reply.text,
                reasoning_content=reply.reasoning or None,
                tool_calls=calls,
                meta=reply.replay_meta,
            )
        )
        if calls:
            return calls
        if end.finish_reason == "length":
            await emit(
                self._events(
                    ev.Notice, level="warning", text="the answer was cut at the output token limit"
                )
            )
        elif end.finish_reason == "content_filter":
            await emit(
                self._events(
                    ev.Notice,
                    level="warning",
                    text="the provider's content filter stopped the answer",
                )
            )
        raise TurnOver(
            self._events(
                ev.TurnFinished,
                stop_reason=end.finish_reason or "stop",
                text=reply.text,
                steps=number,
            )
        )

    # -- the model --------------------------------------------------------

    def _conversation(self, emit: EventSink, focus: str = "") -> Conversation:
        """What the context manager works on; it never sees the Agent itself.
        Its summary requests send their events to ``emit``."""

        async def summarize(
            messages: Sequence[Message], *, with_tools: bool, max_output_tokens: int
        ) -> Reply:
            return await self._summarize(
                messages, emit, with_tools=with_tools, max_output_tokens=max_output_tokens
            )

        return Conversation(
            messages=self.messages,
            tools=self.tools.fingerprint,
            summarize=summarize,
            focus=focus,
        )

    async def _maintain(
        self, reason: CompactionReason, emit: EventSink, *, force: bool = False, focus: str = ""
    ) -> None:
        """Ask the context manager whether to compact; if so, run it and turn
        its outcome into this agent's events (raises CompactionRequired)."""
        conversation = self._conversation(emit, focus)
        decision = await self.context.decide(conversation, reason, force=force)
        if decision is None:
            if reason is CompactionReason.MANUAL and self.context.busy:
                await emit(
                    self._events(ev.Notice, level="warning", text="a compaction is already running")
                )
            return
        hooks = self.tool_context.env.hooks if not self.options.agent_path else None
        trigger = "manual" if reason is CompactionReason.MANUAL else "auto"
        if hooks is not None and hooks.has("PreCompact"):
            await hooks.fire(
                "PreCompact",
                {"trigger": trigger, "custom_instructions": focus},
                subject=(trigger,),
                session_id=self.session_id,
            )
            await self.emit_hook_reports(emit)
        with self.context.running():
            await emit(self._events(ev.CompactionStarted, reason=reason.value))
            outcome = await self.context.compact(decision, conversation)
            for event in outcome_events(outcome, self._events):
                await emit(event)
        if hooks is not None and hooks.has("SessionStart"):
            # Claude Code's SessionStart "compact": context for after the summary,
            # carried in the next user turn.
            started = await hooks.fire(
                "SessionStart", {"source": "compact"}, subject=("compact",),
                session_id=self.session_id,
            )  # fmt: skip
            hooks.add_context(started.context)
            await self.emit_hook_reports(emit)

    async def emit_hook_reports(self, emit: EventSink) -> None:
        """The hook runs not yet in the stream, as HookRan events (docs/HOOKS.md)."""
        hooks = self.tool_context.env.hooks
        if hooks is None:
            return
        for report in hooks.take_reports():
            await emit(self._events(ev.HookRan, **report.fields()))

    def make_event(self, cls: type[E], **fields: object) -> E:
        """An event numbered in this agent's stream (for the session's own phases:
        its hooks around a turn)."""
        return self._events(cls, **fields)

    async def _overflow_compaction(self, overflow: ProviderError, emit: EventSink) -> None:
        """The provider refused the step's request as too long: learn what it
        said, then at most one summary (or a truncation) before the one retry."""
        reading = self.context.read_overflow(overflow, self._sent)
        if reading.learned_window is not None:
            await emit(
                self._events(
                    ev.Notice,
                    level="warning",
                    text=(
                        f"the provider's context window is {reading.learned_window:,} tokens; "
                        "using that from now on"
                    ),
                )
            )
        await self._maintain(CompactionReason.OVERFLOW, emit, force=reading.prompt_tokens is None)

    def _freeze_request(self) -> _Frozen:
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
        return _Frozen(self.model_call.prepare(request), self.ledger.render(request))

    def _observe_usage(self, usage: Usage) -> None:
        """The provider's prompt count for the request just sent: re-anchor the estimate."""
        self.context.observe(self._sent, usage.prompt_tokens)

    async def _summarize(
        self,
        messages: Sequence[Message],
        emit: EventSink,
        *,
        with_tools: bool,
        max_output_tokens: int,
    ) -> Reply:
        """Compaction's summary request: this agent's model, effort and tools."""
        request = Request(
            model=self._model,
            messages=tuple(messages),
            tools=self.tools.schemas() if with_tools else (),
            effort=self.options.effort,
            max_output_tokens=max_output_tokens,
        )
        return await self.model_call.request(self.model_call.prepare(request), COMPACTION, emit)

    def _failed(self, exc: ProviderError, reply: Reply, number: int) -> ev.TurnFailed:
        attempts = reply.attempts
        message = str(exc)
        if exc.retryable:
            message = f"{message} (gave up after {attempts} attempts)"
        if self.messages and self.messages[-1].role == "user":
            # Close the turn now, honestly: left open, the next turn's repair would
            # close it as an interruption by the user. The error is kept for a
            # resumed view (meta: never sent).
            self.append_message(
                Message(role="assistant", content=FAILED_MARK, meta={FAILURE: message})
            )
        return self._events(
            ev.TurnFailed,
            error=message,
            kind=exc.kind,
            status=exc.status,
            steps=number,
            details={"attempts": attempts},
        )

    def _commit_interrupted(self, reply: Reply) -> None:
        text = (reply.text + "\n\n" if reply.text else "") + INTERRUPTED_MARK
        self.append_message(
            Message(role="assistant", content=text, reasoning_content=reply.reasoning or None)
        )
