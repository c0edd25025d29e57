"""A provider's refusal of a request longer than the model's context, and what
its wording says (the limit it named, the prompt size it counted)."""

from __future__ import annotations

import re

from reasonix_core.errors import ProviderError

_OVERFLOW = re.compile(
    r"maximum context length|context length|context window|context_length_exceeded"
    r"|too many tokens|prompt is too long|input is too long|request too large"
    r"|(messages?|prompt|input|request)[^.]{0,40}too long|reduce the length",
    re.IGNORECASE,
)
_LIMIT = re.compile(r"maximum context length is (\d+)", re.IGNORECASE)
_REQUESTED = re.compile(r"requested (\d+) tokens(?:\s*\((\d+) in the messages)?", re.IGNORECASE)


def is_context_overflow(exc: BaseException) -> bool:
    """A provider's refusal of a request longer than the model's context."""
    if not isinstance(exc, ProviderError) or exc.retryable:
        return False
    if exc.status not in (400, 413, None):
        return False
    return bool(_OVERFLOW.search(exc.message or ""))


def parse_overflow(message: str) -> tuple[int | None, int | None]:
    """(context limit, prompt tokens) from DeepSeek-style overflow wording."""
    limit = prompt = None
    if m := _LIMIT.search(message):
        limit = int(m.group(1))
    if m := _REQUESTED.search(message):
        prompt = int(m.group(2) or m.group(1))
    return limit, prompt
