"""The session's built-in commands (``reasonix_core.command.builtin``) typed in
an ACP prompt: each runs on the session core as the terminal app's does, and
its result is the agent's message (a line of text) or the events it streams
(a compaction, the approved plan's execution, a goal's rounds)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

from reasonix_core import events as ev
from reasonix_core.command.builtin import (
    COMPACT,
    EFFORT,
    GOAL,
    GOAL_USAGE,
    GOAL_WORDS,
    PLAN,
    STATUS,
    SessionCommand,
)

if TYPE_CHECKING:
    from reasonix_core.acp.approver import AcpApprover
    from reasonix_core.session.core import Session

#: What a command yields: a line for the user, or an event of the session's.
Output = str | ev.Event


async def run_session_command(
    session: Session, approver: AcpApprover, command: SessionCommand, args: str, *, cost: float
) -> AsyncGenerator[Output, None]:
    if command is COMPACT:
        nothing = session.nothing_to_compact()
        if nothing:  # the terminal app's one line; nothing runs
            yield nothing + "\n"
            return
        async with aclosing(session.compact(args)) as events:
            async for event in events:
                yield event
                if isinstance(event, ev.CompactionFinished) and not event.agent_path:
                    yield _compacted(event)
    elif command is EFFORT:
        yield _effort(session, args)
    elif command is STATUS:
        yield _status(session, cost)
    elif command is PLAN:
        async for out in _plan(session, approver):
            yield out
    elif command is GOAL:
        async for out in _goal(session, args):
            yield out


def _compacted(event: ev.CompactionFinished) -> str:
    if event.failure:
        return f"The history was not folded: {event.failure}\n"
    if event.tokens_after is None:
        return "Nothing to fold: the history is as it was.\n"
    return f"History folded: about {event.tokens_after} tokens now.\n"


def _effort(session: Session, args: str) -> str:
    from acp import RequestError

    from reasonix_core.acp.config_options import EFFORT as EFFORT_OPTION
    from reasonix_core.acp.config_options import efforts, set_config_option

    levels = efforts(session)
    if not args:
        choices = ", ".join(levels) if levels else "not adjustable for this model"
        return f"Reasoning effort: {session.effort} (levels: {choices})\n"
    try:
        set_config_option(session, EFFORT_OPTION, args)
    except RequestError:
        choices = ", ".join(levels) if levels else "none for this model"
        return f"/effort: unknown level {args!r} (levels: {choices})\n"
    return f"Reasoning effort set to {args}.\n"


def _status(session: Session, cost: float) -> str:
    context = session.agent.context
    mode = "plan" if session.plan_mode.active else session.policy.preset
    return (
        f"session {session.session_id} · {session.workspace}\n"
        f"model {session.model} · effort {session.effort} · mode {mode}\n"
        f"context window {context.window} tokens · cost this process {cost:.4f}\n"
    )


async def _plan(session: Session, approver: AcpApprover) -> AsyncIterator[Output]:
    from reasonix_core.coordinator.plans import PlanVerdict

    saved = session.waiting_plan()
    if saved is None:
        yield "No plan is waiting for approval in this session.\n"
        return
    approver.plan_call_id = ""
    verdict = await approver.approve_plan(saved)
    if verdict is PlanVerdict.APPROVE:
        # Plan mode ends with the approval, as the terminal app's /plan ends it.
        session.set_mode(session.policy.preset, plan=False)
        yield "Plan approved; executing it.\n"
        async with aclosing(session.approve_plan()) as events:
            async for event in events:
                yield event
    elif verdict is PlanVerdict.REJECT:
        session.reject_plan()
        yield "Plan rejected; nothing was executed.\n"
    else:
        yield "The plan is still waiting; /plan shows it again.\n"


async def _goal(session: Session, args: str) -> AsyncIterator[Output]:
    from reasonix_core.goal.state import GoalError

    words = args.strip()
    if not words:
        yield GOAL_USAGE + "\n"
        return
    action = words if words in GOAL_WORDS else "start"
    try:
        goal = session.change_goal(action, words)
    except GoalError as exc:
        yield f"/goal {action}: {exc}\n"
        return
    if action in ("start", "resume") and goal is not None:
        yield f"Goal {'started' if action == 'start' else 'resumed'}: {goal.objective}\n"
        driver = session.goal_driver()
        objective = words if action == "start" else ""
        async with aclosing(session.drive_goal(driver, objective)) as events:
            async for event in events:
                yield event
                if isinstance(event, ev.GoalRound) and not event.agent_path:
                    yield f"\nGoal round {event.round}: {event.status}.\n"
    elif goal is None:
        yield "Goal cleared.\n" if action == "clear" else "No goal in this session.\n"
    elif action == "pause":
        yield "Goal paused: no new round starts (/goal resume).\n"
    else:
        yield goal.describe() + "\n"
