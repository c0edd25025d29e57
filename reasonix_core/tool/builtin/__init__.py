"""Built-in tools, listed once in :data:`BUILTIN_TOOLS`.

Importing this package imports no tool module: the list holds each tool's spec
(:mod:`.specs`: name, description, schema, family), and a tool's code is imported by
its first call. Importing a tool module registers nothing. The tuple's order IS the
provider-visible tool order. Keep it stable (changing it invalidates the prompt-cache
prefix).
"""

from __future__ import annotations

from reasonix_core.tool.builtin.specs import (
    ASK,
    BASH,
    BASH_OUTPUT,
    CREATE_GOAL,
    DELETE_RANGE,
    DELETE_SYMBOL,
    EDIT_FILE,
    EXIT_PLAN_MODE,
    FLEET,
    FORGET,
    GET_GOAL,
    GLOB,
    GREP,
    HISTORY,
    KILL_SHELL,
    LS,
    MEMORY,
    MOVE_FILE,
    MULTI_EDIT,
    NOTEBOOK_EDIT,
    READ_FILE,
    READ_ONLY_TASK,
    REMEMBER,
    RUN_SKILL,
    TASK,
    TODO_WRITE,
    UPDATE_GOAL,
    WEB_FETCH,
    WRITE_FILE,
    ToolSpec,
)

__all__ = ["BUILTIN_TOOLS"]

BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    # File tools (read/write/search); see docs/TOOL_CONTRACT.md.
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    MULTI_EDIT,
    MOVE_FILE,
    LS,
    GLOB,
    GREP,
    # Process and session tools.
    BASH,
    BASH_OUTPUT,
    KILL_SHELL,
    TODO_WRITE,
    WEB_FETCH,
    ASK,
    # History and memory tools (docs/MEMORY.md).
    HISTORY,
    MEMORY,
    REMEMBER,
    FORGET,
    # Skills (docs/SKILLS.md): registered only when the session has skills to offer.
    RUN_SKILL,
    # Delegation (docs/SUBAGENTS.md): a session hands these to its subagent runner.
    TASK,
    READ_ONLY_TASK,
    FLEET,
    # Structured deletions and notebook cells (docs/TOOL_CONTRACT.md): appended, so
    # adding them left every earlier tool schema's bytes where they were.
    DELETE_RANGE,
    DELETE_SYMBOL,
    NOTEBOOK_EDIT,
    # Plan mode (docs/MODES.md#plan-mode): present a plan for the user's approval.
    EXIT_PLAN_MODE,
    # Goal mode (docs/MODES.md#goal-mode).
    CREATE_GOAL,
    GET_GOAL,
    UPDATE_GOAL,
)
