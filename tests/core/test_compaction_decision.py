"""The ContextManager's public surface returns values: a decision, then an
outcome; it emits no events of its own (the Agent turns the outcome into them)."""

from __future__ import annotations

from collections.abc import Sequence

from reasonix_core import events as ev
from reasonix_core.agent.compaction_events import outcome_events
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context import (
    PRUNE_MARKER,
    CompactionDecision,
    CompactionOutcome,
    ContextManager,
    Conversation,
)
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.model_call import Reply
from reasonix_core.messages import Message, ToolCall
from tests.core.compaction_helpers import text_of


async def no_summary(
    messages: Sequence[Message], *, with_tools: bool, max_output_tokens: int
) -> Reply:
    raise AssertionError("pruning alone fits: no summary request")


def conversation(result_chars: int) -> Conversation:
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a.txt"}')
    messages = [
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content="read a.txt"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content=text_of(result_chars), tool_call_id="c1"),
    ]
    return Conversation(messages=messages, tools="", summarize=no_summary)


async def test_below_the_trigger_there_is_no_decision():
    cm = ContextManager(window=6000, ratio=0.5)
    assert await cm.decide(conversation(400), CompactionReason.AUTO) is None


async def test_a_prune_decision_returns_an_outcome_and_no_events():
    cm = ContextManager(window=6000, ratio=0.5)
    talk = conversation(20_000)
    decision = await cm.decide(talk, CompactionReason.AUTO)
    assert isinstance(decision, CompactionDecision)
    assert decision.reason is CompactionReason.AUTO and decision.upto == 4
    assert decision.tokens >= cm.trigger and decision.pruned is not None
    with cm.running():
        assert await cm.decide(talk, CompactionReason.MANUAL) is None  # single flight
        outcome = await cm.compact(decision, talk)
    assert not cm.busy
    assert isinstance(outcome, CompactionOutcome)
    assert outcome.ok and outcome.summaries == 0 and outcome.truncated is None
    assert outcome.changed == "compact_auto" and outcome.tokens_after < cm.trigger
    assert cm.generation == 1 and PRUNE_MARKER in (cm.view(talk.messages)[3].content or "")
    events = list(outcome_events(outcome, EventSequence()))
    assert [type(e) for e in events] == [ev.Notice, ev.CompactionFinished, ev.PrefixChanged]
    notice = events[0]
    assert isinstance(notice, ev.Notice) and "context compacted (pruned tool results)" in notice.text
