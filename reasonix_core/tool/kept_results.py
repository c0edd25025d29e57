"""Oversize tool results: bounded once for the transcript, kept whole with the
session, and paged back through ``use_capability`` (``session:tool_result``).

A result longer than :data:`RESULT_LIMIT` characters enters the transcript as
head + marker + tail; the marker names the call id, the total size and the exact
call that pages the rest. The full text stays in the tool message's local
``meta["full_content"]`` (never sent; written to the session file with the
message, so ``-c`` can page it too), at most :data:`KEPT_LIMIT` characters of it.

A page is a new tool result (appended like any other), so paging never touches
the prompt prefix. Offsets and limits count characters of the full text (Python
``str`` indices), so the pages of one result join back to exactly the original.
A page is bounded below :data:`RESULT_LIMIT` (header included) and is therefore
never bounded again.

Whose results: the transcript of the agent running the call
(:data:`~reasonix_core.tool.base.current_transcript`, set by the loop for each
call), so a subagent or the planner pages its own results, never its parent's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reasonix_core.messages import Message
from reasonix_core.tool.base import ToolContext, ToolResult, current_transcript

# Tool results larger than this are bounded once before entering the transcript.
RESULT_LIMIT = 32 * 1024
RESULT_HEAD = 24 * 1024
RESULT_TAIL = 6 * 1024
# The longest full copy kept with the session (characters): a bounded result adds
# at most this much to the session file. Beyond it the copy is cut, and says so.
KEPT_LIMIT = 1024 * 1024
# The most characters of full copies one session keeps, all results together: past
# it a bounded result is not kept (its marker says so), so the session file stays
# bounded however many large results a long session reads.
SESSION_KEPT_LIMIT = 16 * KEPT_LIMIT
# The most characters one page carries: the page's one-line header fits in the
# rest of RESULT_LIMIT, so a page is never bounded itself.
PAGE_LIMIT = RESULT_LIMIT - 512

#: The capability's name in ``use_capability`` (the ``session:`` namespace).
NAME = "session:tool_result"
#: Where the full text of a bounded result is kept in its message's meta.
FULL_CONTENT = "full_content"
#: The full result's length when the kept copy was cut (or not kept at all).
FULL_CHARS = "full_chars"

DESCRIPTION = (
    "Read a window of the full text of a tool result that was too long for the "
    "conversation (its bounded text says so and names the call id). offset and limit "
    f"count characters of the full text; a page holds at most {PAGE_LIMIT} characters "
    "and its first line says which characters it holds and the next offset. Reads only "
    "this session's own results."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "call_id": {
            "type": "string",
            "description": "The id of the tool call whose result was bounded",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "First character to read (0-based); default 0",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": PAGE_LIMIT,
            "description": f"Characters to read; default and maximum {PAGE_LIMIT}",
        },
    },
    "required": ["call_id"],
    "additionalProperties": False,
}


def page_call(call_id: str, offset: int) -> str:
    """The exact ``use_capability`` call that reads a page from ``offset``."""
    arguments = json.dumps({"call_id": call_id, "offset": offset, "limit": PAGE_LIMIT})
    return f'use_capability(action="call", name="{NAME}", arguments={arguments})'


def bound_result(text: str, call_id: str, *, room: int = KEPT_LIMIT) -> tuple[str, dict[str, Any]]:
    """``(text for the transcript, meta keeping the full copy)``: the text itself and
    no meta when it fits; head + marker + tail and the kept copy when it does not.

    ``room``: how many characters of a full copy may still be kept (the session's
    budget, :class:`KeptBudget`); at most :data:`KEPT_LIMIT` are. With no room left
    nothing is kept and the marker says so."""
    if len(text) <= RESULT_LIMIT:
        return text, {}
    total = len(text)
    omitted = total - RESULT_HEAD - RESULT_TAIL
    room = max(0, min(room, KEPT_LIMIT))
    kept: dict[str, Any] = {}
    if total > room:
        kept[FULL_CHARS] = total
    if room == 0:
        how = (
            f"; its full output was not kept (this session already keeps {SESSION_KEPT_LIMIT} "
            "characters of earlier results), so it cannot be paged: narrow the command ...]"
        )
    else:
        kept[FULL_CONTENT] = text[:room]
        cut = f" (only its first {room} characters are kept)" if total > room else ""
        how = (
            f"; the full output is kept locally{cut}. Read it page by page with "
            f"{page_call(call_id, RESULT_HEAD)}, or narrow the command ...]"
        )
    marker = (
        f"\n\n[... {omitted} of {total} characters omitted (characters {RESULT_HEAD} to "
        f"{total - RESULT_TAIL}){how}\n\n"
    )
    return text[:RESULT_HEAD] + marker + text[-RESULT_TAIL:], kept


class KeptBudget:
    """The session's :data:`SESSION_KEPT_LIMIT`: how much of it the transcript's
    kept copies (a continued session's included) already use. :meth:`bound` is
    synchronous, so calls of one batch finishing together cannot overshoot it."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.used = sum(
            len(m.meta[FULL_CONTENT])
            for m in messages
            if m.role == "tool" and isinstance(m.meta.get(FULL_CONTENT), str)
        )

    def bound(self, text: str, call_id: str) -> tuple[str, dict[str, Any]]:
        """:func:`bound_result` within what is left of the budget, which it uses up."""
        bounded, kept = bound_result(text, call_id, room=SESSION_KEPT_LIMIT - self.used)
        self.used += len(kept.get(FULL_CONTENT, ""))
        return bounded, kept


