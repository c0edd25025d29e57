"""``/plan`` and ``/goal`` over the core: what :class:`~reasonix_tui.engine.EngineServices`
answers for a session's runtime (docs/MODES.md). The pending plan, its approval and
the goal are the core's (``coordinator/plans.py``, ``goal/``); nothing is kept
here. No Textual import."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

from reasonix_core import events as ev
from reasonix_core.agent.builder import Runtime
from reasonix_core.coordinator.coordinator import run_pending_plan
from reasonix_core.coordinator.plans import PlanVerdict, SavedPlan, pending_plan, settle_plan
from reasonix_core.goal.driver import GoalBounds, GoalDriver
from reasonix_core.goal.state import Goal, GoalAction, GoalBook, GoalError, GoalStatus
from reasonix_tui.services import GoalView

GOAL_ACTIONS = ("start", "status", "pause", "resume", "clear")


def waiting_plan(runtime: Runtime) -> SavedPlan | None:
    return pending_plan(runtime.agent.session.path)


async def execute_plan(runtime: Runtime) -> AsyncIterator[ev.Event]:
    """The executor's turn over the pending plan: the same path as ``reasonix run -c
    --approve-plan`` (the approval is the user's answer in the dialog)."""
    if waiting_plan(runtime) is None:
        yield ev.Notice(level="warning", text="No plan is waiting for approval.")
        return
    async with aclosing(run_pending_plan(runtime.agent)) as events:
        async for event in events:
            yield event


def discard_plan(runtime: Runtime) -> None:
    saved = waiting_plan(runtime)
    if saved is not None:
        settle_plan(runtime.agent.session, saved.id, PlanVerdict.REJECT)


def goal_view(book: GoalBook, goal: Goal | None = None) -> GoalView | None:
    goal = goal or book.current()
    if goal is None:
        return None
    return GoalView(
        objective=goal.objective,
        status=goal.status.value,
        rounds=goal.rounds,
        tokens=goal.tokens,
        cost=goal.cost,
        armed=book.armed,
    )


def change_goal(runtime: Runtime, action: str, objective: str = "") -> GoalView | None:
    """``/goal ACTION``; GoalError (a ValueError) with the reason when it cannot apply."""
    book: GoalBook = runtime.goals
    if action == "start":
        return goal_view(book, book.create(objective))  # creating arms it
    goal = book.current()
    if action == "status" or goal is None:
        return goal_view(book, goal)
    if action == "clear":
        book.clear()  # disarms it too
        return None
    if action == "pause":
        return goal_view(book, book.update(goal.id, goal.revision, GoalAction.PAUSE))
    if action == "resume":
        if goal.status is GoalStatus.PAUSED:
            goal = book.update(goal.id, goal.revision, GoalAction.RESUME)
        elif goal.status is not GoalStatus.ACTIVE:
            raise GoalError(f"{goal.describe()} is settled; nothing to resume")
        book.armed = True
        return goal_view(book, goal)
    raise GoalError(f"unknown goal action {action!r}; one of {', '.join(GOAL_ACTIONS)}")


async def drive_goal(runtime: Runtime, objective: str = "") -> AsyncIterator[ev.Event]:
    """The core's goal driver over the session's runner, bounded by ``[agent]
    max_goal_rounds`` / ``goal_token_budget``. Cancelling it (Esc) disarms the goal:
    it stays active, and ``/goal resume`` drives it again."""
    agent = runtime.config.agent
    bounds = GoalBounds(max_rounds=agent.max_goal_rounds, token_budget=agent.goal_token_budget)
    driver = GoalDriver(runtime.goals, bounds)
    try:
        async with aclosing(driver.drive(runtime.runner, objective)) as events:
            async for event in events:
                yield event
    finally:
        if driver.stop is None:  # cancelled mid-round
            runtime.goals.armed = False
    if driver.stop is not None:
        yield ev.Notice(level="info", text=_STOP_TEXT.get(driver.stop.value, driver.stop.value))


_STOP_TEXT = {
    "complete": "The goal is complete.",
    "blocked": "The goal is blocked (the model says it cannot go on).",
    "bound": "The goal reached its round or token bound; /goal resume drives it again.",
    "stopped": "The goal is paused or cleared; nothing more is driven.",
    "failed": "A goal round failed; the goal stays active (/goal resume).",
}
