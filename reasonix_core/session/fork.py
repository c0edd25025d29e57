"""Forking a whole saved session: a new session holding its conversation as it
is now, the original untouched (an ACP client's ``session/fork``). A fork at an
earlier turn is the rewind's (``checkpoint/rewind.py``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from reasonix_core.agent.session import SessionHeader, SessionStore, new_session_id, open_session


def fork_session(sessions_root: Path, workspace: Path, session_id: str) -> str:
    """The new session's id. Its header (system prompt, tools, model) and messages
    are the original's byte for byte, so its first request hits the same cached
    prefix. SessionError for an unknown or unreadable session."""
    loaded = open_session(sessions_root, workspace, session_id)
    try:
        header = loaded.header
        now = datetime.now(UTC)
        forked = SessionHeader(
            id=new_session_id(now),
            workspace=header.workspace,
            created=now.isoformat(),
            model=header.model,
            effort=header.effort,
            system_prompt=header.system_prompt,
            tools_fingerprint=header.tools_fingerprint,
            extra={**header.extra, "forked_from": header.id},
        )
        store = SessionStore.create(sessions_root, workspace, forked)
        try:
            for message in loaded.messages:
                store.append(message)
        finally:
            store.close()
    finally:
        loaded.store.close()
    return forked.id
