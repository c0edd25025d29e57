"""Rewinding a session (docs/REWIND.md): its turns, what a rewind would change,
and the rewind or fork itself, over the session's checkpoints."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from reasonix_core.agent.session import open_session
from reasonix_core.checkpoint.report import format_outcome
from reasonix_core.checkpoint.rewind import (
    Scope,
    TurnSummary,
    fork,
    plan_rewind,
    preview,
    rewind,
    summarize_turns,
)

if TYPE_CHECKING:
    from reasonix_core.agent.loop import Agent
    from reasonix_core.checkpoint.recorder import Checkpointer


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindPreview:
    """The code a rewind to a turn would restore, as a diff (or why not)."""

    diff: str
    note: str = ""
    conflicts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewound:
    """What a rewind did; ``resume_id``: the session to continue in (the branched
    session itself, or a fork), None when the conversation is unchanged."""

    message: str
    resume_id: str | None = None


def rewind_turns(session_path: Path, workspace: Path) -> list[TurnSummary]:
    """The session's turns and what each changed. Raises ReasonixError when the
    checkpoints cannot be read."""
    return summarize_turns(session_path, workspace)


def rewind_preview(session_path: Path, workspace: Path, turn: int) -> RewindPreview:
    """What rewinding the code to ``turn`` would change. Raises ReasonixError."""
    plan = plan_rewind(session_path, workspace, turn)
    if plan is None or not plan.actions:
        return RewindPreview(diff="", note="no file was changed since that turn")
    diff = preview(session_path, workspace, plan)
    return RewindPreview(diff=diff, conflicts=tuple(plan.conflicts))


def rewind_session(
    agent: Agent,
    workspace: Path,
    home: Path,
    checkpoints: Checkpointer | None,
    turn: int,
    scope: str,
    force: bool = False,
) -> Rewound:
    """Rewind ``agent``'s session to ``turn`` (``scope``: code, chat, both) or
    ``fork`` it into a new session. Raises ReasonixError (a conflict without
    ``force``, unreadable checkpoints)."""
    if scope == "fork":
        sessions = home / "sessions"
        loaded = open_session(sessions, workspace, agent.session_id)
        forked = fork(sessions, workspace, loaded, turn, datetime.now(UTC))
        forked.close()
        return Rewound(message=f"Forked turn {turn} into session {forked.id}.", resume_id=forked.id)
    outcome = rewind(
        agent.session,
        workspace,
        turn,
        _scope(scope),
        lambda: datetime.now(UTC),
        force=force,
        ledger=agent.tool_context.ledger,
        checkpointer=checkpoints,
    )
    resume = agent.session_id if outcome.branched else None
    return Rewound(message=format_outcome(outcome).strip(), resume_id=resume)


def fork_saved_session(home: Path, workspace: Path, session_id: str | None) -> str:
    """Fork saved session ``session_id`` (None: the workspace's newest) whole into a new
    session and return its id (``/fork``, ``reasonix run --fork-session``): the original
    is only read, the fork's first request extends the original's last byte for byte.
    Raises SessionError."""
    from reasonix_core.agent.session import fork_session

    sessions = home / "sessions"
    loaded = open_session(sessions, workspace, session_id)
    forked = fork_session(loaded, sessions, workspace, datetime.now(UTC))
    forked.close()
    return forked.id


def _scope(scope: str) -> Scope:
    # rewind() refuses a scope it does not know (checkpoint.SCOPES).
    return cast("Scope", scope)
