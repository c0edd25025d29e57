"""Token usage of one model call, normalised across wire formats."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Counts for one billed call.

    ``prompt_tokens`` always includes the cached part (the OpenAI / DeepSeek
    convention), so ``prompt_tokens == cache_hit_tokens + cache_miss_tokens``.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    reasoning_tokens: int = 0
    # Searches the provider ran server-side for this call (Anthropic's
    # ``usage.server_tool_use.web_search_requests``); billed per search.
    web_search_requests: int = 0
    # Counted locally because the provider's stream carried no usage
    # (agent/usage_estimate.py); shown with a mark, never used to calibrate.
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
