"""The saved session a launch reopens, read once for the drawing and the engine.

Imported before the first frame: it needs nothing but the standard library
until it reads (in a worker thread).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.agent.cache_report import CacheReport
    from reasonix_core.messages import Message


class SavedSession:
    """The session a launch reopens (``-c``: the newest; ``--resume ID``), read once.

    Both the drawing of the transcript (which does not wait for the engine) and the
    engine (which must reopen the very session that was drawn) ask for it; whoever
    comes first reads the file, the other waits for that reading.
    """

    def __init__(self, sessions_root: Path, workspace: Path, session_id: str | None) -> None:
        self._root = sessions_root
        self._workspace = workspace
        self._requested = session_id
        self._lock = threading.Lock()
        self._loaded: tuple[str | None, Sequence[Message]] | None = None
        self._path: Path | None = None  # the session file, once read

    def _load(self) -> tuple[str | None, Sequence[Message]]:
        with self._lock:
            if self._loaded is None:
                from reasonix_core.agent.session import open_session
                from reasonix_core.errors import SessionError

                try:
                    loaded = open_session(self._root, self._workspace, self._requested)
                except SessionError:  # the engine reports it on the first turn
                    self._loaded = (self._requested, ())
                else:
                    self._loaded = (loaded.header.id, loaded.messages)
                    self._path = loaded.store.path
            return self._loaded

    @property
    def session_id(self) -> str | None:
        """The id of the session reopened (None: none found; the engine says so)."""
        return self._load()[0]

    @property
    def messages(self) -> Sequence[Message]:
        return self._load()[1]

    def busy_pid(self) -> int | None:
        """The pid of another process that has the reopened session open (0:
        unknown), else None (blocking: call it off the loop)."""
        self._load()
        if self._path is None:
            return None
        from reasonix_core.agent.session_lock import lock_holder

        return lock_holder(self._path)

    def cache_report(self) -> CacheReport | None:
        """The reopened session's cache report from its request records (its gauges
        before any new request); None when no session was found."""
        self._load()
        if self._path is None:
            return None
        from reasonix_core.agent.cache_report import session_report

        return session_report(self._path)
