"""The events one compaction emits, read from its :class:`CompactionOutcome`.

The context manager decides and installs projections; the Agent owns the
event stream and turns each outcome into the same Notice / CompactionFinished /
PrefixChanged events, in the same order, wherever compaction runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from reasonix_core import events as ev
from reasonix_core.agent.compaction_meta import FailureStatus
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context import CompactionOutcome, CompactionRequired
from reasonix_core.agent.event_sequence import EventSequence


def outcome_events(outcome: CompactionOutcome, new_event: EventSequence) -> Iterator[ev.Event]:
    """The events after the summary requests' own; raises
    :class:`CompactionRequired` (after closing the compaction) when not even a
    truncation fits."""
    reason = outcome.reason
    changed_to = outcome.tokens_after if outcome.changed is not None else None
    if outcome.unfit:
        yield new_event(
            ev.CompactionFinished, reason=reason.value, ok=False, tokens_after=changed_to
        )
        if outcome.changed is not None:
            yield new_event(ev.PrefixChanged, reason=outcome.changed)
        raise CompactionRequired(outcome.unfit)
    if outcome.truncated is not None:
        yield new_event(ev.Notice, level="warning", text=_truncated_text(outcome))
    failed = outcome.failure_detail
    if outcome.prefix_notice:
        yield new_event(ev.Notice, level="warning", text=outcome.prefix_notice)
    failure = _failure_text(outcome)
    if failure:
        yield new_event(ev.Notice, level="warning", text=failure)
    if outcome.summaries or (outcome.changed and outcome.truncated is None):
        yield new_event(ev.Notice, level="info", text=_compacted_text(outcome))
    if reason is CompactionReason.MANUAL and outcome.changed is None and not failed:
        yield new_event(ev.Notice, level="info", text="nothing to compact yet")
    yield new_event(
        ev.CompactionFinished,
        reason=reason.value,
        ok=outcome.ok,
        tokens_after=changed_to,
        failure=failed if outcome.failure_status is FailureStatus.FAILED else "",
    )
    if outcome.changed is not None:
        yield new_event(ev.PrefixChanged, reason=outcome.changed)


def nothing_to_compact_text(why: str) -> str:
    """The one line a compaction asked for by hand gives when it would change
    nothing (``why``: the planner's reason); every surface says it the same way."""
    return f"Nothing to compact yet: {why}."


def _truncated_text(outcome: CompactionOutcome) -> str:
    assert outcome.truncated is not None
    blanked, dropped = outcome.truncated
    return (
        f"context truncated to fit the window: {blanked} tool results blanked, "
        f"{dropped} messages dropped ({outcome.tokens_before:,} → {outcome.tokens_after:,} "
        "tokens); the full transcript stays in the session file"
    )


def _failure_text(outcome: CompactionOutcome) -> str:
    """Why the summary failed, or "" when that is not said (no failure, a truncation
    said it, or the frozen prefix's one notice already did)."""
    failed, reason = outcome.failure_detail, outcome.reason
    # Blocked because of the frozen prefix: its one notice says why (an automatic
    # one is not reported again; a /compact by hand always gets an answer).
    blocked_by_prefix = (
        outcome.prefix_over
        and outcome.failure_status is FailureStatus.BLOCKED
        and (bool(outcome.prefix_notice) or reason.unattended)
    )
    if not failed or outcome.truncated is not None or blocked_by_prefix:
        return ""
    if reason is CompactionReason.MANUAL and outcome.failure_status is FailureStatus.BLOCKED:
        return nothing_to_compact_text(failed)
    return f"compaction could not summarise the conversation: {failed}"


def _compacted_text(outcome: CompactionOutcome) -> str:
    what = "summary" if outcome.summaries else "pruned tool results"
    if outcome.folded is not None:
        chunks, merges = outcome.folded
        what = f"summary folded from {chunks} parts and {merges} merge" + (
            "s" if merges != 1 else ""
        )
    return (
        f"context compacted ({what}): {outcome.tokens_before:,} → {outcome.tokens_after:,} "
        f"tokens (threshold {outcome.trigger:,} of {outcome.window:,})"
    )
