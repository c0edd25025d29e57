"""The model's task list items, kept in ``ToolContext.todos`` and written by
``todo_write``: a module of its own so the context can name the type without
importing a tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TodoStatus = Literal["pending", "in_progress", "completed"]


@dataclass(frozen=True, slots=True)
class Todo:
    content: str
    status: TodoStatus
    active_form: str
