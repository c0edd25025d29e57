"""The projection: what a request sends in place of the canonical transcript.

A :class:`Checkpoint` replaces canonical messages ``[0, upto)`` with its
entries (canonical messages, maybe transformed, and literals compaction added:
a summary, an acknowledgement, a truncation marker); the view is those entries
plus the canonical messages appended after them. Checkpoints are persisted
(``<session>.context.json``) with the same record shape as ever, so a restart
restores them byte for byte.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reasonix_core.agent.compaction_meta import (
    COMPACTION_KEY,
    PROJECTION_KEY,
    SUMMARY_KEY,
    CompactionMark,
    EntryMode,
    FailureStatus,
    ProjectionKind,
    mark,
)
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.messages import Message, Role

PRUNE_LIMIT = 8192
PRUNE_HEAD = 4096
PRUNE_TAIL = 1024
PRUNE_MARKER = "[... tool result middle pruned ...]"
CHECKPOINT_VERSION = 1

BLANK_MARKER = (
    "[tool result removed to fit the context window; the full result is kept in the "
    "local session transcript]"
)
SUMMARY_ACK = "Understood. I will continue from this summary."
TRUNCATE_ACK = "Understood."


def prune_text(text: str) -> str:
    """``4096 head + marker + 1024 tail`` for texts over 8192 code points."""
    if len(text) <= PRUNE_LIMIT:
        return text
    return text[:PRUNE_HEAD] + PRUNE_MARKER + text[-PRUNE_TAIL:]


def message_digest(msg: Message) -> str:
    """What a checkpoint's anchor compares: the message it ends on."""
    h = hashlib.sha256()
    for part in (msg.role, msg.content or "", msg.tool_call_id or ""):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    for call in msg.tool_calls:
        h.update(call.id.encode() + b"\0")
    return h.hexdigest()[:16]


def _with_content(msg: Message, content: str, mode: EntryMode) -> Message:
    return Message(
        role=msg.role,
        content=content,
        reasoning_content=msg.reasoning_content,
        tool_calls=msg.tool_calls,
        tool_call_id=msg.tool_call_id,
        name=msg.name,
        meta={**msg.meta, PROJECTION_KEY: mode.value},
    )


def transform(msg: Message, mode: EntryMode) -> Message:
    """The projected form of a canonical message (deterministic)."""
    if mode is EntryMode.PRUNE and msg.role == "tool":
        return _with_content(msg, prune_text(msg.content or ""), EntryMode.PRUNE)
    if mode is EntryMode.BLANK and msg.role == "tool":
        return _with_content(msg, BLANK_MARKER, EntryMode.BLANK)
    return msg


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of the view: a canonical message (``ref``), maybe transformed,
    or a literal the projection added (summary, acknowledgement, marker)."""

    message: Message
    ref: int | None = None
    mode: EntryMode = EntryMode.VERBATIM

    def to_record(self) -> dict[str, Any]:
        if self.ref is not None:
            return {
                "ref": self.ref,
                **({"mode": self.mode.value} if self.mode is not EntryMode.VERBATIM else {}),
            }
        return {"message": self.message.to_record()}

    @classmethod
    def projected(cls, canonical: Sequence[Message], ref: int, mode: EntryMode) -> Entry:
        return cls(transform(canonical[ref], mode), ref, mode)


def literal(role: Role, content: str, kind: CompactionMark) -> Entry:
    """A message compaction adds to the view (not in the canonical transcript)."""
    return Entry(Message(role=role, content=content, meta=mark(kind)))


def view_entries(checkpoint: Checkpoint | None, canonical: Sequence[Message]) -> list[Entry]:
    """The view: the checkpoint's entries, then the canonical tail after it."""
    if checkpoint is None:
        return [Entry(m, i) for i, m in enumerate(canonical)]
    tail = range(checkpoint.upto, len(canonical))
    return [*checkpoint.entries, *(Entry(canonical[i], i) for i in tail)]


@dataclass(kw_only=True)
class Checkpoint:
    """The installed projection: what replaces canonical messages ``[0, upto)``."""

    generation: int
    kind: ProjectionKind
    reason: CompactionReason
    upto: int  # canonical messages[0:upto] are replaced by ``entries``
    entries: tuple[Entry, ...]
    anchor: str  # digest of canonical[upto - 1]
    tokens_before: int = 0
    tokens_after: int = 0

    def to_record(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "kind": self.kind.value,
            "reason": self.reason.value,
            "upto": self.upto,
            "anchor": self.anchor,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "items": [e.to_record() for e in self.entries],
        }

    @property
    def summary(self) -> str | None:
        for entry in self.entries:
            meta = entry.message.meta
            if entry.ref is None and meta.get(COMPACTION_KEY) == CompactionMark.SUMMARY:
                text = meta.get(SUMMARY_KEY)
                return text if isinstance(text, str) else None
        return None

    @classmethod
    def from_record(cls, raw: dict[str, Any], canonical: Sequence[Message]) -> Checkpoint:
        """A persisted checkpoint over ``canonical``; raises ValueError, KeyError
        or TypeError when it does not match the transcript."""
        upto = int(raw["upto"])
        if not 0 < upto <= len(canonical):
            raise ValueError(f"checkpoint covers {upto} messages, transcript has {len(canonical)}")
        if message_digest(canonical[upto - 1]) != raw["anchor"]:
            raise ValueError("checkpoint anchor does not match the transcript")
        entries: list[Entry] = []
        for item in raw["items"]:
            if "ref" in item:
                ref = int(item["ref"])
                if not 0 <= ref < upto:
                    raise ValueError(f"checkpoint refers to message {ref}")
                entries.append(Entry.projected(canonical, ref, EntryMode(item.get("mode", ""))))
            else:
                entries.append(Entry(Message.from_record(item["message"])))
        if not entries or entries[0].message.role != "system":
            raise ValueError("checkpoint does not start with the system message")
        return cls(
            generation=int(raw["generation"]),
            kind=ProjectionKind(raw["kind"]),
            reason=CompactionReason(raw.get("reason", "auto")),
            upto=upto,
            entries=tuple(entries),
            anchor=str(raw["anchor"]),
            tokens_before=int(raw.get("tokens_before", 0)),
            tokens_after=int(raw.get("tokens_after", 0)),
        )


@dataclass(kw_only=True)
class Failure:
    """A compaction that could not form, not retried until the view grows."""

    generation: int
    status: FailureStatus
    detail: str
    tokens: int  # the view's estimate at the attempt
    turn: int = 0

    def to_record(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "status": self.status.value,
            "detail": self.detail,
            "tokens": self.tokens,
            "turn": self.turn,
        }

    @classmethod
    def from_record(cls, raw: dict[str, Any]) -> Failure:
        return cls(
            generation=int(raw["generation"]),
            status=FailureStatus(str(raw.get("status", "failed"))),
            detail=str(raw.get("detail", "")),
            tokens=int(raw.get("tokens", 0)),
        )
