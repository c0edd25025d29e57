"""``/rewind`` over the core: what :class:`~reasonix_tui.engine.EngineServices`
answers for the active session's runtime. No Textual import."""

from __future__ import annotations

from datetime import UTC, datetime

from reasonix_core.agent.builder import Runtime
from reasonix_core.agent.session import open_session
from reasonix_core.checkpoint.report import change_line, format_outcome
from reasonix_core.checkpoint.rewind import (
    fork,
    plan_rewind,
    preview,
    rewind,
    summarize_turns,
)
from reasonix_core.errors import ReasonixError
from reasonix_tui.services import RewindDone, RewindPreview, RewindTurn


def turns(runtime: Runtime) -> list[RewindTurn]:
    """Raises ValueError with the reason when the checkpoints cannot be read."""
    try:
        summaries = summarize_turns(runtime.agent.session.path, runtime.workspace)
    except ReasonixError as exc:
        raise ValueError(str(exc)) from None
    return [
        RewindTurn(
            number=t.number,
            head=t.head,
            time=t.time.replace("T", " ")[:19],
            files=tuple(change_line(c) for c in t.changes),
        )
        for t in summaries
    ]


def code_preview(runtime: Runtime, turn: int) -> RewindPreview:
    path = runtime.agent.session.path
    try:
        plan = plan_rewind(path, runtime.workspace, turn)
        if plan is None or not plan.actions:
            return RewindPreview(diff="", note="no file was changed since that turn")
        diff = preview(path, runtime.workspace, plan)
    except ReasonixError as exc:
        return RewindPreview(diff="", note=str(exc))
    return RewindPreview(diff=diff, conflicts=plan.conflicts)


def apply(runtime: Runtime, turn: int, scope: str, force: bool) -> RewindDone:
    agent = runtime.agent
    now = datetime.now(UTC)
    try:
        if scope == "fork":
            sessions = runtime.home / "sessions"
            loaded = open_session(sessions, runtime.workspace, agent.session_id)
            forked = fork(sessions, runtime.workspace, loaded, turn, now)
            forked.close()
            return RewindDone(message=f"Forked turn {turn} into session {forked.id}.", resume_id=forked.id)  # fmt: skip
        outcome = rewind(
            agent.session, runtime.workspace, turn, scope,  # type: ignore[arg-type]
            lambda: datetime.now(UTC), force=force,
            ledger=agent.tool_context.ledger, checkpointer=agent.checkpoints,
        )  # fmt: skip
    except ReasonixError as exc:
        raise ValueError(str(exc)) from None
    resume = agent.session_id if outcome.branched else None
    return RewindDone(message=format_outcome(outcome).strip(), resume_id=resume)
