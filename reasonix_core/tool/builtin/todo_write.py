"""``todo_write``: the model's structured task list, replaced whole on each call.

The list lives in ``ToolContext.todos`` as a tuple of :class:`Todo`
so the UI can show it; it touches no files.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import MAX_TODOS, SpecifiedTool
from reasonix_core.tool.builtin.specs import TODO_WRITE as SPEC
from reasonix_core.tool.todos import Todo, TodoStatus

MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoArg(BaseModel):
    model_config = ARGS_CONFIG

    content: str = Field(min_length=1)
    status: TodoStatus
    active_form: str | None = Field(
        default=None, validation_alias=AliasChoices("active_form", "activeForm")
    )


class TodoWriteArgs(BaseModel):
    model_config = ARGS_CONFIG

    todos: list[TodoArg] = Field(max_length=MAX_TODOS)


def render_todos(todos: tuple[Todo, ...]) -> str:
    if not todos:
        return "Todo list cleared."
    done = sum(1 for t in todos if t.status == "completed")
    lines = [f"Todos ({done}/{len(todos)} completed):"]
    for todo in todos:
        text = todo.active_form if todo.status == "in_progress" else todo.content
        lines.append(f"{MARKS[todo.status]} {text}")
    return "\n".join(lines)


class TodoWriteTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed: TodoWriteArgs = validate_args(TodoWriteArgs, args)
        in_progress = [t.content for t in parsed.todos if t.status == "in_progress"]
        if len(in_progress) > 1:
            return ToolResult.error(
                f"todo_write: {len(in_progress)} items are in_progress "
                f"({'; '.join(in_progress)}); at most one may be in_progress at a time. "
                "Mark the others pending or completed and send the list again."
            )
        todos = tuple(
            Todo(content=t.content, status=t.status, active_form=t.active_form or t.content)
            for t in parsed.todos
        )
        ctx.todos = todos
        return ToolResult(
            text=render_todos(todos),
            meta={
                "todos": [
                    {"content": t.content, "status": t.status, "active_form": t.active_form}
                    for t in todos
                ]
            },
        )
