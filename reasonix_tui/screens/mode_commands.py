"""``/plan`` and ``/goal``: handlers of the session screen's built-in commands.

The plan waiting for approval and the goal live in the session (the core's
records, docs/MODES.md); the services read and change them. A goal's rounds
are driven by the core's goal driver as one stream in the turn worker: Esc
cancels it and disarms the goal (``/goal resume`` drives it again).
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING

from reasonix_core.command.builtin import GOAL_USAGE, GOAL_WORDS
from reasonix_tui import format as fmt

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from reasonix_core.coordinator.plans import PlanVerdict
    from reasonix_core.events import Event
    from reasonix_tui.screens.session_host import SessionHost
    from reasonix_tui.services import GoalView


def goal_line(goal: GoalView) -> str:
    """``/goal status``: objective, state, rounds, tokens and cost."""
    state = goal.status + (" · armed" if goal.armed and goal.status == "active" else "")
    if goal.status == "active" and not goal.armed:
        state += " · not driven (/goal resume)"
    return (
        f"Goal: {goal.objective}\n{state} · {goal.rounds} round"
        f"{'' if goal.rounds == 1 else 's'} · {fmt.tokens(goal.tokens)} tokens · "
        f"{fmt.cost(goal.cost)}"
    )


async def review_plan(screen: SessionHost, args: str) -> None:
    try:
        saved = await screen.runner.pending_plan()
    except Exception as exc:  # the session could not start: say why
        await screen.notice(f"/plan: {exc}", "error")
        return
    if saved is None:
        await screen.notice("No plan is waiting for approval in this session.")
        return
    from reasonix_tui.screens.plan_approval import PlanApprovalScreen

    runner = screen.runner

    async def answered(verdict: PlanVerdict | None) -> None:
        from reasonix_core.coordinator.plans import PlanVerdict

        if runner is not screen.runner:  # /new or /resume meanwhile
            return
        if verdict is PlanVerdict.APPROVE:
            # The execution's PlanReady("approved") is the one notice of the approval.
            screen.run_events(runner.execute_plan())
        elif verdict is PlanVerdict.REJECT:
            await runner.reject_plan()
            await screen.notice("Plan rejected; nothing was executed.")
        else:
            await screen.notice("The plan is still waiting; /plan shows it again.")

    screen.app.push_screen(
        PlanApprovalScreen(saved.plan, title="Plan waiting for approval"), answered
    )


async def goal_command(screen: SessionHost, args: str) -> None:
    words = args.strip()
    if not words:
        await screen.notice(GOAL_USAGE, "warning")
        return
    action = words if words in GOAL_WORDS else "start"
    try:
        goal = await screen.runner.goal(action, words)
    except ValueError as exc:
        await screen.notice(f"/goal {action}: {exc}", "warning")
        return
    show_goal(screen, goal)
    if action == "start":
        from reasonix_tui.widgets.blocks import UserBlock

        # The objective is the user's words (the rounds' goal block is the host's).
        await screen.transcript.add(UserBlock(words))
        await screen.notice(f"Goal started; rounds run until it is complete. {GOAL_HINT}")
        screen.run_events(goal_rounds(screen, words))
    elif action == "resume" and goal is not None:
        await screen.notice(f"Goal resumed. {GOAL_HINT}")
        screen.run_events(goal_rounds(screen))
    elif goal is None:
        text = "Goal cleared." if action == "clear" else "No goal in this session."
        await screen.notice(text)
    elif action == "pause":
        await screen.notice("Goal paused: no new round starts (/goal resume).")
    else:
        await screen.notice(goal_line(goal))


def show_goal(screen: SessionHost, goal: GoalView | None) -> None:
    screen.status.update_state(goal=goal)


async def goal_rounds(screen: SessionHost, objective: str = "") -> AsyncIterator[Event]:
    """The driver's rounds, then the goal as it ended (armed or not) in the bar."""
    from reasonix_core.events import TurnStarted, UsageReported

    runner = screen.runner
    async with aclosing(runner.drive_goal(objective)) as events:
        async for event in events:
            yield event
            if isinstance(event, TurnStarted | UsageReported) and runner is screen.runner:
                # The running round counts, as update_goal and /goal status count it.
                try:
                    show_goal(screen, await runner.goal("status"))
                except ValueError:
                    pass
    if runner is screen.runner:
        try:
            show_goal(screen, await runner.goal("status"))
        except ValueError:
            pass


GOAL_HINT = "/goal pause stops between rounds; Esc stops now."
