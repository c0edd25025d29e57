"""Built-in tools, listed once in :data:`BUILTIN_TOOLS`.

Importing a tool module registers nothing: this tuple is the whole list, and
its order IS the provider-visible tool order. Keep it stable (changing it
invalidates the prompt-cache prefix).
"""

from __future__ import annotations

from reasonix_core.tool.base import Tool
from reasonix_core.tool.builtin.ask import AskTool
from reasonix_core.tool.builtin.bash import BashTool
from reasonix_core.tool.builtin.bash_output import BashOutputTool
from reasonix_core.tool.builtin.edit_file import EditFile
from reasonix_core.tool.builtin.forget import ForgetTool
from reasonix_core.tool.builtin.glob import Glob
from reasonix_core.tool.builtin.grep import Grep
from reasonix_core.tool.builtin.history import HistoryTool
from reasonix_core.tool.builtin.kill_shell import KillShellTool
from reasonix_core.tool.builtin.ls import Ls
from reasonix_core.tool.builtin.memory import MemoryTool
from reasonix_core.tool.builtin.move_file import MoveFile
from reasonix_core.tool.builtin.multi_edit import MultiEdit
from reasonix_core.tool.builtin.read_file import ReadFile
from reasonix_core.tool.builtin.remember import RememberTool
from reasonix_core.tool.builtin.todo_write import TodoWriteTool
from reasonix_core.tool.builtin.web_fetch import WebFetchTool
from reasonix_core.tool.builtin.write_file import WriteFile

__all__ = ["BUILTIN_TOOLS"]

BUILTIN_TOOLS: tuple[type[Tool], ...] = (
    # File tools (read/write/search); see docs/TOOL_CONTRACT.md.
    ReadFile,
    WriteFile,
    EditFile,
    MultiEdit,
    MoveFile,
    Ls,
    Glob,
    Grep,
    # Process and session tools.
    BashTool,
    BashOutputTool,
    KillShellTool,
    TodoWriteTool,
    WebFetchTool,
    AskTool,
    # History and memory tools (docs/MEMORY.md).
    HistoryTool,
    MemoryTool,
    RememberTool,
    ForgetTool,
)
