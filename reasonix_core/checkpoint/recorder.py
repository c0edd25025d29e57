"""Taking checkpoints during a session: the agent's side.

The agent calls :meth:`Checkpointer.before_tool` before every call of a tool
that is not read-only (the family is not ``read``: bash, the file writers, MCP
tools...) and :meth:`Checkpointer.turn_end` when a turn ends, however it ends.
Each snapshot that differs from the previous one (or opens a turn) is
appended to the transcript as a ``checkpoint`` record
(:mod:`checkpoint.timeline` reads them back).

A snapshot that fails never fails the call or the turn: it is logged and the
record says so (``tree`` null), and a rewind across it is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from reasonix_core.agent.session import SessionStore
from reasonix_core.checkpoint.preimages import PreImageStore
from reasonix_core.checkpoint.store import Entry, ShadowStore
from reasonix_core.checkpoint.timeline import (
    AT_TOOL,
    AT_TURN_END,
    CHECKPOINT,
    TURN,
    Checkpoint,
    read_timeline,
)
from reasonix_core.errors import CheckpointError, SessionError
from reasonix_core.permission.rules import Call, is_path_tool

log = logging.getLogger(__name__)

MB = 1024 * 1024


def store_root(session_path: Path) -> Path:
    """``<id>.rewind/`` beside ``<id>.jsonl``: the session's shadow store."""
    return session_path.with_name(session_path.stem + ".rewind")


class Checkpointer:
    """Snapshots of one session's workspace, recorded in its transcript."""

    def __init__(
        self,
        store: ShadowStore | None,
        session: SessionStore,
        clock: Callable[[], datetime],
        *,
        max_bytes: int,
        stored_bytes: int | None = None,
        preimages: PreImageStore | None = None,
    ) -> None:
        self.store = store
        # Without git: copies of what the file tools write (bash is not covered).
        self.preimages = preimages
        self._touched: set[str] = set()
        self._wrote = False  # a tool that may write ran in this turn
        # The turn whose first snapshot read the whole tree (a turn boundary).
        self._whole_read: int | None = None
        self.session = session
        self.clock = clock
        self.max_bytes = max_bytes
        self.stored_bytes = stored_bytes
        self._last: tuple[int, str | None, frozenset[tuple[str, str]]] | None = None

    @classmethod
    def open(
        cls, session: SessionStore, workspace: Path, clock: Callable[[], datetime], max_mb: int
    ) -> Checkpointer:
        """The checkpointer of ``session`` (continuing its byte count)."""
        store = ShadowStore.open(store_root(session.path), workspace, watch=True)
        preimages = PreImageStore(store_root(session.path), workspace) if store is None else None
        return cls(store, session, clock, max_bytes=max_mb * MB, preimages=preimages)

    def close(self) -> None:
        """Stop watching the workspace (a seed copy still running finishes on its own)."""
        if self.store is not None:
            self.store.close()

    async def before_tool(
        self, turn: int, tool: str = "", args: Mapping[str, Any] | None = None
    ) -> None:
        self._wrote = True
        names: list[str] = []
        if self.preimages is not None and is_path_tool(tool):
            paths = Call.build(tool, args, self.preimages.workspace).paths
            names = self.preimages.names(p for p in paths if isinstance(p, str))
        await self._take(turn, AT_TOOL, names=names)

    def turn_started(self, turn: int) -> None:
        """A ``turn`` record: when the turn began (no snapshot: nothing ran yet)."""
        self._wrote = False
        self.session.append_event(TURN, turn=turn, time=self.clock().isoformat(timespec="seconds"))

    async def turn_end(self, turn: int) -> None:
        # A turn that ran no tool that may write changed nothing: no snapshot
        # (a question answered in a huge folder costs no tree walk).
        if self._wrote:
            self._wrote = False
            await self._take(turn, AT_TURN_END)

    def take(
        self, turn: int, at: str, *, force: bool = False, names: Sequence[str] = ()
    ) -> Checkpoint | None:
        """Snapshot now (blocking) and record it when it differs from the
        last record or opens a turn; returns the record written, if any.
        ``names``: without git, the files the coming call writes."""
        tree: str | None = None
        not_kept: dict[str, str] = {}
        files: dict[str, Entry | None] = {}
        if self.preimages is not None:
            if at == AT_TOOL:
                self._touched.update(names)
                wanted = list(names)
            elif at == AT_TURN_END:  # what the turn's calls left
                wanted, self._touched = sorted(self._touched), set()
            else:  # a rewind: what it restored
                wanted = list(names)
            try:
                files = self.preimages.capture(wanted)
            except OSError as exc:
                log.warning("checkpoint copy failed: %s", exc)
                not_kept = {"*": str(exc)}
        if self.stored_bytes is None:
            self.stored_bytes = self._stored_so_far()
        if self.store is not None:
            # At a turn's boundaries (its first snapshot and its end) the whole
            # tree's stat data are read (one git status): a write the watcher
            # cannot see (a shared mapping, a hard link's outside name) is
            # caught there; the steps between follow the watcher alone.
            whole = at == AT_TURN_END or self._whole_read != turn
            self._whole_read = turn
            try:
                snap = self.store.snapshot(max(0, self.max_bytes - self.stored_bytes), whole=whole)
            except CheckpointError as exc:
                log.warning("checkpoint failed: %s", exc)
                not_kept = {"*": str(exc)}
            else:
                tree, not_kept = snap.tree, snap.not_kept
                self.stored_bytes += snap.added_bytes
        # A repeated over-bound file or failure is said once, not at every call.
        key = (turn, tree, frozenset(not_kept.items()))
        if not force and not files and self._last == key:
            return None
        self._last = key
        checkpoint = Checkpoint(
            turn=turn,
            at=at,
            time=self.clock().isoformat(timespec="seconds"),
            tree=tree,
            not_kept=not_kept,
            stored_bytes=self.stored_bytes,
            covers_bash=self.store is not None,
            files=files,
        )
        self.session.append_event(CHECKPOINT, **checkpoint.to_record())
        return checkpoint

    def _stored_so_far(self) -> int:
        """What the session's earlier checkpoints stored (a continued session)."""
        try:
            latest = read_timeline(self.session.path).latest
        except SessionError:
            return 0
        return latest.stored_bytes if latest is not None else 0

    async def _take(
        self, turn: int, at: str, *, force: bool = False, names: Sequence[str] = ()
    ) -> None:
        # Shielded: a cancelled turn still gets its end checkpoint.
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(lambda: self.take(turn, at, force=force, names=names))
