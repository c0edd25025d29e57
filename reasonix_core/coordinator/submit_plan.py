"""``submit_plan``: the planner's only delivery channel (seed 000 §3.5).

The tool hands the plan to the coordinator through a callback and tells the
model to stop; whatever the planner writes as prose is never a plan.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import SUBMIT_PLAN, SpecifiedTool

# A plan is read by a person and sent to the executor: bounded like a tool result.
MAX_PLAN_CHARS = 32_000


class _Args(BaseModel):
    model_config = ARGS_CONFIG

    plan: str = Field(min_length=1, max_length=MAX_PLAN_CHARS)


class SubmitPlanTool(SpecifiedTool, spec=SUBMIT_PLAN):
    def __init__(self, on_plan: Callable[[str], None] | None = None) -> None:
        self.on_plan = on_plan

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self.on_plan is None:
            return ToolResult.error("submit_plan: only the planner delivers plans")
        parsed: _Args = validate_args(_Args, args)
        if not parsed.plan.strip():
            return ToolResult.error("submit_plan: the plan is empty")
        self.on_plan(parsed.plan.strip())
        return ToolResult(text="Plan received. Make no more tool calls; answer with one line.")
