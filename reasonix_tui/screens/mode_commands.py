# pyright: reportGeneralTypeIssues=false
# (until the mixins stop annotating self as SessionScreen, issue 24 item 6)
"""``/plan`` and ``/goal`` for the session screen (a mixin over SessionScreen).

The plan waiting for approval and the goal live in the session (the core's
records, docs/MODES.md); the services read and change them. A goal's rounds
are driven by the core's goal driver as one stream in the turn worker: Esc
cancels it and disarms the goal (``/goal resume`` drives it again).
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING

from reasonix_tui import format as fmt

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from reasonix_core.coordinator.plans import PlanVerdict
    from reasonix_core.events import Event
    from reasonix_tui.screens.session import SessionScreen
    from reasonix_tui.services import GoalView

GOAL_USAGE = "Usage: /goal <objective> | status | pause | resume | clear"
GOAL_WORDS = ("status", "pause", "resume", "clear")


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


class ModeCommands:
    async def cmd_plan(self: SessionScreen, args: str) -> None:
        try:
            saved = await self.services.pending_plan(self.runner)
        except Exception as exc:  # the session could not start: say why
            await self.notice(f"/plan: {exc}", "error")
            return
        if saved is None:
            await self.notice("No plan is waiting for approval in this session.")
            return
        from reasonix_tui.screens.plan_approval import PlanApprovalScreen

        runner = self.runner

        async def answered(verdict: PlanVerdict | None) -> None:
            from reasonix_core.coordinator.plans import PlanVerdict

            if runner is not self.runner:  # /new or /resume meanwhile
                return
            if verdict is PlanVerdict.APPROVE:
                await self.notice("Plan approved; executing it.")
                self.run_events(self.services.execute_plan(runner))
            elif verdict is PlanVerdict.REJECT:
                await self.services.reject_plan(runner)
                await self.notice("Plan rejected; nothing was executed.")
            else:
                await self.notice("The plan is still waiting; /plan shows it again.")

        self.app.push_screen(
            PlanApprovalScreen(saved.plan, title="Plan waiting for approval"), answered
        )

    async def cmd_goal(self: SessionScreen, args: str) -> None:
        words = args.strip()
        if not words:
            await self.notice(GOAL_USAGE, "warning")
            return
        action = words if words in GOAL_WORDS else "start"
        try:
            goal = await self.services.goal(self.runner, action, words)
        except ValueError as exc:
            await self.notice(f"/goal {action}: {exc}", "warning")
            return
        self.show_goal(goal)
        if action == "start":
            await self.notice(f"Goal started; rounds run until it is complete. {GOAL_HINT}")
            self.run_events(self._goal_rounds(words))
        elif action == "resume" and goal is not None:
            await self.notice(f"Goal resumed. {GOAL_HINT}")
            self.run_events(self._goal_rounds())
        elif goal is None:
            text = "Goal cleared." if action == "clear" else "No goal in this session."
            await self.notice(text)
        elif action == "pause":
            await self.notice("Goal paused: no new round starts (/goal resume).")
        else:
            await self.notice(goal_line(goal))

    def show_goal(self: SessionScreen, goal: GoalView | None) -> None:
        self.status.update_state(goal=goal)

    async def _goal_rounds(self: SessionScreen, objective: str = "") -> AsyncIterator[Event]:
        """The driver's rounds, then the goal as it ended (armed or not) in the bar."""
        runner = self.runner
        async with aclosing(self.services.drive_goal(runner, objective)) as events:
            async for event in events:
                yield event
        if runner is self.runner:
            try:
                self.show_goal(await self.services.goal(runner, "status"))
            except ValueError:
                pass


GOAL_HINT = "/goal pause stops between rounds; Esc stops now."
