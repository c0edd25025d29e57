"""One summary request of a compaction: how it is sent, what it asks and what
its reply must be to become a digest.

Shared by the single summary (``agent/context.py``) and the chunked fold
(``agent/chunked_fold.py``), so both ask with the same words and accept a
reply by the same rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from reasonix_core.agent.compaction_meta import CompactionMark, mark
from reasonix_core.agent.model_call import Reply
from reasonix_core.messages import Message

HISTORY_ACK = "(no answer to this message)"

# What every summary must keep, whatever part of the history it covers.
SUMMARY_CONTENTS = """\
- the user's requests, constraints and preferences (quote short ones verbatim);
- decisions made and why;
- files read, created or changed, with the details that still matter (paths, \
function names, key lines);
- commands run and what they showed; errors met and how they were resolved;
- the current state of the task, what remains to do, and the immediate next step.

Do not call tools. Reply with the summary only, as plain text.
</compaction-request>"""

COMPACTION_INSTRUCTION = (
    """\
<compaction-request>
The context window is nearly full. The messages above will be replaced by a summary \
that you write now; the most recent messages are kept verbatim after it. If the \
conversation starts with an earlier context summary, merge it with the newer history \
into one summary.

Write the summary so that you can continue the work from it alone:
"""
    + SUMMARY_CONTENTS
)


def with_focus(instruction: str, focus: str = "") -> str:
    """An instruction with what the user asked the summary to keep
    (``/compact keep the table``)."""
    if not focus.strip():
        return instruction
    return f"{instruction}\n\nThe user asks this summary to: {focus.strip()}"


def compaction_instruction(focus: str = "") -> str:
    """The single summary request's instruction."""
    return with_focus(COMPACTION_INSTRUCTION, focus)


class Summarize(Protocol):
    """Send one summary request and return its reply (built on the agent's
    ModelCall, which sends the request's events to the agent's sink).

    ``messages`` are sent as given, with the agent's current model and effort;
    ``with_tools``: with the tool schemas of a normal request (so the cached
    prefix matches), or without any for the bounded plain-text fallback."""

    async def __call__(
        self,
        messages: Sequence[Message],
        *,
        with_tools: bool,
        max_output_tokens: int,
    ) -> Reply: ...


def summary_request(history: list[Message], instruction: Message) -> list[Message]:
    """The summary request: the history as last sent (its cached prefix), then the
    instruction. Should the history end with a user message, an assistant line goes
    between them, so two user messages never follow each other (some providers refuse
    that); it comes after the cached bytes, so the prefix still hits."""
    if history and history[-1].role == "user":
        return [*history, history_ack(), instruction]
    return [*history, instruction]


def history_ack() -> Message:
    """The assistant line between a history ending with a user turn and the instruction."""
    return Message(role="assistant", content=HISTORY_ACK, meta=mark(CompactionMark.ACK))


def read_summary(call: Reply, output_cap: int) -> tuple[str, str]:
    """(summary text, "") when the reply is a digest, else ("", why not).

    Only a normal finish with text counts: a timeout, an error, an empty
    reply, a tool call instead of text or the output cap never do."""
    if call.error is not None:
        return "", f"the summary request failed ({call.error})"
    finish = call.end.finish_reason if call.end is not None else ""
    if finish == "length":
        return "", f"the summary hit the output cap ({output_cap} tokens)"
    text = call.text.strip()
    if not text:
        return "", "the summary request returned no text"
    if finish not in ("stop", ""):
        return "", f"the summary request ended with finish_reason={finish}"
    return text, ""
