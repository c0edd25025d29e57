"""A provider's refusal of ``max_tokens`` as too large, and the ceiling it names
(seed 000 §3.1/§3.6): the loop learns it, retries once with it and keeps it for
the model for the session."""

from __future__ import annotations

import re

from reasonix_core.errors import ProviderError

# The length parameter by any of its names, refused as too large or out of range.
_REFUSAL = re.compile(
    r"max_(?:completion_|output_)?tokens\b.{0,80}"
    r"(?:valid range|too large|at most|maximum allowed|exceeds|must be (?:less|<=))",
    re.IGNORECASE | re.DOTALL,
)
_CEILING = (
    # DeepSeek: "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]"
    re.compile(r"valid range of max_(?:completion_|output_)?tokens is \[\s*\d+\s*,\s*(\d+)\s*\]"),
    # OpenAI: "max_tokens is too large: 100000. This model supports at most 16384
    # completion tokens, whereas you provided 100000."
    re.compile(r"supports at most (\d+) completion tokens"),
    # Anthropic: "max_tokens: 100000 > 64000, which is the maximum allowed number of
    # output tokens for claude-..."
    re.compile(r"max_tokens: \d+ > (\d+), which is the maximum allowed"),
)


def is_output_ceiling_refusal(exc: BaseException) -> bool:
    """A 400 (or 422) that refuses the request's output length as too large."""
    if not isinstance(exc, ProviderError) or exc.retryable:
        return False
    if exc.status not in (400, 422):
        return False
    return bool(_REFUSAL.search(exc.message or ""))


def parse_output_ceiling(message: str) -> int | None:
    """The largest output length the refusal names, or None when it names none."""
    for pattern in _CEILING:
        if match := pattern.search(message):
            ceiling = int(match.group(1))
            return ceiling if ceiling > 0 else None
    return None
