"""Plan mode: the executor drafts a plan with read-only tools; nothing changes
until the user approves it (docs/MODES.md#plan-mode).

Only the user turns plan mode on (Shift+Tab in the TUI, ``--permission-mode
plan``). While it is on, the policy denies every writer before grants, allow
rules and presets (``Policy.plan_mode``). ``exit_plan_mode(plan)`` is the model's
only way out, and it asks the host's plan-approval boundary - the TUI's dialog,
never the permission approver, so no preset or rule answers it. Without a host
(headless) the plan is saved in the session for ``reasonix run -c
--approve-plan`` and plan mode stays on. An approval turns plan mode off for the
rest of the session and grants nothing: later calls meet the ordinary preset.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.agent.session import SessionStore
from reasonix_core.coordinator.coordinator import ApproveFn
from reasonix_core.coordinator.plans import (
    APPROVED_REQUEST as APPROVED_REQUEST,
)
from reasonix_core.coordinator.plans import (
    PLAN_MODE_ROUTE as PLAN_MODE_ROUTE,
)
from reasonix_core.coordinator.plans import (
    PlanVerdict,
    SavedPlan,
    save_plan,
    settle_plan,
)
from reasonix_core.permission.policy import Policy
from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import EXIT_PLAN_MODE, SpecifiedTool

# Bounded like submit_plan's: a person reads it.
MAX_PLAN_CHARS = 32_000

#: How exit_plan_mode's result begins when the user chose "Keep planning" (a surface
#: tells it apart from a rejection by it: the outcome of both is "denied").
KEEP_PLANNING = "The user wants you to keep planning."
#: How it begins when the user approved the plan.
APPROVED = "The user approved the plan; plan mode is off."


class PlanMode:
    """The top-level session's plan mode: on/off lives in the policy; this owns
    the way out."""

    def __init__(self, policy: Policy, session: SessionStore, approve: ApproveFn | None) -> None:
        self.policy = policy
        self.session = session
        # The host's dialog; None: no one can approve now, so plans are saved.
        self.approve = approve
        # The plan this process saved for later approval (headless prints it).
        self.saved: SavedPlan | None = None

    @property
    def active(self) -> bool:
        return self.policy.plan_mode

    def enter(self) -> None:
        self.policy.plan_mode = True

    def leave(self) -> None:
        """The user's own switch out of plan mode (Shift+Tab), not the model's."""
        self.policy.plan_mode = False

    async def present(self, plan: str) -> ToolResult:
        if not self.active:
            return ToolResult.error(
                "exit_plan_mode: plan mode is off; there is nothing to approve. Carry on."
            )
        saved = SavedPlan(
            id=f"{self.session.id}-plan-mode-{uuid.uuid4().hex[:8]}",
            route=PLAN_MODE_ROUTE,
            plan=plan,
            request=APPROVED_REQUEST,
        )
        save_plan(self.session, saved)
        if self.approve is None:
            self.saved = saved
            return ToolResult(
                text="No user can approve the plan now: it is saved in the session for "
                "approval (reasonix run -c --approve-plan). Plan mode stays on: make no "
                "changes and no more tool calls; end your turn with one line.",
                outcome="denied",
            )
        verdict = await self.approve(saved)
        if verdict is PlanVerdict.APPROVE:
            settle_plan(self.session, saved.id, PlanVerdict.APPROVE)
            self.leave()
            return ToolResult(
                text=f"{APPROVED} Execute the plan now "
                "(each call still follows the ordinary permissions)."
            )
        if verdict is PlanVerdict.REJECT:
            settle_plan(self.session, saved.id, PlanVerdict.REJECT)
            return ToolResult(
                text="The user rejected the plan. Plan mode stays on: make no changes; "
                "ask the user what they want instead.",
                outcome="denied",
            )
        # Keep planning: nothing executes; the plan stays pending, as a kept plan
        # of the Coordinator's does (a later plan is newer and wins).
        settle_plan(self.session, saved.id, PlanVerdict.KEEP)
        return ToolResult(
            text=f"{KEEP_PLANNING} Plan mode stays on: research more "
            "with read-only tools, then call exit_plan_mode with the revised plan.",
            outcome="denied",
        )


class _Args(BaseModel):
    model_config = ARGS_CONFIG

    plan: str = Field(min_length=1, max_length=MAX_PLAN_CHARS)


class ExitPlanModeTool(SpecifiedTool, spec=EXIT_PLAN_MODE):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.plan_mode is None:
            return ToolResult.error(
                "exit_plan_mode: only the user's session is in plan mode; nothing to approve"
            )
        parsed: _Args = validate_args(_Args, args)
        if not parsed.plan.strip():
            return ToolResult.error("exit_plan_mode: the plan is empty")
        return await ctx.plan_mode.present(parsed.plan.strip())
