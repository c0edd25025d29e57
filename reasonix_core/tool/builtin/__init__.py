"""Built-in tools. Each module registers itself on import.

The import order below IS the registry order, which is the provider-visible
tool order: keep it stable (changing it invalidates the prompt-cache prefix).
"""

# ruff: noqa: I001  (import order = registry order = provider-visible order)

# File tools (read/write/search); see docs/TOOL_CONTRACT.md.
from reasonix_core.tool.builtin import read_file  # noqa: F401
from reasonix_core.tool.builtin import write_file  # noqa: F401
from reasonix_core.tool.builtin import edit_file  # noqa: F401
from reasonix_core.tool.builtin import multi_edit  # noqa: F401
from reasonix_core.tool.builtin import move_file  # noqa: F401
from reasonix_core.tool.builtin import ls  # noqa: F401
from reasonix_core.tool.builtin import glob  # noqa: F401
from reasonix_core.tool.builtin import grep  # noqa: F401

# --- Process / session tools go here, after the file tools, in this order:
# --- bash, bash_output, kill_shell, todo_write, web_fetch, ask.
from reasonix_core.tool.builtin import bash  # noqa: F401
from reasonix_core.tool.builtin import bash_output  # noqa: F401
from reasonix_core.tool.builtin import kill_shell  # noqa: F401
from reasonix_core.tool.builtin import todo_write  # noqa: F401
from reasonix_core.tool.builtin import web_fetch  # noqa: F401
from reasonix_core.tool.builtin import ask  # noqa: F401

# History and memory tools (docs/MEMORY.md), after ask, in this order.
from reasonix_core.tool.builtin import history  # noqa: F401
from reasonix_core.tool.builtin import memory  # noqa: F401
from reasonix_core.tool.builtin import remember  # noqa: F401
from reasonix_core.tool.builtin import forget  # noqa: F401
