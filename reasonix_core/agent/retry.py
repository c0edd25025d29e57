"""The unified retry policy: bounded exponential backoff that honours Retry-After."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

# Never wait longer than this for a server-requested Retry-After.
MAX_RETRY_AFTER = 60.0


@dataclass(kw_only=True)
class RetryPolicy:
    """How often and how long to wait before a failed request is sent again."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Delay before retry number ``attempt`` (1 = the first retry)."""
        if retry_after is not None and 0 <= retry_after <= MAX_RETRY_AFTER:
            return retry_after
        delay = min(self.base_delay * (2 ** (attempt - 1)), self.max_delay)
        return delay * (1 - random.random() * self.jitter)
