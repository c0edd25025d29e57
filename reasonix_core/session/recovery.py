"""Tool-call recovery, retired (seed 004's compatibility table).

A call that started and left no reliable result is kept as a durable ``unknown``
fact (``agent/transcript.py``); nothing re-runs it. What older clients asked of the
host - "which calls need recovery?", "confirm / reject / retry that one" - still has
an answer, and only this one: the query returns the immutable facts with
``retired=True`` (``retry_enabled=False``), an action is refused with
``tool_recovery_retired`` and never replays, confirms or rewrites anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from reasonix_core.agent.session import read_session
from reasonix_core.errors import ReasonixError

TOOL_RECOVERY_RETIRED = "tool_recovery_retired"


class ToolRecoveryRetired(ReasonixError):
    """A recovery action was asked for: the mechanism is retired."""

    code = TOOL_RECOVERY_RETIRED


def recovery_query(session_path: Path) -> dict[str, Any]:
    """The session's calls whose outcome is unknown, as read-only facts."""
    _, messages = read_session(session_path)
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    calls = [
        {"call_id": m.tool_call_id, "name": names.get(m.tool_call_id or "", ""), "state": "unknown"}
        for m in messages
        if m.role == "tool" and m.meta.get("outcome") == "unknown"
    ]
    return {"retired": True, "retry_enabled": False, "calls": calls}


def recovery_action(session_path: Path, call_id: str, action: str) -> NoReturn:
    """Confirm / reject / retry / inspect a call: always refused, nothing is touched."""
    raise ToolRecoveryRetired(
        f"{TOOL_RECOVERY_RETIRED}: {action or 'recovery'} of {call_id or 'a call'} is retired; "
        "historical execution facts are read-only: check the external state and call "
        "tools normally if more work is needed"
    )
