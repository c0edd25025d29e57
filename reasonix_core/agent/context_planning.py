"""Pure planning: what a compaction would change, decided without I/O.

Given the view's entries and a :class:`TokenEstimator` (deterministic counts),
these functions say which tool results to prune, where a summarised prefix
ends, and what a lossy truncation keeps. They never install anything, never
call a model and never touch the session; the context manager (``context.py``)
acts on their answers. Their invariants are property-tested
(``tests/core/test_context_planning.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reasonix_core.agent.compaction_meta import CompactionMark, EntryMode
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context_projection import (
    BLANK_MARKER,
    PRUNE_LIMIT,
    TRUNCATE_ACK,
    Entry,
    literal,
    transform,
)
from reasonix_core.agent.summary_call import COMPACTION_INSTRUCTION
from reasonix_core.agent.tokens import TokenEstimator

DEFAULT_COMPACT_RATIO = 0.80
KEEP_RATIO = 0.16
HEADROOM_RATIO = 0.05
HEADROOM_MIN = 256
SUMMARY_OUTPUT_CAP = 8192
MAX_PRESSURE_SUMMARIES = 2
RETRY_GROWTH_RATIO = 0.05


def headroom_for(window: int) -> int:
    return max(HEADROOM_MIN, math.floor(window * HEADROOM_RATIO))


def trigger_tokens(window: int, ratio: float) -> int:
    return math.floor(window * ratio)


@dataclass(frozen=True, slots=True)
class Budgets:
    """The thresholds one context window and compaction ratio imply."""

    window: int
    ratio: float = DEFAULT_COMPACT_RATIO

    @property
    def trigger(self) -> int:
        return trigger_tokens(self.window, self.ratio)

    @property
    def headroom(self) -> int:
        return headroom_for(self.window)

    @property
    def hard_limit(self) -> int:
        return self.window - self.headroom

    @property
    def keep_budget(self) -> int:
        """The verbatim tail a summary keeps: 16% of the window."""
        return math.floor(self.window * KEEP_RATIO)

    @property
    def summary_cap(self) -> int:
        return max(256, min(SUMMARY_OUTPUT_CAP, self.window // 10))

    @property
    def prompt_budget(self) -> int:
        """Largest summary prompt: the window less the output cap and the headroom."""
        return self.window - self.summary_cap - self.headroom

    @property
    def retry_growth(self) -> int:
        """How much the view must grow before a failed summary is retried for pay."""
        return math.floor(self.window * RETRY_GROWTH_RATIO)


@dataclass(frozen=True, slots=True)
class SummarySource:
    """The view the summary request is cut from: the entries as last sent (so
    the provider's cache covers the prefix), their total, and the view lengths
    the provider has processed in that generation (its cached unit ends)."""

    entries: list[Entry]
    total: int
    sent_counts: list[int]


def unit_starts(entries: Sequence[Entry]) -> list[int]:
    """Start index of every replay unit after the system message: a user
    message, or an assistant message together with its tool results."""
    return [i for i in range(1, len(entries)) if entries[i].message.role != "tool"]


def raw_tokens(estimator: TokenEstimator, entries: Iterable[Entry]) -> int:
    return estimator.messages(e.message for e in entries)


def prune(entries: Sequence[Entry]) -> list[Entry] | None:
    """The view with long canonical tool results pruned, or None if none is."""
    out: list[Entry] = []
    changed = False
    for e in entries:
        if (
            e.ref is not None
            and e.mode is EntryMode.VERBATIM
            and e.message.role == "tool"
            and len(e.message.content or "") > PRUNE_LIMIT
        ):
            out.append(Entry(transform(e.message, EntryMode.PRUNE), e.ref, EntryMode.PRUNE))
            changed = True
        else:
            out.append(e)
    return out if changed else None


def with_lead(system: Entry, lead: Entry, ack: str, rest: Sequence[Entry]) -> list[Entry]:
    """system + a user lead (summary or marker) + an ack when the rest starts with a user."""
    out = [system, lead]
    if rest and rest[0].message.role == "user":
        out.append(literal("assistant", ack, CompactionMark.ACK))
    out.extend(rest)
    return out


def _tail_start(
    entries: Sequence[Entry], starts: list[int], estimator: TokenEstimator, keep_budget: int
) -> int | None:
    """The first unit (an index into ``starts``) of the verbatim tail: as many
    of the latest units as fit the keep budget, the last one always; None
    when the whole history fits in it."""
    scale = estimator.scale
    k = len(starts) - 1
    tail = raw_tokens(estimator, entries[starts[k] :])
    while k > 1:
        unit = raw_tokens(estimator, entries[starts[k - 1] : starts[k]])
        if scale(tail + unit) > keep_budget:
            break
        tail += unit
        k -= 1
    if k == 1 and scale(raw_tokens(estimator, entries[1:])) <= keep_budget:
        return None
    return k


def plan_cut(
    entries: Sequence[Entry],
    source: SummarySource,
    *,
    estimator: TokenEstimator,
    budgets: Budgets,
    overflow: bool,
    below: int | None = None,
    fit: bool = True,
) -> tuple[int | None, str]:
    """Where the summarised prefix ends (an index into ``entries``), or None
    and why not.

    The tail is sized on ``entries`` (the current view); the summary
    request's size on ``source`` (what it will actually send). ``fit=False``:
    the cut where the tail starts, not moved back to fit one summary request
    (what a chunked fold summarises)."""
    starts = unit_starts(entries)
    if len(starts) < 2:
        return None, "there is only one message to keep, nothing older to summarise"
    scale = estimator.scale
    if overflow:
        k = max(len(starts) - 2, 1)  # keep the latest two units verbatim
    else:
        tail_start = _tail_start(entries, starts, estimator, budgets.keep_budget)
        if tail_start is None:
            return None, "the conversation is short enough to keep whole"
        k = tail_start
        # Prefer a cut the provider has cached: the end of a request it processed
        # (at or after the 16% boundary, so the tail only gets smaller).
        unit_set = set(starts)
        cached = [c for c in source.sent_counts if c >= starts[k] and c in unit_set]
        if cached and (below is None or min(cached) < below):
            k = starts.index(min(cached))
    instruction = scale(estimator.count_cached_text(COMPACTION_INSTRUCTION) + 4)
    src = source.entries
    suffix = [0] * (len(src) + 1)  # raw tokens of src[i:]
    for i in range(len(src) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + estimator.message(src[i].message)

    def prefix_tokens(cut: int) -> int:
        return source.total - scale(suffix[cut]) + instruction

    cut = starts[k]
    while fit and (
        k >= 1
        and ((below is not None and cut >= below) or prefix_tokens(cut) > budgets.prompt_budget)
    ):
        k -= 1
        cut = starts[k] if k >= 1 else 0
    if k < 1:
        return None, "no older history fits in one summary request"
    if not any(e.ref is not None for e in src[1:cut]):
        return None, "only the earlier summary is older than what is kept whole"
    return cut, ""


def nothing_to_compact(
    entries: Sequence[Entry],
    source: SummarySource,
    *,
    estimator: TokenEstimator,
    budgets: Budgets,
) -> str:
    """Why a compaction asked for by hand (``/compact``, ``reasonix compact``) would
    change nothing, or "" when it would prune a tool result or summarise older
    history: the same plan the manual transaction follows (prune, then one
    summary, folded in chunks when it is too large for one request)."""
    if not unit_starts(entries):
        return "the conversation is empty"
    if prune(entries) is not None:
        return ""
    cut, why = plan_cut(
        entries, source, estimator=estimator, budgets=budgets, overflow=False, fit=False
    )
    return "" if cut is not None else why


@dataclass(frozen=True, slots=True)
class Truncation:
    """A lossy projection under the target: the entries and what was lost."""

    entries: list[Entry]
    blanked: int
    dropped: int


class _Cutter:
    """The running state of one truncation: the entries and their estimate."""

    def __init__(self, entries: Sequence[Entry], total: int, estimator: TokenEstimator) -> None:
        self.work = list(entries)
        self.current = total
        self.blanked = 0
        self.dropped = 0
        self.estimator = estimator

    def _cost(self, entry: Entry) -> int:
        return self.estimator.scale(self.estimator.message(entry.message))

    def blank_until(self, target: int, end: int) -> None:
        """Blank canonical tool results of ``work[1:end]``, oldest first, until
        the estimate is under ``target``."""
        for i in range(1, end):
            if self.current < target:
                return
            e = self.work[i]
            if e.ref is None or e.message.role != "tool" or e.mode is EntryMode.BLANK:
                continue
            new = Entry(transform(e.message, EntryMode.BLANK), e.ref, EntryMode.BLANK)
            self.current -= self._cost(e) - self._cost(new)
            self.work[i] = new
            self.blanked += 1

    def drop_oldest(self, target: int, starts: list[int]) -> None:
        """Drop the oldest replay units (never the last) behind a marker."""
        scale = self.estimator.scale
        k = 0
        removed = 0
        lead = scale(self.estimator.count_text(BLANK_MARKER) * 2 + 16)  # marker + ack
        while k < len(starts) - 1 and self.current - scale(removed) + lead >= target:
            removed += raw_tokens(self.estimator, self.work[starts[k] : starts[k + 1]])
            k += 1
        if not k:
            return
        self.dropped = starts[k] - 1
        blanked = f" and {self.blanked} tool results blanked" if self.blanked else ""
        marker = literal(
            "user",
            f"[context truncated: {self.dropped} earlier messages were dropped{blanked}"
            " to fit the context window. The full transcript is kept in the "
            "local session; ask the user or search the history if you need it.]",
            CompactionMark.TRUNCATE,
        )
        rest = self.work[starts[k] :]
        self.work = with_lead(self.work[0], marker, TRUNCATE_ACK, rest)
        added = raw_tokens(self.estimator, self.work[1 : len(self.work) - len(rest)])
        self.current = self.current - scale(removed) + scale(added)


def truncate(
    entries: Sequence[Entry], total: int, target: int, estimator: TokenEstimator
) -> Truncation | None:
    """Lossy projection under ``target``: blank old tool results, then drop the
    oldest units behind a marker, then blank the rest; None if even that does not fit."""
    cutter = _Cutter(entries, total, estimator)
    starts = unit_starts(cutter.work)
    last_unit = starts[-1] if starts else len(cutter.work)
    cutter.blank_until(target, last_unit)
    if cutter.current >= target and len(starts) > 1:
        cutter.drop_oldest(target, starts)
    if cutter.current >= target:
        cutter.blank_until(target, len(cutter.work))
    if cutter.current >= target:
        return None
    return Truncation(cutter.work, cutter.blanked, cutter.dropped)


def may_summarise(
    reason: CompactionReason, estimate: int, budgets: Budgets, gate_open: bool, force: bool
) -> bool:
    """Whether the transaction should (still) try a summary at ``estimate``."""
    if reason is CompactionReason.AUTO:
        return estimate >= budgets.trigger and gate_open
    if reason is CompactionReason.OVERFLOW:
        return estimate >= budgets.trigger or force
    return True


def needs_truncation(
    reason: CompactionReason, estimate: int, budgets: Budgets, summaries: int
) -> bool:
    """Whether a lossy truncation must follow the summaries (never when asked by hand)."""
    if reason is CompactionReason.AUTO:
        return estimate >= budgets.hard_limit
    if reason is CompactionReason.OVERFLOW:
        return estimate >= budgets.hard_limit or (summaries == 0 and estimate >= budgets.trigger)
    return False


def needs_compaction(
    reason: CompactionReason,
    estimate: int,
    budgets: Budgets,
    *,
    prunable: bool,
    can_summarise: bool,
    force: bool,
) -> bool:
    """Whether a transaction is worth starting at ``estimate`` (``decide``'s rule)."""
    if reason is CompactionReason.AUTO:
        if estimate < budgets.trigger:
            return False
        # Nothing allowed to do below the hard limit: keep the current view.
        return prunable or can_summarise or estimate >= budgets.hard_limit
    if reason is CompactionReason.OVERFLOW:
        # The completion budget overflowed, not the view: the retry re-plans it.
        return force or estimate >= budgets.trigger or prunable
    return True
