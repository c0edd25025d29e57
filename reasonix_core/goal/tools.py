"""``create_goal``, ``get_goal``, ``update_goal``: the model's view of the session's goal.

They change session records only (never the workspace), through the session's
:class:`~reasonix_core.goal.state.GoalBook` in ``ToolContext.goals``; a subagent
has none, so they refuse there.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.goal.state import GoalAction, GoalBook, GoalError
from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import CREATE_GOAL, GET_GOAL, UPDATE_GOAL, SpecifiedTool

MAX_OBJECTIVE_CHARS = 8_000


def _book(ctx: ToolContext, name: str) -> GoalBook | ToolResult:
    book = ctx.goals
    if book is None:
        return ToolResult.error(f"{name}: only the user's session has a goal")
    return book


class _Create(BaseModel):
    model_config = ARGS_CONFIG

    objective: str = Field(min_length=1, max_length=MAX_OBJECTIVE_CHARS)


class _Update(BaseModel):
    model_config = ARGS_CONFIG

    id: str
    revision: int
    action: GoalAction
    objective: str = Field(default="", max_length=MAX_OBJECTIVE_CHARS)
    note: str = Field(default="", max_length=2_000)


class CreateGoalTool(SpecifiedTool, spec=CREATE_GOAL):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        book = _book(ctx, self.name)
        if isinstance(book, ToolResult):
            return book
        parsed: _Create = validate_args(_Create, args)
        try:
            goal = book.create(parsed.objective)
        except GoalError as exc:
            return ToolResult.error(f"create_goal: {exc}")
        return ToolResult(text=f"Created {goal.describe()}")


class GetGoalTool(SpecifiedTool, spec=GET_GOAL):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        book = _book(ctx, self.name)
        if isinstance(book, ToolResult):
            return book
        goal = book.current()
        return ToolResult(text=goal.describe() if goal is not None else "No goal in this session.")


class UpdateGoalTool(SpecifiedTool, spec=UPDATE_GOAL):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        book = _book(ctx, self.name)
        if isinstance(book, ToolResult):
            return book
        parsed: _Update = validate_args(_Update, args)
        try:
            goal = book.update(
                parsed.id, parsed.revision, parsed.action, parsed.objective, parsed.note
            )
        except GoalError as exc:
            return ToolResult.error(f"update_goal: {exc}")
        return ToolResult(text=f"Updated {goal.describe()}")
