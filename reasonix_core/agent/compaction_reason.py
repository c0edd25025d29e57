"""Why a compaction runs: the one typed value every compaction branch reads."""

from __future__ import annotations

from enum import StrEnum

from reasonix_core.agent.prefix_change import PrefixChangeReason


class CompactionReason(StrEnum):
    """The trigger of a maintenance transaction.

    The string values are the wire vocabulary (``CompactionStarted.reason``,
    the checkpoint file, the transcript's ``checkpoint`` record); code
    branches on the members and their properties, never on the strings."""

    AUTO = "auto"  # before a step's request, at the threshold
    MANUAL = "manual"  # /compact, ``reasonix compact``
    OVERFLOW = "overflow"  # the provider refused the step's request as too long

    @property
    def prefix_reason(self) -> PrefixChangeReason:
        """``PrefixChanged.reason`` when this compaction installs a summary or a prune."""
        if self is CompactionReason.MANUAL:
            return PrefixChangeReason.COMPACT_MANUAL
        return PrefixChangeReason.COMPACT_AUTO

    @property
    def unattended(self) -> bool:
        """Nobody asked for it: failures are recorded (and not retried for pay
        until the view grows) and summaries count against the turn's budget."""
        return self is not CompactionReason.MANUAL

    @property
    def one_summary(self) -> bool:
        """At most one summary; only pressure before a step may fold twice."""
        return self is not CompactionReason.AUTO

    @property
    def folds_in_chunks(self) -> bool:
        """A history too large for one summary request may be folded in chunks
        (``agent/chunked_fold.py``): only when someone asked for it, or to
        recover from an overflow; pressure compaction never does (seed 003)."""
        return self is not CompactionReason.AUTO
