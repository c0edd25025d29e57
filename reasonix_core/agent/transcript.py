"""Transcript rules shared by the loop: orphan repair, result bounding, reminders."""

from __future__ import annotations

from collections.abc import Sequence

from reasonix_core.messages import Message, ToolCall

# Tool results larger than this are bounded once before entering the transcript.
RESULT_LIMIT = 32 * 1024
RESULT_HEAD = 24 * 1024
RESULT_TAIL = 6 * 1024
REMINDER_AT = frozenset({3, 5, 8})
INTERRUPTED_MARK = "[interrupted by the user]"
# Closes a turn whose model request failed (after retries): the next request must not
# tell the model the user interrupted it.
FAILED_MARK = "[no answer: the request to the model failed; the user saw the error]"

NOT_STARTED = "[not run: the turn was cancelled before this call started]"
UNKNOWN_OUTCOME = (
    "[outcome unknown: the call was interrupted after it started. It may have had "
    "effects; check the current state before repeating it.]"
)


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
            role="tool", tool_call_id=c.id, content=UNKNOWN_OUTCOME, meta={"outcome": "unknown"}
        )
        for c in unanswered_calls(messages)
    ]
    if not repairs and messages and messages[-1].role == "user":
        # The previous turn died before the model answered: close it so user
        # turns keep alternating with assistant turns.
        repairs.append(Message(role="assistant", content=INTERRUPTED_MARK))
    return repairs


def bound_result(text: str) -> tuple[str, bool]:
    """Head + marker + tail for oversize results; returns (text, was_bounded)."""
    if len(text) <= RESULT_LIMIT:
        return text, False
    omitted = len(text) - RESULT_HEAD - RESULT_TAIL
    marker = (
        f"\n\n[... {omitted} characters omitted; the full output is kept locally. "
        "Narrow the command or read a smaller window to see the middle ...]\n\n"
    )
    return text[:RESULT_HEAD] + marker + text[-RESULT_TAIL:], True


def reminder(count: int, tool: str) -> str:
    if count not in REMINDER_AT:
        return ""
    return (
        f"\n\n[reminder: this is call {count} in a row to {tool} with identical arguments. "
        "Its result is unlikely to change; consider a different approach.]"
    )
