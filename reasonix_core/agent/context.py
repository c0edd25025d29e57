"""Context management: cache-first compaction at one threshold (seed 000 §3.6).

The canonical transcript (``Agent.messages``, mirrored by the session JSONL) is
append-only and never rewritten. What a provider sees is the **view**: the
installed checkpoint (a projection of the canonical messages it covers) plus
the canonical messages appended after it. Below the trigger nothing changes, so
every request is a byte-exact extension of the previous one and DeepSeek's
prefix cache keeps hitting.

At ``trigger = floor(context_window × compact_ratio)`` one single-flight
maintenance transaction runs before the step's request is built:

1. prune: tool results over 8192 code points become ``4096 head + marker +
   1024 tail`` (in the projection; the canonical text is untouched). If that
   brings the view under the trigger, no summary is requested.
2. summary: the contiguous old prefix of the view is summarised and only the
   most recent 16% of the window is kept verbatim (never splitting an
   assistant tool call from its results). The summary request is the normal
   request cut at a unit boundary - same system prompt, same message bytes,
   same tools schema - plus one final user instruction, so it hits the cache.
   A later threshold summarises a view that starts with the previous summary:
   previous summary + new history merge into one digest.
3. truncate: at the hard limit (or on a provider overflow) when no summary can
   form, a lossy projection blanks the oldest tool results, then drops the
   oldest replay units, with explicit markers; if even that cannot get under
   the trigger, :class:`CompactionRequired` is raised.

Every installed projection is a new *generation*, persisted beside the
transcript (``<session>.context.json``); a restart restores it. Failures are
recorded per generation and are not retried automatically (for pay) until the
view has grown by another 5% of the window; manual compaction always retries.

The parts, one module each: ``context_projection`` (what is sent: entries,
checkpoints and their records), ``context_planning`` (pure: what to prune,
where to cut, what a truncation keeps), ``context_compactor`` (async: one
summary by request or chunked fold), ``context_overflow`` (a provider's
overflow wording) and this module, the manager that owns the state and runs
the transaction. The names below stay importable from here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from reasonix_core.agent.compaction_meta import FailureStatus, ProjectionKind
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context_compactor import (
    BOUNDED_TOOL_CHARS,
    REPLAN_LIMIT,
    Compactor,
)
from reasonix_core.agent.context_overflow import is_context_overflow, parse_overflow
from reasonix_core.agent.context_planning import (
    DEFAULT_COMPACT_RATIO,
    HEADROOM_MIN,
    HEADROOM_RATIO,
    KEEP_RATIO,
    MAX_PRESSURE_SUMMARIES,
    RETRY_GROWTH_RATIO,
    SUMMARY_OUTPUT_CAP,
    Budgets,
    SummarySource,
    headroom_for,
    may_summarise,
    needs_compaction,
    needs_truncation,
    nothing_to_compact,
    prune,
    trigger_tokens,
    truncate,
)
from reasonix_core.agent.context_projection import (
    BLANK_MARKER,
    CHECKPOINT_VERSION,
    PRUNE_HEAD,
    PRUNE_LIMIT,
    PRUNE_MARKER,
    PRUNE_TAIL,
    SUMMARY_ACK,
    TRUNCATE_ACK,
    Checkpoint,
    Entry,
    Failure,
    message_digest,
    prune_text,
    transform,
    view_entries,
)
from reasonix_core.agent.frozen_prefix import (
    frozen_prefix_tokens,
    prefix_over_threshold,
    prefix_over_window,
)
from reasonix_core.agent.prefix_change import PrefixChangeReason
from reasonix_core.agent.summary_call import Summarize, summary_request
from reasonix_core.agent.tokens import TokenEstimator
from reasonix_core.errors import ProviderError, ReasonixError
from reasonix_core.messages import Message

if TYPE_CHECKING:
    from reasonix_core.agent.session import SessionStore

log = logging.getLogger(__name__)

# Re-exported: the names other modules and tests import from here.
__all__ = [
    "BLANK_MARKER",
    "BOUNDED_TOOL_CHARS",
    "CHECKPOINT_VERSION",
    "DEFAULT_COMPACT_RATIO",
    "HEADROOM_MIN",
    "HEADROOM_RATIO",
    "KEEP_RATIO",
    "MAX_PRESSURE_SUMMARIES",
    "PRUNE_HEAD",
    "PRUNE_LIMIT",
    "PRUNE_MARKER",
    "PRUNE_TAIL",
    "REPLAN_LIMIT",
    "RETRY_GROWTH_RATIO",
    "SUMMARY_ACK",
    "SUMMARY_OUTPUT_CAP",
    "TRUNCATE_ACK",
    "Checkpoint",
    "CompactionDecision",
    "CompactionOutcome",
    "CompactionRequired",
    "ContextManager",
    "Conversation",
    "Entry",
    "Failure",
    "OverflowReading",
    "Sent",
    "headroom_for",
    "is_context_overflow",
    "parse_overflow",
    "prune_text",
    "summary_request",
    "transform",
    "trigger_tokens",
]

# Load the real tokenizer once the view passes this share of the trigger.
TOKENIZER_LOAD_RATIO = 0.5
# Count uncached messages in a worker thread above this many characters.
THREAD_COUNT_CHARS = 200_000


class CompactionRequired(ReasonixError):
    """The view cannot be brought under the compaction threshold, not even lossily."""


@dataclass(frozen=True, slots=True)
class Sent:
    """What a normal request contained, for calibration and the anchor."""

    generation: int
    count: int
    raw: int
    backend: str


@dataclass(slots=True)
class _Anchor:
    """The last real prompt count: estimates add what was appended since."""

    generation: int
    count: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a maintenance transaction reads and may call, passed in by its
    caller: the canonical transcript, the tool schemas' canonical JSON and the
    summary request."""

    messages: Sequence[Message]
    tools: str
    summarize: Summarize
    focus: str = ""  # what a manual compaction's summary should keep (``/compact <focus>``)


