"""What the model is told about each built-in tool, in provider-visible order.

One :class:`ToolSpec` per tool: name, description, argument schema, read-only flag,
family and where its code lives; their order is ``BUILTIN_TOOLS`` in
:mod:`reasonix_core.tool.builtin`. The registry builds the first request's tool list
from these alone; a tool's module (its argument model, its helpers) is imported by its
first call (:class:`reasonix_core.tool.registry.LazyTool`), so a run does not pay for
the tools it never calls. Each tool class reads its own entry from here: this package is the
one place a tool's prompt-visible text is written, and changing it changes the
prompt-cache prefix.

The specs are written by concept in the modules below (files, process, session,
memory, delegation, modes; :mod:`.base` holds :class:`ToolSpec`); this package
gathers them, so ``from reasonix_core.tool.builtin.specs import GREP`` is the one
way to reach any of them.
"""

from __future__ import annotations

from reasonix_core.tool.builtin.specs.base import (
    SpecifiedTool,
    ToolSpec,
)
from reasonix_core.tool.builtin.specs.delegation import (
    COMPLETE_SUBTASK,
    COMPLETION_STATUSES,
    EVIDENCE_KINDS,
    FLEET,
    READ_ONLY_TASK,
    SUBMIT_PLAN,
    TASK,
)
from reasonix_core.tool.builtin.specs.files import (
    DELETE_RANGE,
    DELETE_SYMBOL,
    EDIT_FILE,
    GLOB,
    GREP,
    LS,
    MAX_EDITS,
    MAX_ENTRIES,
    MAX_LINE_CHARS,
    MAX_MATCHES,
    MAX_OUTPUT_BYTES,
    MAX_RESULTS,
    MOVE_FILE,
    MULTI_EDIT,
    NOTEBOOK_EDIT,
    READ_FILE,
    WRITE_FILE,
)
from reasonix_core.tool.builtin.specs.memory import (
    FORGET,
    HISTORY,
    HISTORY_MAX_LIMIT,
    MAX_CONTENT,
    MAX_KEYWORDS,
    MAX_TITLE,
    MEMORY,
    MEMORY_MAX_LIMIT,
    REMEMBER,
)
from reasonix_core.tool.builtin.specs.modes import (
    CREATE_GOAL,
    EXIT_PLAN_MODE,
    GET_GOAL,
    UPDATE_GOAL,
)
from reasonix_core.tool.builtin.specs.process import (
    BASH,
    BASH_OUTPUT,
    JOB_ID_SCHEMA,
    KILL_SHELL,
    MAX_TIMEOUT_SECONDS,
)
from reasonix_core.tool.builtin.specs.session import (
    ASK,
    MAX_TODOS,
    RUN_SKILL,
    STATUSES,
    TODO_WRITE,
    WEB_FETCH,
)

__all__ = [
    "ASK",
    "BASH",
    "BASH_OUTPUT",
    "COMPLETE_SUBTASK",
    "COMPLETION_STATUSES",
    "CREATE_GOAL",
    "DELETE_RANGE",
    "DELETE_SYMBOL",
    "EDIT_FILE",
    "EVIDENCE_KINDS",
    "EXIT_PLAN_MODE",
    "FLEET",
    "FORGET",
    "GET_GOAL",
    "GLOB",
    "GREP",
    "HISTORY",
    "HISTORY_MAX_LIMIT",
    "JOB_ID_SCHEMA",
    "KILL_SHELL",
    "LS",
    "MAX_CONTENT",
    "MAX_EDITS",
    "MAX_ENTRIES",
    "MAX_KEYWORDS",
    "MAX_LINE_CHARS",
    "MAX_MATCHES",
    "MAX_OUTPUT_BYTES",
    "MAX_RESULTS",
    "MAX_TIMEOUT_SECONDS",
    "MAX_TITLE",
    "MAX_TODOS",
    "MEMORY",
    "MEMORY_MAX_LIMIT",
    "MOVE_FILE",
    "MULTI_EDIT",
    "NOTEBOOK_EDIT",
    "READ_FILE",
    "READ_ONLY_TASK",
    "REMEMBER",
    "RUN_SKILL",
    "STATUSES",
    "SUBMIT_PLAN",
    "TASK",
    "TODO_WRITE",
    "UPDATE_GOAL",
    "WEB_FETCH",
    "WRITE_FILE",
    "SpecifiedTool",
    "ToolSpec",
]
