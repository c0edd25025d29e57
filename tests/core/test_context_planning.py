"""Property tests of the pure compaction planning (``agent/context_planning.py``):
whatever the conversation, a prune never touches what it must keep, a cut never
separates a tool call from its results, and a truncation keeps the transcript's
shape with honest counts of what it lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix_core.agent.compaction_meta import COMPACTION_KEY, CompactionMark, EntryMode
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context_planning import (
    Budgets,
    SummarySource,
    needs_compaction,
    nothing_to_compact,
    plan_cut,
    prune,
    raw_tokens,
    truncate,
    unit_starts,
)
from reasonix_core.agent.context_projection import (
    PRUNE_HEAD,
    PRUNE_LIMIT,
    PRUNE_MARKER,
    PRUNE_TAIL,
    Entry,
)
from reasonix_core.agent.summary_call import COMPACTION_INSTRUCTION
from reasonix_core.agent.tokens import TokenEstimator
from reasonix_core.messages import Message, ToolCall

# A unit: a user message, or an assistant answer with 0-3 tool calls and their results.
_unit = st.one_of(
    st.builds(lambda n: ("user", n, []), st.integers(1, 3000)),
    st.builds(
        lambda n, results: ("assistant", n, results),
        st.integers(0, 400),
        st.lists(st.integers(0, 20_000), max_size=3),
    ),
)
conversations = st.lists(_unit, min_size=1, max_size=14)


def build(units: list[tuple[str, int, list[int]]]) -> list[Entry]:
    messages = [Message(role="system", content="be brief " * 20)]
    for number, (role, size, results) in enumerate(units):
        if role == "user":
            messages.append(Message(role="user", content="u" * size))
            continue
        calls = tuple(
            ToolCall(id=f"c{number}-{i}", name="read_file", arguments="{}")
            for i in range(len(results))
        )
        messages.append(Message(role="assistant", content="a" * size, tool_calls=calls))
        for call, chars in zip(calls, results, strict=True):
            messages.append(Message(role="tool", content="r" * chars, tool_call_id=call.id))
    return [Entry(m, i) for i, m in enumerate(messages)]


def tool_results_follow_their_calls(entries: list[Entry]) -> bool:
    """Every tool result sits in the unit of the assistant message that called it."""
    open_ids: set[str] = set()
    for e in entries:
        m = e.message
        if m.role == "tool":
            if m.tool_call_id not in open_ids:
                return False
        else:
            open_ids = {c.id for c in m.tool_calls}
    return True


def estimator() -> TokenEstimator:
    return TokenEstimator("heuristic")


@settings(max_examples=150, deadline=None)
@given(conversations)
def test_prune_cuts_only_long_canonical_tool_results_and_is_idempotent(units):
    entries = build(units)
    pruned = prune(entries)
    long_results = [
        e
        for e in entries
        if e.message.role == "tool" and len(e.message.content or "") > PRUNE_LIMIT
    ]
    if not long_results:
        assert pruned is None
        return
    assert pruned is not None and len(pruned) == len(entries)
    for before, after in zip(entries, pruned, strict=True):
        assert after.ref == before.ref
        if before in long_results:
            text = after.message.content or ""
            assert after.mode is EntryMode.PRUNE and PRUNE_MARKER in text
            assert len(text) == PRUNE_HEAD + len(PRUNE_MARKER) + PRUNE_TAIL
            assert after.message.meta["projection"] == "prune"
        else:
            assert after is before
    assert prune(pruned) is None


@settings(max_examples=150, deadline=None)
@given(conversations)
def test_units_start_at_every_message_but_a_tool_result(units):
    entries = build(units)
    starts = unit_starts(entries)
    assert starts == sorted(set(starts))
    assert all(entries[i].message.role != "tool" for i in starts)
    assert set(range(1, len(entries))) - set(starts) == {
        i for i, e in enumerate(entries) if e.message.role == "tool"
    }


@settings(max_examples=200, deadline=None)
@given(
    conversations,
    st.integers(2_000, 60_000),
    st.booleans(),
    st.booleans(),
)
def test_a_cut_never_splits_a_unit_keeps_the_last_one_and_fits_one_request(
    units, window, overflow, fit
):
    entries = build(units)
    est = estimator()
    budgets = Budgets(window)
    total = est.scale(raw_tokens(est, entries))
    source = SummarySource(entries, total, [])
    cut, why = plan_cut(entries, source, estimator=est, budgets=budgets, overflow=overflow, fit=fit)
    starts = unit_starts(entries)
    if cut is None:
        assert why
        return
    assert why == ""
    assert cut in starts and cut <= starts[-1]  # the last unit is always kept
    assert tool_results_follow_their_calls(entries[cut:])
    assert any(e.ref is not None for e in entries[1:cut])
    if overflow:
        assert cut <= starts[max(len(starts) - 2, 1)]  # the latest two units stay
    if fit:
        # The summary request (the prefix before the cut + the instruction) fits.
        instruction = est.scale(est.count_cached_text(COMPACTION_INSTRUCTION) + 4)
        kept = est.scale(raw_tokens(est, entries[cut:]))
        assert total - kept + instruction <= budgets.prompt_budget


@settings(max_examples=200, deadline=None)
@given(conversations, st.integers(200, 40_000))
def test_a_truncation_keeps_the_shape_and_counts_what_it_lost(units, target):
    entries = build(units)
    est = estimator()
    total = est.scale(raw_tokens(est, entries))
    cut = truncate(entries, total, target, est)
    if cut is None:
        return
    work = cut.entries
    assert work[0] is entries[0]
    assert tool_results_follow_their_calls(work)
    blanked = [e for e in work if e.mode is EntryMode.BLANK]
    # The count includes results blanked before their unit was dropped.
    assert len(blanked) <= cut.blanked
    markers = [e for e in work if e.message.meta.get(COMPACTION_KEY) == CompactionMark.TRUNCATE]
    if cut.dropped:
        assert len(markers) == 1 and work[1] is markers[0]
        kept_refs = {e.ref for e in work if e.ref is not None}
        assert len(entries) - len(kept_refs) == cut.dropped
        assert min(r for r in kept_refs if r) == cut.dropped + 1  # the oldest units went
    else:
        assert not markers and [e.ref for e in work] == [e.ref for e in entries]
        assert len(blanked) == cut.blanked
    # The last unit's messages are all there (its tool results maybe blanked).
    last = unit_starts(entries)[-1] if unit_starts(entries) else len(entries)
    assert [e.ref for e in work[-(len(entries) - last) :]] == list(range(last, len(entries)))
    assert est.scale(raw_tokens(est, work)) < target + len(work) + 8


@settings(max_examples=100, deadline=None)
@given(st.integers(1_000, 2_000_000), st.floats(0.1, 0.95), st.integers(0, 3_000_000))
def test_thresholds_and_the_decision_rule(window, ratio, estimate):
    budgets = Budgets(window, ratio)
    assert budgets.prompt_budget + budgets.summary_cap + budgets.headroom == window
    assert budgets.headroom >= 256 and 256 <= budgets.summary_cap <= 8192
    auto = needs_compaction(
        CompactionReason.AUTO, estimate, budgets, prunable=True, can_summarise=True, force=False
    )
    assert auto == (estimate >= budgets.trigger)
    assert needs_compaction(
        CompactionReason.MANUAL, estimate, budgets, prunable=False, can_summarise=False, force=False
    )
    idle = needs_compaction(
        CompactionReason.AUTO, estimate, budgets, prunable=False, can_summarise=False, force=False
    )
    assert idle == (estimate >= max(budgets.trigger, budgets.hard_limit))


@settings(max_examples=150, deadline=None)
@given(conversations, st.sampled_from([4_000, 20_000, 200_000]))
def test_nothing_to_compact_exactly_when_the_manual_plan_changes_nothing(units, window):
    """/compact's "nothing to compact" (issue 30 item 8) is the manual transaction's own
    plan: no prune and no summary cut (folded in chunks when too large)."""
    entries = build(units)
    est = estimator()
    budgets = Budgets(window)
    source = SummarySource(entries, est.scale(raw_tokens(est, entries)), [])
    why = nothing_to_compact(entries, source, estimator=est, budgets=budgets)
    cut, _ = plan_cut(
        entries, source, estimator=est, budgets=budgets, overflow=False, fit=False
    )
    assert (why == "") == (prune(entries) is not None or cut is not None)


def test_nothing_to_compact_names_why() -> None:
    est = estimator()
    budgets = Budgets(200_000)

    def why(units: list[tuple[str, int, list[int]]]) -> str:
        entries = build(units)
        source = SummarySource(entries, est.scale(raw_tokens(est, entries)), [])
        return nothing_to_compact(entries, source, estimator=est, budgets=budgets)

    assert why([]) == "the conversation is empty"
    short = [("user", 20, []), ("assistant", 20, [])]
    assert why(short) == "the conversation is short enough to keep whole"
    assert why([("user", 20, []), ("assistant", 20, [PRUNE_LIMIT + 1])]) == ""  # a prune