@dataclass(frozen=True, slots=True)
class CompactionDecision:
    """Why the view must change now and what it covers: the view's entries
    (canonical messages ``[0, upto)``), their estimate, and the pruned
    projection if pruning alone changes it."""

    reason: CompactionReason
    entries: list[Entry]
    upto: int
    tokens: int
    pruned: list[Entry] | None
    force: bool


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What one compaction did; its caller turns it into events.

    ``changed``: the prefix-change reason if a new projection was installed;
    ``truncated``: (tool results blanked, messages dropped) of a lossy cut;
    ``failure_status``/``failure_detail``: why a summary could not form;
    ``unfit``: set (the error text) when not even a truncation fits: the
    caller raises :class:`CompactionRequired` with it."""

    reason: CompactionReason
    tokens_before: int
    tokens_after: int
    trigger: int
    window: int
    changed: PrefixChangeReason | None = None
    summaries: int = 0
    folded: tuple[int, int] | None = None  # (chunks, merges) when the summary was folded
    truncated: tuple[int, int] | None = None
    failure_status: FailureStatus | None = None
    failure_detail: str = ""
    ok: bool = False
    unfit: str = ""
    # The system prompt and tool schemas alone reach the threshold (compaction
    # cannot help); ``prefix_notice`` says so, the first time only.
    prefix_over: bool = False
    prefix_notice: str = ""


@dataclass(frozen=True, slots=True)
class OverflowReading:
    """What a provider's overflow error said: a smaller window it named
    (now in use), and the prompt size it counted, if any."""

    learned_window: int | None
    prompt_tokens: int | None


@dataclass
class _Txn:
    """One transaction's running state: the view so far and what changed."""

    entries: list[Entry]
    tokens: int
    changed: PrefixChangeReason | None = None
    summaries: int = 0
    folded: tuple[int, int] | None = None
    failure_status: FailureStatus | None = None
    failure_detail: str = ""
    truncated: tuple[int, int] | None = field(default=None)
    prefix: int = 0  # the frozen prefix's estimate (system prompt + tool schemas)


