"""The fixtures' tokenizer and simulated DeepSeek prompt cache.

A successful request persists two whole "cache prefix units" (end of input,
end of output) keyed by (model, user id); a hit is the longest persisted unit
that is a prefix of the rendered prompt. Every dialect renders its own prompt
and reports the hit in its own usage object.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import threading
from collections import deque

from reasonix_core.agent.cache_ledger import common_prefix_length

# DeepSeek also persists a prefix that several requests share as a unit of its
# own (wire-formats.md §3.1 rule 2: "A+B then A+C misses, then A+D hits A").
# The fixture keeps the last few prompts to find such shared prefixes.
SHARED_PREFIX_HISTORY = 8
SHARED_PREFIX_MIN_BYTES = 256


def count_tokens(text: str) -> int:
    """The fixture's tokenizer: one token per 4 UTF-8 bytes, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


def bytes_to_tokens(n: int) -> int:
    """:func:`count_tokens` for a length already in bytes."""
    return (n + 3) // 4


def usage_counts(prompt_bytes: int, hit_bytes: int, generated: str) -> tuple[int, int, int]:
    """(prompt, cache hit, output) tokens of one answer; the output counts at least one."""
    return (
        bytes_to_tokens(prompt_bytes),
        bytes_to_tokens(hit_bytes),
        max(1, count_tokens(generated)),
    )


class _CacheSpace:
    __slots__ = ("digests", "lengths", "recent")

    def __init__(self) -> None:
        self.lengths: list[int] = []  # sorted distinct unit lengths (bytes)
        self.digests: dict[int, set[bytes]] = {}
        self.recent: deque[bytes] = deque(maxlen=SHARED_PREFIX_HISTORY)


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class PromptCache:
    """Whole cache prefix units stored as (byte length, hash); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spaces: dict[tuple[str, str], _CacheSpace] = {}

    def reset(self) -> None:
        with self._lock:
            self._spaces.clear()

    def lookup_and_persist(self, space_key: tuple[str, str], prompt: bytes) -> int:
        """Length of the longest persisted unit prefixing ``prompt``; then persist ``prompt``."""
        with self._lock:
            space = self._spaces.setdefault(space_key, _CacheSpace())
            best = 0
            hasher = hashlib.blake2b(digest_size=16)
            view = memoryview(prompt)
            pos = 0
            for length in space.lengths:
                if length > len(prompt):
                    break
                hasher.update(view[pos:length])
                pos = length
                if length and hasher.copy().digest() in space.digests[length]:
                    best = length
            self._add(space, prompt)
            shared = max((common_prefix_length(prompt, old) for old in space.recent), default=0)
            if shared >= SHARED_PREFIX_MIN_BYTES and shared > best:
                self._add(space, prompt[:shared])
            space.recent.append(prompt)
            return best

    def persist(self, space_key: tuple[str, str], unit: bytes) -> None:
        with self._lock:
            self._add(self._spaces.setdefault(space_key, _CacheSpace()), unit)

    @staticmethod
    def _add(space: _CacheSpace, unit: bytes) -> None:
        length = len(unit)
        bucket = space.digests.get(length)
        if bucket is None:
            bucket = space.digests[length] = set()
            bisect.insort(space.lengths, length)
        bucket.add(_digest(unit))
