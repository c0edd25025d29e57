"""The frozen prefix's share of the window: the system prompt and the tool
schemas, which no compaction can shrink.

When they alone reach the compaction threshold (a local model with an 8k
window, where the system prompt and ~30 tool schemas are about 7k tokens),
compaction can never make room; the context manager says so once, with what
to do, instead of reporting one blocked compaction after another."""

from __future__ import annotations

from collections.abc import Sequence

from reasonix_core.agent.context_planning import Budgets
from reasonix_core.agent.context_projection import Entry
from reasonix_core.agent.tokens import TokenEstimator

#: What a user can do about it (config keys from CONFIG.md).
REMEDY = (
    "use a model with a larger context_window, or offer fewer tools "
    "([tools] enabled, fewer MCP servers)"
)


def frozen_prefix_tokens(
    entries: Sequence[Entry], tools_raw: int, estimator: TokenEstimator
) -> int:
    """Estimated tokens of the view's leading system messages plus the tool schemas."""
    raw = tools_raw
    for entry in entries:
        if entry.message.role != "system":
            break
        raw += estimator.message(entry.message)
    return estimator.scale(raw)


def prefix_over_threshold(prefix: int, budgets: Budgets) -> str:
    """The one warning for a frozen prefix at or over the compaction threshold."""
    return (
        f"the system prompt and tool schemas alone are about {prefix:,} tokens, over the "
        f"compaction threshold {budgets.trigger:,} of the {budgets.window:,}-token "
        f"context window: compaction cannot make room. To fix: {REMEDY}"
    )


def prefix_over_window(prefix: int, tokens: int, budgets: Budgets) -> str:
    """The error when the frozen prefix alone leaves no room in the window."""
    return (
        f"the conversation cannot fit the context window: the system prompt and tool "
        f"schemas alone are about {prefix:,} tokens (the whole request about {tokens:,}) "
        f"against a window of {budgets.window:,} (compaction threshold "
        f"{budgets.trigger:,}). To fix: {REMEDY}"
    )
