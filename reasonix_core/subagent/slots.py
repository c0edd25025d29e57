"""When a subagent may run: the session's scheduling slots (seed 000 §3.12, §3.14).

One :class:`Slots` per session, shared by every ``task``, ``read_only_task`` and
fleet item. A child holds one slot while it runs: at most
``[agent] max_subagent_concurrency`` children at once, of which at most
``max_parallel_writers`` are writers, and no two running writers with
overlapping :class:`WriteClaim`\\ s. A child that cannot start yet waits; it never
fails for want of a slot. An omitted claim is the whole workspace, so such a
writer runs beside no other writer. Claims are resolved once, by
:func:`~reasonix_core.subagent.claims.resolve_claim`, for scheduling and
enforcement alike.

A child spawned while its task already holds a slot (a nested child, or the
runner called by a fleet that took the slot for its item) runs inside that slot:
waiting for a second slot while holding one could deadlock a full session.

The claim here only decides who may run together; refusing writes outside it is
the claim enforcement's job (:mod:`.claims`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from reasonix_core.fsutil import within
from reasonix_core.subagent.claims import resolve_claim

if TYPE_CHECKING:
    from reasonix_core.config.schema import AgentConfig
    from reasonix_core.tool.sandbox import SandboxPolicy

__all__ = ["Slots", "WriteClaim"]

# The slot a task (and the tasks it starts) holds; None: none.
_holding: ContextVar[_Held | None] = ContextVar("reasonix_subagent_slot", default=None)


@dataclass(frozen=True, slots=True)
class WriteClaim:
    """What a writer may write, for scheduling: the resolved paths of its claim
    (the workspace root for an omitted ``write_paths``)."""

    paths: tuple[str, ...]

    @classmethod
    def resolved(cls, claim: Sequence[Path]) -> WriteClaim:
        """From a claim :func:`~reasonix_core.subagent.claims.resolve_claim` resolved."""
        return cls(tuple(sorted({str(p) for p in claim})))

    @classmethod
    def of(cls, write_paths: Sequence[str] | None, sandbox: SandboxPolicy) -> WriteClaim:
        """Resolve ``write_paths`` as enforcement will (symlinks and ``..`` resolved,
        inside the workspace): one truth for scheduling and enforcement. Raises
        :class:`~reasonix_core.subagent.spec.SubagentError` for a bad path."""
        return cls.resolved(resolve_claim(write_paths, sandbox))

    def overlaps(self, other: WriteClaim) -> bool:
        """A path of one is, or lies under, a path of the other."""
        return bool(self.shared_with(other))

    def shared_with(self, other: WriteClaim) -> str:
        """The innermost path both claim ("" if none)."""
        for a in self.paths:
            for b in other.paths:
                if within(a, b):
                    return a
                if within(b, a):
                    return b
        return ""


@dataclass(eq=False)
class _Held:
    claim: WriteClaim | None  # None: a reader's slot


@dataclass(eq=False)
class _Waiter:
    claim: WriteClaim | None  # None: a reader


@dataclass(eq=False)
class Slots:
    """The session's scheduling slots. Waiting is fair per claim: a writer does
    not start ahead of an earlier waiting writer whose claim it overlaps, so a
    whole-workspace writer is not starved by a stream of small ones."""

    max_concurrency: int = 6
    max_writers: int = 3
    _running: int = field(default=0, init=False)
    _claims: list[WriteClaim] = field(default_factory=list, init=False)
    _waiting: list[_Waiter] = field(default_factory=list, init=False)
    _changed: anyio.Event | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or self.max_writers < 1:
            raise ValueError("subagent slots must be at least 1")

    @classmethod
    def from_config(cls, agent: AgentConfig) -> Slots:
        return cls(
            max_concurrency=agent.max_subagent_concurrency,
            max_writers=agent.max_parallel_writers,
        )

    @property
    def running(self) -> int:
        return self._running

    @property
    def writers(self) -> int:
        return len(self._claims)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def can_start(self, claim: WriteClaim | None) -> bool:
        """Would :meth:`hold` with ``claim`` start at once (nobody to wait for)?"""
        return _holding.get() is not None or self._admits(_Waiter(claim))

    @asynccontextmanager
    async def hold(self, claim: WriteClaim | None) -> AsyncIterator[None]:
        """Wait for a slot (a writer slot with a claim no running writer
        overlaps, for a writer; ``claim=None`` is a reader), hold it for the
        block. A cancelled wait leaves no trace; already holding: no second slot."""
        if _holding.get() is not None:
            yield
            return
        me = _Waiter(claim)
        self._waiting.append(me)
        admitted = False
        try:
            while not self._admits(me):
                if self._changed is None:
                    self._changed = anyio.Event()
                await self._changed.wait()
            admitted = True
        finally:
            self._waiting.remove(me)
            if not admitted:
                self._wake()  # writers queued behind this one may start now
        # No await between the check and taking the slot: nobody overtakes.
        self._running += 1
        held = _Held(claim)
        if claim is not None:
            self._claims.append(claim)
        token = _holding.set(held)
        try:
            yield
        finally:
            _holding.reset(token)
            self._running -= 1
            if held.claim is not None:
                self._drop(held.claim)
            self._wake()

    def narrow(self, claim: WriteClaim) -> None:
        """Narrow the writer slot the calling task holds to ``claim`` (seed 000
        §3.12: a child without explicit ``write_paths`` reserves the whole
        workspace to start, then, while it writes only through path-aware tools,
        just the files it wrote). Writers waiting for a claim it no longer
        overlaps may start. No slot held, or a reader's: nothing to narrow."""
        held = _holding.get()
        if held is None or held.claim is None:
            return
        self._drop(held.claim)
        self._claims.append(claim)
        held.claim = claim
        self._wake()

    def _drop(self, claim: WriteClaim) -> None:
        # By identity: two writers may hold equal claims.
        index = next(n for n, held in enumerate(self._claims) if held is claim)
        del self._claims[index]

    def _admits(self, me: _Waiter) -> bool:
        if self._running >= self.max_concurrency:
            return False
        claim = me.claim
        if claim is None:
            return True
        if len(self._claims) >= self.max_writers:
            return False
        if any(claim.overlaps(held) for held in self._claims):
            return False
        for earlier in self._waiting:  # (a waiter not queued yet comes after them all)
            if earlier is me:
                return True
            if earlier.claim is not None and earlier.claim.overlaps(claim):
                return False
        return True

    def _wake(self) -> None:
        # Every waiter re-checks; a fresh event for the next round.
        if self._changed is not None:
            self._changed.set()
            self._changed = None
