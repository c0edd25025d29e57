"""Why the prompt prefix changed: the one vocabulary of ``PrefixChanged.reason``.

Every byte that changes earlier in a request than the previous request's end
must have one of these names; the cache ledger (``cache_ledger.py``) calls a
break without one ``unexplained``, and ``reasonix cache --check`` fails on it.
The string values are the wire vocabulary (events, metrics JSON, the session's
request records); code compares members, never the strings.
"""

from __future__ import annotations

from enum import StrEnum


class PrefixChangeReason(StrEnum):
    # Parts of the prefix key the loop compares before each request, in key order.
    SYSTEM = "system"  # the system prompt (standing instructions included)
    TOOLS = "tools"  # the tool list, order or schemas (an MCP server that came up late)
    MODEL = "model"  # /model, or --model on a continued session
    EFFORT = "effort"  # /effort, or --effort on a continued session
    # Compaction installed a new view of the history (CompactionReason.prefix_reason).
    COMPACT_AUTO = "compact_auto"  # at the threshold, or to rescue a provider overflow
    COMPACT_MANUAL = "compact_manual"  # /compact, ``reasonix compact``
    TRUNCATE = "truncate"  # a lossy cut at the hard limit
    REWIND = "rewind"  # the conversation was rewound to an earlier message
    # A DeepSeek model behind a host not known as DeepSeek answered 400 for missing
    # reasoning_content: the retry sends earlier assistant turns with it.
    REASONING_REPLAY = "reasoning_replay"
    # Not an event's reason: the ledger's verdict on a break no event named.
    UNEXPLAINED = "unexplained"


#: The parts of the loop's prefix key, in the order ``Agent._prefix_key`` builds it.
PREFIX_KEY_PARTS: tuple[PrefixChangeReason, ...] = (
    PrefixChangeReason.SYSTEM,
    PrefixChangeReason.TOOLS,
    PrefixChangeReason.MODEL,
    PrefixChangeReason.EFFORT,
)
