"""The unified retry policy: bounded exponential backoff that honours Retry-After.

A server that asks for a longer wait than :data:`MAX_RETRY_AFTER` is never
retried early: the request gives up at once (:meth:`RetryPolicy.refusal`)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

# Never wait longer than this for a server-requested Retry-After; a longer
# request ends the call instead of being retried before its time.
MAX_RETRY_AFTER = 60.0


@dataclass(kw_only=True)
class RetryPolicy:
    """How often and how long to wait before a failed request is sent again."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)

    def refusal(self, retry_after: float | None) -> str | None:
        """Why a retry the server asked to delay by ``retry_after`` seconds is not
        made at all (the wait is over the cap), or None if it may be."""
        if retry_after is None or retry_after <= MAX_RETRY_AFTER:
            return None
        return (
            f"the server asked to retry after {retry_after:g} s (Retry-After), longer than "
            f"Reasonix waits ({MAX_RETRY_AFTER:g} s): not retried; try again later"
        )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Delay before retry number ``attempt`` (1 = the first retry)."""
        if retry_after is not None and 0 <= retry_after <= MAX_RETRY_AFTER:
            return retry_after
        delay = min(self.base_delay * (2 ** (attempt - 1)), self.max_delay)
        return delay * (1 - random.random() * self.jitter)
