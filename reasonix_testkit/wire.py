"""What a dialect's answers share with the server that sends them.

The dialects import this, never the server, so the server can name its
default dialect without an import cycle.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

from reasonix_testkit.prompt_cache import PromptCache

__all__ = ["IdSource", "Wire"]


class IdSource:
    """The server's seeded random source for generated ids (thread-safe)."""

    def __init__(self, seed: int | None) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def choices(self, alphabet: str, k: int) -> str:
        with self._lock:
            return "".join(self._rng.choices(alphabet, k=k))

    def bits(self, n: int) -> int:
        with self._lock:
            return self._rng.getrandbits(n)


@dataclass(frozen=True, slots=True)
class Wire:
    """What a dialect's answers share with the server that sends them."""

    stop: threading.Event  # set when the server stops: streams end now
    cache: PromptCache
    ids: IdSource