# --------------------------------------------------------------------------- the manager


class ContextManager:
    """Owns the checkpoint, the token estimate and the maintenance transaction."""

    def __init__(
        self,
        *,
        window: int,
        ratio: float = DEFAULT_COMPACT_RATIO,
        estimator: TokenEstimator | None = None,
        store: SessionStore | None = None,
    ) -> None:
        self.window = window
        self.ratio = ratio
        self.estimator = estimator or TokenEstimator()
        self.store = store
        self.checkpoint: Checkpoint | None = None
        self.generation = 0
        self.failure: Failure | None = None
        self.turn = 0
        self.turn_summaries = 0
        self._anchor: _Anchor | None = None
        self._sent_counts: list[int] = []
        self._tools = ""  # the tool schemas' canonical JSON, for estimates
        self._busy = False
        self._prefix_said = False  # the frozen-prefix warning is given once

    # -- thresholds ---------------------------------------------------------

    @property
    def budgets(self) -> Budgets:
        """The thresholds of the current window (it changes with ``/model``)."""
        return Budgets(self.window, self.ratio)

    @property
    def trigger(self) -> int:
        return self.budgets.trigger

    @property
    def headroom(self) -> int:
        return self.budgets.headroom

    @property
    def hard_limit(self) -> int:
        return self.budgets.hard_limit

    @property
    def keep_budget(self) -> int:
        return self.budgets.keep_budget

    @property
    def summary_cap(self) -> int:
        return self.budgets.summary_cap

    @property
    def prompt_budget(self) -> int:
        """Largest summary prompt: the window less the output cap and the headroom."""
        return self.budgets.prompt_budget

    # -- the view -----------------------------------------------------------

    def entries(self, canonical: Sequence[Message]) -> list[Entry]:
        return view_entries(self.checkpoint, canonical)

    def view(self, canonical: Sequence[Message]) -> list[Message]:
        """The messages a request sends: checkpoint projection + append-only tail."""
        return [e.message for e in self.entries(canonical)]

    # -- estimation -----------------------------------------------------------

    def _tools_raw(self, tools: str) -> int:
        return self.estimator.count_cached_text(tools) if tools else 0

    def _estimate(self, entries: Sequence[Entry], tools: str) -> int:
        a = self._anchor
        if a is not None and a.generation == self.generation and a.count <= len(entries):
            fresh = self.estimator.messages(e.message for e in entries[a.count :])
            return a.tokens + self.estimator.scale(fresh)
        raw = self.estimator.messages(e.message for e in entries) + self._tools_raw(tools)
        return self.estimator.scale(raw)

    def estimate(self, canonical: Sequence[Message], tools: str = "") -> int:
        """Estimated prompt tokens of the next request (view + tools)."""
        return self._estimate(self.entries(canonical), tools)

    def note_sent(self, view: Sequence[Message], tools: str) -> Sent:
        raw = self.estimator.messages(view) + self._tools_raw(tools)
        return Sent(self.generation, len(view), raw, self.estimator.backend)

    def observe(self, sent: Sent | None, prompt_tokens: int, *, processed: bool = True) -> None:
        """A real prompt count for a request we sent: calibrate and re-anchor.

        ``processed``: the provider ran it (so its prompt is now a cached unit);
        False for a request refused as too long, which only tells its size."""
        if sent is None or prompt_tokens <= 0:
            return
        if sent.backend == self.estimator.backend:
            self.estimator.calibrate(sent.raw, prompt_tokens)
        if sent.generation == self.generation:
            self._anchor = _Anchor(sent.generation, sent.count, prompt_tokens)
            if processed and (not self._sent_counts or self._sent_counts[-1] != sent.count):
                self._sent_counts = [*self._sent_counts[-255:], sent.count]

    def output_room(self, estimate: int) -> int:
        """Tokens left for the answer, keeping the estimate headroom free."""
        return max(self.window - estimate - headroom_for(self.window), 1)

    async def _count(self, messages: Sequence[Message]) -> None:
        """Warm the per-message cache, in a thread when there is a lot to count."""
        if self.estimator.uncounted_chars(messages) > THREAD_COUNT_CHARS:
            await anyio.to_thread.run_sync(self.estimator.messages, messages)

    async def _maybe_load_tokenizer(self, entries: Sequence[Entry], tools: str) -> None:
        if not self.estimator.wants_tokenizer:
            return
        messages = [e.message for e in entries]
        anchor = self._anchor

        def load_and_count() -> None:
            if not self.estimator.load():
                return
            self.estimator.messages(messages)  # warm the per-message cache
            # Calibrate the new scale at once against the last real count.
            if anchor is not None and anchor.generation == self.generation:
                sent = self.estimator.messages(messages[: anchor.count]) + self._tools_raw(tools)
                self.estimator.calibrate(sent, anchor.tokens)

        await anyio.to_thread.run_sync(load_and_count)

    # -- turns and status -----------------------------------------------------

    def begin_turn(self) -> None:
        self.turn += 1
        self.turn_summaries = 0

    def _gate_open(self, estimate: int) -> bool:
        """May an automatic (paid) summary be attempted now?"""
        f = self.failure
        if f is None or f.generation != self.generation:
            return True
        return estimate >= f.tokens + self.budgets.retry_growth

    def status(self, canonical: Sequence[Message], tools: str = "") -> dict[str, Any]:
        est = self.estimate(canonical, tools)
        return {
            "window": self.window,
            "compact_ratio": self.ratio,
            "trigger": self.trigger,
            "estimate": est,
            "generation": self.generation,
            "checkpoint": self.checkpoint.kind.value if self.checkpoint else None,
            "failure": self.failure.to_record() if self.failure else None,
            "estimator": self.estimator.describe(),
        }

    def manual_blocker(self, canonical: Sequence[Message], tools: str = "") -> str:
        """Why a compaction asked for by hand would change nothing now (the
        planner's reason; the frozen prefix's warning when that is the cause),
        or "" when it would prune or summarise. ``/compact`` asks this before it
        offers to break the prompt cache, and the manual transaction itself."""
        entries = self.entries(canonical)
        source = SummarySource(entries, self._estimate(entries, tools), list(self._sent_counts))
        why = nothing_to_compact(entries, source, estimator=self.estimator, budgets=self.budgets)
        if why:
            prefix = frozen_prefix_tokens(entries, self._tools_raw(tools), self.estimator)
            if prefix >= self.trigger:
                return prefix_over_threshold(prefix, self.budgets)
        return why

    # -- persistence ------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        return {
            "version": CHECKPOINT_VERSION,
            "window": self.window,
            "checkpoint": self.checkpoint.to_record() if self.checkpoint else None,
            "failure": self.failure.to_record() if self.failure else None,
        }

    def _persist(self) -> None:
        if self.store is None:
            return
        try:
            self.store.write_checkpoint(self.to_record())
        except ReasonixError as exc:
            log.warning("%s", exc)

    def restore(self, data: dict[str, Any] | None, canonical: Sequence[Message]) -> bool:
        """Install a persisted checkpoint; False (and ignored) when it does not fit."""
        if not data or data.get("version") != CHECKPOINT_VERSION:
            return False
        raw = data.get("checkpoint")
        failure = data.get("failure")
        try:
            if raw:
                self.checkpoint = Checkpoint.from_record(raw, canonical)
                self.generation = self.checkpoint.generation
            if isinstance(failure, dict) and int(failure.get("generation", -1)) == self.generation:
                self.failure = Failure.from_record(failure)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            log.warning("ignoring a context checkpoint that does not match the transcript: %s", exc)
            self.checkpoint = None
            self.generation = 0
            self.failure = None
            return False
        self._anchor = None
        self._sent_counts = []
        return self.checkpoint is not None

    def _install(
        self,
        kind: ProjectionKind,
        reason: CompactionReason,
        entries: Sequence[Entry],
        canonical: Sequence[Message],
        before: int,
    ) -> int:
        self.generation += 1
        self.checkpoint = Checkpoint(
            generation=self.generation,
            kind=kind,
            reason=reason,
            upto=len(canonical),
            entries=tuple(entries),
            anchor=message_digest(canonical[-1]),
            tokens_before=before,
        )
        self._anchor = None
        self._sent_counts = []
        self.failure = None
        self.estimator.forget(e.message for e in entries)
        after = self._estimate(entries, self._tools)
        self.checkpoint.tokens_after = after
        self._persist()
        if self.store is not None:
            try:
                self.store.append_event(
                    "checkpoint",
                    generation=self.generation,
                    projection=kind.value,
                    reason=reason.value,
                    upto=len(canonical),
                    tokens_before=before,
                    tokens_after=after,
                )
            except (OSError, ReasonixError) as exc:
                log.warning("could not record the checkpoint in the transcript: %s", exc)
        return after

    def _record_failure(self, status: FailureStatus, detail: str, tokens: int) -> None:
        self.failure = Failure(
            generation=self.generation, status=status, detail=detail, tokens=tokens, turn=self.turn
        )
        self._persist()

    # -- the transaction ------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A compaction is running (single-flight: a second one is not started)."""
        return self._busy

    async def decide(
        self,
        conversation: Conversation,
        reason: CompactionReason = CompactionReason.AUTO,
        *,
        force: bool = False,
    ) -> CompactionDecision | None:
        """Whether the view must change before a step's request is built
        (``AUTO``), after a provider overflow (``OVERFLOW``), or on request
        (``MANUAL``); ``None`` when nothing is to be done (or one is running)."""
        canonical = conversation.messages
        tools = conversation.tools
        self._tools = tools
        entries = self.entries(canonical)
        est = self._estimate(entries, tools)
        if reason is CompactionReason.AUTO and est < self.trigger:
            if est >= TOKENIZER_LOAD_RATIO * self.trigger and self.estimator.wants_tokenizer:
                await self._maybe_load_tokenizer(entries, tools)
            return None
        if self.estimator.wants_tokenizer:
            await self._maybe_load_tokenizer(entries, tools)
        else:
            await self._count([e.message for e in entries])
        est = self._estimate(entries, tools)
        if self._busy:
            return None
        pruned = prune(entries)
        can_summarise = self.turn_summaries < MAX_PRESSURE_SUMMARIES and self._gate_open(est)
        if not needs_compaction(
            reason,
            est,
            self.budgets,
            prunable=pruned is not None,
            can_summarise=can_summarise,
            force=force,
        ):
            return None
        return CompactionDecision(reason, entries, len(canonical), est, pruned, force)

    @contextmanager
    def running(self) -> Iterator[None]:
        """Hold the single flight from the caller's ``CompactionStarted`` to the
        end of its outcome's events: ``decide`` returns ``None`` meanwhile."""
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    async def compact(
        self, decision: CompactionDecision, conversation: Conversation
    ) -> CompactionOutcome:
        """Carry out ``decision`` (inside :meth:`running`): install the new
        projections (prune, summaries, truncation) and return what was done.
        The summary requests send their own events through ``conversation.summarize``."""
        canonical = conversation.messages
        reason = decision.reason
        txn = _Txn(decision.entries, decision.tokens)
        txn.prefix = frozen_prefix_tokens(
            decision.entries, self._tools_raw(self._tools), self.estimator
        )
        source = SummarySource(decision.entries, decision.tokens, list(self._sent_counts))
        if decision.pruned is not None:
            txn.tokens = self._install(
                ProjectionKind.PRUNE, reason, decision.pruned, canonical, txn.tokens
            )
            txn.entries = decision.pruned
            txn.changed = reason.prefix_reason
        await self._summaries(txn, source, decision, conversation)
        if needs_truncation(reason, txn.tokens, self.budgets, txn.summaries):
            cut = truncate(txn.entries, txn.tokens, self.trigger, self.estimator)
            if cut is None:
                return self._outcome(decision, txn, unfit=self._unfit_text(txn))
            txn.entries = cut.entries
            txn.tokens = self._install(
                ProjectionKind.TRUNCATE, reason, cut.entries, canonical, txn.tokens
            )
            txn.changed = PrefixChangeReason.TRUNCATE
            txn.truncated = (cut.blanked, cut.dropped)
        if reason is CompactionReason.MANUAL:
            ok = txn.summaries > 0 or (txn.changed is not None and not txn.failure_detail)
        else:
            ok = txn.tokens < self.trigger
        return self._outcome(decision, txn, ok=ok)

    async def _summaries(
        self,
        txn: _Txn,
        source: SummarySource,
        decision: CompactionDecision,
        conversation: Conversation,
    ) -> None:
        """As many summaries as the reason allows and the view still needs."""
        reason = decision.reason
        allowed = 1 if reason.one_summary else MAX_PRESSURE_SUMMARIES - self.turn_summaries
        compactor = Compactor(
            self,
            summarize=conversation.summarize,
            tools=self._tools,
            focus=conversation.focus,
            reason=reason,
        )
        while allowed > 0 and may_summarise(
            reason, txn.tokens, self.budgets, self._gate_open(txn.tokens), decision.force
        ):
            result = await compactor.summarise(txn.entries, source)
            if result.entries is None:
                txn.failure_detail, txn.failure_status = result.detail, result.status
                if reason.unattended:
                    self._record_failure(result.status, result.detail, txn.tokens)
                return
            txn.entries = result.entries
            txn.tokens = self._install(
                ProjectionKind.SUMMARY, reason, result.entries, conversation.messages, txn.tokens
            )
            source = SummarySource(result.entries, txn.tokens, [])
            txn.changed = reason.prefix_reason
            txn.summaries += 1
            txn.folded = result.folded or txn.folded
            allowed -= 1
            if reason.unattended:
                self.turn_summaries += 1
            if reason.one_summary:
                return

    def _unfit_text(self, txn: _Txn) -> str:
        tokens = txn.tokens
        if txn.prefix >= self.trigger:
            return prefix_over_window(txn.prefix, tokens, self.budgets)
        return (
            f"the conversation no longer fits the context window: about {tokens:,} "
            f"tokens against a window of {self.window:,} (compaction threshold "
            f"{self.trigger:,}), and no summary or lossy truncation can bring it "
            "under the threshold. Start a new session, or use a model with a larger "
            "context_window."
        )

    def _outcome(
        self, decision: CompactionDecision, txn: _Txn, *, ok: bool = False, unfit: str = ""
    ) -> CompactionOutcome:
        prefix_over = txn.prefix >= self.trigger
        notice = ""
        if prefix_over and not unfit and not self._prefix_said:
            self._prefix_said = True
            notice = prefix_over_threshold(txn.prefix, self.budgets)
        return CompactionOutcome(
            reason=decision.reason,
            tokens_before=decision.tokens,
            tokens_after=txn.tokens,
            trigger=self.trigger,
            window=self.window,
            changed=txn.changed,
            summaries=txn.summaries,
            folded=txn.folded,
            truncated=None if unfit else txn.truncated,
            failure_status=txn.failure_status,
            failure_detail=txn.failure_detail,
            ok=ok,
            unfit=unfit,
            prefix_over=prefix_over,
            prefix_notice=notice,
        )

    # -- the window -------------------------------------------------------------

    def set_window(self, window: int) -> None:
        """Another model with another window (``/model``): thresholds follow it."""
        self.learn_window(window)

    def learn_window(self, limit: int) -> None:
        """The window to plan against from now on (kept in the checkpoint file)."""
        self.window = limit
        self._persist()

    def read_overflow(self, exc: ProviderError, sent: Sent | None) -> OverflowReading:
        """The provider refused a request as too long: learn the window it
        named and re-anchor the estimate on the prompt size it counted."""
        limit, prompt = parse_overflow(exc.message or "")
        learned = None
        if limit and limit < self.window:
            self.learn_window(limit)
            learned = limit
        if prompt:
            self.observe(sent, prompt, processed=False)
        return OverflowReading(learned, prompt)
