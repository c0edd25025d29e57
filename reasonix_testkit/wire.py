"""What a dialect's answers share with the server that sends them.

The dialects import this, never the server, so the server can name its
default dialect without an import cycle.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from reasonix_testkit.prompt_cache import PromptCache

__all__ = ["FlavouredDialect", "IdSource", "RequestContext", "Wire"]


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


@dataclass(slots=True)
class RequestContext:
    """What a dialect derives from a valid request; the server reads only ``stream``."""

    body: dict[str, Any]
    model: str
    stream: bool
    thinking: bool


class FlavouredDialect:
    """What every dialect does with its flavour: refuse an unknown one, pick its models.

    A dialect names its flavours and their accepted model ids in ``flavour_models``.
    """

    flavour_models: ClassVar[Mapping[str, frozenset[str]]]

    def __init__(self, flavour: str) -> None:
        if flavour not in self.flavour_models:
            raise ValueError(f"unknown flavour {flavour!r}")
        self.flavour = flavour

    @property
    def default_models(self) -> frozenset[str]:
        """The model ids the flavour accepts unless the server is told otherwise."""
        return self.flavour_models[self.flavour]
