"""Forking a whole saved session: a new session holding its conversation as it is
now, the original only read (`/fork`, `reasonix run --fork-session`, an ACP client's
``session/fork``). The copy itself is ``agent.session.fork_session`` (a subagent's
``fork_from`` uses it too); a fork at an earlier turn is the rewind's
(``checkpoint/rewind.py``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from reasonix_core.agent.session import fork_session, open_session


def fork_saved_session(home: Path, workspace: Path, session_id: str | None) -> str:
    """Fork saved session ``session_id`` (None: the workspace's newest) whole into a
    new session and return its id. Its header, conversation, compaction checkpoint and
    request records are the original's, so its first request extends the original's
    last byte for byte (the cache hits). Raises SessionError for an unknown or
    unreadable session."""
    sessions = home / "sessions"
    loaded = open_session(sessions, workspace, session_id)
    try:
        forked = fork_session(loaded, sessions, workspace, datetime.now(UTC))
        forked.close()
    finally:
        loaded.store.close()
    return forked.id
