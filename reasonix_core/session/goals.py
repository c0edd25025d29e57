"""The session's goal (docs/MODES.md#goal-mode): change it, and drive it.

The goal is in the session's records (``goal/state.py``); whether it is armed is
this process's. Driving runs the core's :class:`~reasonix_core.goal.driver.GoalDriver`
over the session's runner.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING, cast

from reasonix_core import events as ev
from reasonix_core.goal.driver import GoalBounds, GoalDriver
from reasonix_core.goal.state import Goal, GoalAction, GoalBook, GoalError, GoalStatus

if TYPE_CHECKING:
    from reasonix_core.agent.runner import Runner
    from reasonix_core.config.schema import AgentConfig

GOAL_ACTIONS = ("start", "status", "pause", "resume", "clear")


def goal_bounds(
    agent: AgentConfig, max_rounds: int | None = None, token_budget: int | None = None
) -> GoalBounds:
    """The bounds asked for, else ``[agent] max_goal_rounds`` / ``goal_token_budget``."""
    return GoalBounds(
        max_rounds=max_rounds or agent.max_goal_rounds,
        token_budget=token_budget or agent.goal_token_budget,
    )


def change_goal(book: GoalBook, action: str, objective: str = "") -> Goal | None:
    """``start`` / ``status`` / ``pause`` / ``resume`` / ``clear``; the goal after it.
    GoalError (a ValueError) with the reason when it cannot apply."""
    if action == "start":
        return book.create(objective)  # creating arms it
    goal = book.current()
    if action == "status" or goal is None:
        return goal
    if action == "clear":
        book.clear()  # disarms it too
        return None
    if action == "pause":
        return book.update(goal.id, goal.revision, GoalAction.PAUSE)
    if action == "resume":
        if goal.status is GoalStatus.PAUSED:
            goal = book.update(goal.id, goal.revision, GoalAction.RESUME)
        elif goal.status is not GoalStatus.ACTIVE:
            raise GoalError(f"{goal.describe()} is settled; nothing to resume")
        book.armed = True
        return goal
    raise GoalError(f"unknown goal action {action!r}; one of {', '.join(GOAL_ACTIONS)}")


async def drive_goal(
    runner: Runner, driver: GoalDriver, objective: str = ""
) -> AsyncGenerator[ev.Event, None]:
    """Rounds of the goal until it settles or a bound is reached (``driver.stop``
    says why). Cancelling it disarms the goal: it stays active, and resuming it
    drives it again."""
    try:
        async with aclosing(_closable(driver.drive(runner, objective))) as events:
            async for event in events:
                yield event
    finally:
        if driver.stop is None:  # cancelled mid-round
            driver.book.armed = False


def _closable(events: AsyncIterator[ev.Event]) -> AsyncGenerator[ev.Event, None]:
    """The stream as what it is (an async generator), so it can be closed at once."""
    return cast("AsyncGenerator[ev.Event, None]", events)
