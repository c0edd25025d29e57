"""When a subagent may run: the session's scheduling slots (seed 000 §3.12, §3.14).

One :class:`Slots` per session, shared by every ``task``, ``read_only_task`` and
fleet item at every depth. A running child holds one slot: at most
``[agent] max_subagent_concurrency`` children run at once, children of children
included, of which at most ``max_parallel_writers`` are writers, and no two
running writers with overlapping :class:`WriteClaim`\\ s. A child that cannot
start yet waits; it never fails for want of a slot. An omitted claim is the
whole workspace, so such a writer runs beside no other writer. Claims are
resolved once, by :func:`~reasonix_core.subagent.claims.resolve_claim`, for
scheduling and enforcement alike.

**Nesting.** A child that delegates is blocked on its children (it makes no
model call until their results come back), so its slot is *lent* to one of
them: a nested child first borrows its parent's slot, and only a second child
of the same parent running at the same time takes a slot of its own from the
session's pool. Why not let the parent release its slot while it waits: it
would have to take it back afterwards, and its claim (the files it is half-way
through editing) would be open to other writers meanwhile. Why not let nested
children run outside the limit (as before): a fleet of fleets then runs far
more than ``max_subagent_concurrency`` agents at once. With lending, every
agent making model calls occupies one slot, and a parent waiting on its
children can never deadlock the session: a full pool of parents each lends its
slot to a child, which runs. A writer's children claim inside its claim (the
runner refuses a path outside it), so they are checked against every other
running writer's claim but not their ancestors'.

A fleet takes each item's slot itself (so an item waiting for one has not
started, for ``fail_fast``), marked for that child: the runner's own
:meth:`Slots.hold` then *adopts* it instead of nesting, after checking that the
claim it resolved for enforcement lies inside the one the fleet reserved (a
symlink swapped between the fleet's preflight and the item's start cannot make
the child write outside what the scheduler kept for it).

The claim here only decides who may run together; refusing writes outside it is
the claim enforcement's job (:mod:`.claims`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from reasonix_core.fsutil import within
from reasonix_core.subagent.claims import resolve_claim
from reasonix_core.subagent.spec import SubagentError

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
        """A path of one is, or lies under, a path of the other: a directory
        claim conflicts with every claim inside it."""
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

    def inside(self, other: WriteClaim) -> bool:
        """Every path of this claim is, or lies under, a path of ``other``."""
        return all(any(within(a, b) for b in other.paths) for a in self.paths)


@dataclass(eq=False)
class _Held:
    claim: WriteClaim | None  # None: a reader's slot
    # The slot of the agent that spawned this child (None: the session's agent).
    parent: _Held | None = None
    # Runs in its parent's slot, lent while the parent waits on its children.
    borrowed: bool = False
    # This slot is lent to one of its children right now.
    lent: bool = False
    # Taken by a fleet for an item whose runner has not adopted it yet.
    for_child: bool = False


@dataclass(eq=False)
class _Waiter:
    claim: WriteClaim | None  # None: a reader
    parent: _Held | None = None


def _lineage(held: _Held | None) -> Iterator[_Held]:
    """``held`` and the slots of the agents above it."""
    while held is not None:
        yield held
        held = held.parent


@dataclass(eq=False)
class Slots:
    """The session's scheduling slots. Waiting is fair per claim: a writer does
    not start ahead of an earlier waiting writer whose claim it overlaps, so a
    whole-workspace writer is not starved by a stream of small ones."""

    max_concurrency: int = 6
    max_writers: int = 3
    _held: list[_Held] = field(default_factory=list, init=False)
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
        """Slots in use: children running at once, at any depth (a parent and the
        child it lends its slot to count once)."""
        return sum(1 for held in self._held if not held.borrowed)

    @property
    def writers(self) -> int:
        """Writer slots in use (a writer's child running in its slot adds none)."""
        return sum(1 for held in self._held if _takes_writer_slot(held))

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def can_start(self, claim: WriteClaim | None) -> bool:
        """Would :meth:`hold` with ``claim`` start at once (nobody to wait for)?"""
        return self._admits(_Waiter(claim, _holding.get()))

    @asynccontextmanager
    async def hold(
        self, claim: WriteClaim | None, *, for_child: bool = False
    ) -> AsyncIterator[None]:
        """Wait for a slot (a writer slot with a claim no running writer
        overlaps, for a writer; ``claim=None`` is a reader), hold it for the
        block. Inside a held slot this is a nested child: it borrows the
        parent's slot if it is not lent already, else waits for one of its own.
        ``for_child``: taken for a child the runner starts inside the block (a
        fleet item), whose own ``hold`` adopts it. A cancelled wait leaves no
        trace.

        Raises :class:`~reasonix_core.subagent.spec.SubagentError` when a
        writer's claim is not inside the claim of the slot it runs in (adopted
        or borrowed): resolved again, it is not what was reserved."""
        parent = _holding.get()
        if parent is not None:
            _check_inside(claim, parent.claim)
        if parent is not None and parent.for_child:
            parent.for_child = False  # adopted: the child runs in the fleet's slot
            yield
            return
        me = _Waiter(claim, parent)
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
        borrowed = parent is not None and not parent.lent
        if borrowed:
            assert parent is not None
            parent.lent = True
        held = _Held(claim, parent=parent, borrowed=borrowed, for_child=for_child)
        self._held.append(held)
        token = _holding.set(held)
        try:
            yield
        finally:
            _holding.reset(token)
            self._held.remove(held)
            if borrowed:
                assert parent is not None
                parent.lent = False
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
        held.claim = claim
        self._wake()

    def _admits(self, me: _Waiter) -> bool:
        parent = me.parent
        borrow = parent is not None and not parent.lent
        if not borrow and self.running >= self.max_concurrency:
            return False
        claim = me.claim
        if claim is None:
            return True
        writer_parent = borrow and parent is not None and parent.claim is not None
        if not writer_parent and self.writers >= self.max_writers:
            return False
        lineage = list(_lineage(parent))
        for held in self._held:
            # A writer's own children claim inside its claim: no conflict with it.
            if held.claim is not None and held not in lineage and claim.overlaps(held.claim):
                return False
        mine = [held.claim for held in lineage if held.claim is not None]
        for earlier in self._waiting:  # (a waiter not queued yet comes after them all)
            if earlier is me:
                return True
            if earlier.claim is None or not earlier.claim.overlaps(claim):
                continue
            # An earlier writer from elsewhere that overlaps one of my ancestors
            # waits for that ancestor, which waits for me: deferring to it would
            # deadlock. (An earlier sibling is still served first.)
            if earlier.parent is not parent and any(earlier.claim.overlaps(c) for c in mine):
                continue
            return False
        return True

    def _wake(self) -> None:
        # Every waiter re-checks; a fresh event for the next round.
        if self._changed is not None:
            self._changed.set()
            self._changed = None


def _takes_writer_slot(held: _Held) -> bool:
    """A writer holds a writer slot unless it runs in a writer parent's slot."""
    if held.claim is None:
        return False
    return not (held.borrowed and held.parent is not None and held.parent.claim is not None)


def _check_inside(claim: WriteClaim | None, outer: WriteClaim | None) -> None:
    if claim is None or outer is None or claim.inside(outer):
        return
    raise SubagentError(
        f"write_paths: the claim resolves to {', '.join(claim.paths)}, outside the slot it runs "
        f"in ({', '.join(outer.paths)}); a path changed (a symlink swapped?) since it was "
        "reserved"
    )
