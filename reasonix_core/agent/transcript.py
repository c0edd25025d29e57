"""Transcript rules shared by the loop: orphan repair, reminders (bounding an
oversize result is reasonix_core.tool.kept_results, which also pages it back)."""

from __future__ import annotations

from collections.abc import Sequence

from reasonix_core.messages import Message, ToolCall
from reasonix_core.tool.base import FOR_MODEL, SUMMARY
from reasonix_core.tool.kept_results import FULL_CONTENT

REMINDER_AT = frozenset({3, 5, 8})
INTERRUPTED_MARK = "[interrupted by the user]"
# Closes a turn whose model request failed (after retries): the next request must not
# tell the model the user interrupted it.
FAILED_MARK = "[no answer: the request to the model failed; the user saw the error]"
#: ``meta`` key of a FAILED_MARK message: the error the user saw (never sent).
FAILURE = "failure"

NOT_STARTED = "[not run: the turn was cancelled before this call started]"
UNKNOWN_OUTCOME = (
    "[outcome unknown: the call was interrupted after it started. It may have had "
    "effects; check the current state before repeating it.]"
)


# What people see in place of those two results: a call never started is the cancelled
# card the live turn drew (nothing more to say); one interrupted may have had effects.
NOT_STARTED_SHOWN = {FOR_MODEL: True}
UNKNOWN_SHOWN = {SUMMARY: "Interrupted while running: it may have had effects.", FOR_MODEL: True}


def unanswered_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """Tool calls of the last assistant tool turn that have no result yet."""
    for index in range(len(messages) - 1, -1, -1):
        msg = messages[index]
        if msg.role == "assistant":
            if not msg.tool_calls:
                return []
            answered = {m.tool_call_id for m in messages[index + 1 :] if m.role == "tool"}
            return [c for c in msg.tool_calls if c.id not in answered]
        if msg.role == "user":
            return []
    return []


def repair_messages(messages: Sequence[Message]) -> list[Message]:
    """Results to append so the API never sees an orphaned tool call.

    Used before the next request after a cancelled or killed turn; the calls
    are marked unknown (they may have started), never replayed.
    """
    repairs = [
        Message(
            role="tool",
            tool_call_id=c.id,
            content=UNKNOWN_OUTCOME,
            meta={"outcome": "unknown", **UNKNOWN_SHOWN},
        )
        for c in unanswered_calls(messages)
    ]
    if not repairs and messages and messages[-1].role == "user":
        # The previous turn died before the model answered: close it so user
        # turns keep alternating with assistant turns.
        repairs.append(Message(role="assistant", content=INTERRUPTED_MARK))
    return repairs


#: ``meta`` key of a tool message whose content ends with :func:`reminder`: the call's
#: count in a row (never sent).
REPEAT = "repeat"


def for_people(message: Message, tool: str) -> str:
    """A tool message's text as people read it: the kept whole of a result the model got
    bounded, else its content without the host's reminder to the model."""
    full = message.meta.get(FULL_CONTENT)
    if isinstance(full, str):
        return full
    text = message.content or ""
    count = message.meta.get(REPEAT)
    note = reminder(count, tool) if isinstance(count, int) else ""
    return text[: -len(note)] if note and text.endswith(note) else text


def reminder(count: int, tool: str) -> str:
    if count not in REMINDER_AT:
        return ""
    return (
        f"\n\n[reminder: this is call {count} in a row to {tool} with identical arguments. "
        "Its result is unlikely to change; consider a different approach.]"
    )