def kept_copy(messages: Sequence[Message], call_id: str) -> Message | None:
    """The latest tool result of ``call_id`` in ``messages`` (ids are the provider's;
    should one repeat, the newest result is the one the model just read)."""
    for message in reversed(messages):
        if message.role == "tool" and message.tool_call_id == call_id:
            return message
    return None


class ToolResultPages:
    """``session:tool_result``: a page of a bounded result of this agent's session."""

    name = NAME
    description = DESCRIPTION
    parameters = PARAMETERS
    # It reads what the session already holds: nothing to ask about, safe for a
    # read-only subagent (which pages only its own transcript).
    read_only = True

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        unknown = sorted(set(arguments) - set(PARAMETERS["properties"]))
        if unknown:
            return ToolResult.error(
                f"{NAME}: unknown argument {unknown[0][:100]!r}; it takes call_id, offset and limit"
            )
        call_id = arguments.get("call_id")
        if not isinstance(call_id, str) or not call_id.strip():
            return ToolResult.error(f"{NAME}: call_id must be the id of a tool call (a string)")
        offset = _count(arguments.get("offset", 0))
        if offset is None:
            return ToolResult.error(f"{NAME}: offset must be an integer >= 0 (characters)")
        limit = _count(arguments.get("limit", PAGE_LIMIT))
        if limit is None or limit < 1:
            return ToolResult.error(f"{NAME}: limit must be an integer >= 1 (characters)")
        limit = min(limit, PAGE_LIMIT)
        shown = json.dumps(call_id[:100])
        message = kept_copy(current_transcript.get(), call_id)
        if message is None:
            return ToolResult.error(
                f"{NAME}: no tool result with call id {shown} in this session. Nothing was read."
            )
        full = message.meta.get(FULL_CONTENT)
        if not isinstance(full, str) and FULL_CHARS in message.meta:
            return ToolResult.error(
                f"{NAME}: the full text of call {shown} was not kept (the session keeps at "
                f"most {SESSION_KEPT_LIMIT} characters of bounded results); it cannot be "
                "paged. Rerun a narrower command instead."
            )
        if not isinstance(full, str):
            return ToolResult.error(
                f"{NAME}: the result of call {shown} was not bounded: all of it is already "
                "in the conversation, there is nothing more to page."
            )
        total = message.meta.get(FULL_CHARS, len(full))
        if offset >= len(full):
            return ToolResult.error(
                f"{NAME}: offset {offset} is past the end of the result of call {shown} "
                f"({len(full)} characters{_cut_note(full, total)}); offsets start at 0."
            )
        end = min(offset + limit, len(full))
        if end < len(full):
            after = f"next offset {end}"
        else:
            after = f"end of the result{_cut_note(full, total)}"
        header = f"[characters {offset} to {end} of {total}; {after}]\n"
        return ToolResult(text=header + full[offset:end])


def _cut_note(full: str, total: object) -> str:
    if isinstance(total, int) and total > len(full):
        return f", of {total} only the first {len(full)} were kept"
    return ""


def _count(value: object) -> int | None:
    """A non-negative integer argument; digit strings too (models send either)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, int) and value >= 0:
        return value
    return None
