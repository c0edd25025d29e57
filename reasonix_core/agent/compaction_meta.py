"""The vocabulary compaction writes into messages and checkpoints: one owner.

Every string here is persisted (a message's ``meta`` in the session JSONL, a
checkpoint's ``kind`` and item ``mode`` in ``<session>.context.json``), so the
enum values are the wire bytes and never change; code branches on the members.
"""

from __future__ import annotations

from enum import StrEnum

# ``Message.meta`` keys.
COMPACTION_KEY = "compaction"  # what a compaction-made message is (a CompactionMark)
SUMMARY_KEY = "summary"  # the digest's plain text, on the summary message
PROJECTION_KEY = "projection"  # how a canonical message was projected (an EntryMode)


class CompactionMark(StrEnum):
    """``meta["compaction"]``: the role of a message compaction made."""

    REQUEST = "request"  # the instruction closing a summary request
    SUMMARY = "summary"  # the digest that replaces the old history
    ACK = "ack"  # an assistant line between two user messages
    TRUNCATE = "truncate"  # the marker of a lossy truncation
    PART = "part"  # the lead of a later chunk of a chunked fold


class ProjectionKind(StrEnum):
    """``Checkpoint.kind``: what the installed projection did last."""

    PRUNE = "prune"
    SUMMARY = "summary"
    TRUNCATE = "truncate"


class EntryMode(StrEnum):
    """How one canonical message appears in the view (a checkpoint item's ``mode``)."""

    VERBATIM = ""
    PRUNE = "prune"  # a long tool result cut to head + marker + tail
    BLANK = "blank"  # a tool result replaced by a marker (lossy truncation)


class FailureStatus(StrEnum):
    """Why a summary could not form (``Failure.status``)."""

    FAILED = "failed"  # a paid request gave no digest
    BLOCKED = "blocked"  # nothing could be planned


def mark(kind: CompactionMark) -> dict[str, object]:
    """The ``meta`` of a message compaction made (plain strings, as persisted)."""
    return {COMPACTION_KEY: kind.value}
