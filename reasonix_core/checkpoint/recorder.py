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
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import anyio

from reasonix_core.agent.session import SessionStore
from reasonix_core.checkpoint.store import ShadowStore
from reasonix_core.checkpoint.timeline import (
    AT_REWIND,
    AT_TOOL,
    AT_TURN_END,
    CHECKPOINT,
    Checkpoint,
    read_timeline,
)
from reasonix_core.errors import CheckpointError, SessionError

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
        stored_bytes: int = 0,
    ) -> None:
        self.store = store
        self.session = session
        self.clock = clock
        self.max_bytes = max_bytes
        self.stored_bytes = stored_bytes
        self._last: tuple[int, str | None] | None = None

    @classmethod
    def open(
        cls, session: SessionStore, workspace: Path, clock: Callable[[], datetime], max_mb: int
    ) -> Checkpointer:
        """The checkpointer of ``session`` (continuing its byte count)."""
        store = ShadowStore.open(store_root(session.path), workspace)
        latest = None
        try:
            latest = read_timeline(session.path).latest
        except SessionError:
            pass
        stored = latest.stored_bytes if latest is not None else 0
        return cls(store, session, clock, max_bytes=max_mb * MB, stored_bytes=stored)

    async def before_tool(self, turn: int) -> None:
        await self._take(turn, AT_TOOL)

    async def turn_end(self, turn: int) -> None:
        await self._take(turn, AT_TURN_END)

    async def after_rewind(self, turn: int) -> None:
        await self._take(turn, AT_REWIND, force=True)

    def take(self, turn: int, at: str, *, force: bool = False) -> Checkpoint | None:
        """Snapshot now (blocking) and record it when it differs from the
        last record or opens a turn; returns the record written, if any."""
        tree: str | None = None
        not_kept: dict[str, str] = {}
        if self.store is not None:
            try:
                snap = self.store.snapshot(max(0, self.max_bytes - self.stored_bytes))
            except CheckpointError as exc:
                log.warning("checkpoint failed: %s", exc)
                not_kept = {"*": str(exc)}
            else:
                tree, not_kept = snap.tree, snap.not_kept
                self.stored_bytes += snap.added_bytes
        key = (turn, tree)
        if not force and not not_kept and self._last == key:
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
        )
        self.session.append_event(CHECKPOINT, **checkpoint.to_record())
        return checkpoint

    async def _take(self, turn: int, at: str, *, force: bool = False) -> None:
        # Shielded: a cancelled turn still gets its end checkpoint.
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(lambda: self.take(turn, at, force=force))
