"""What several tool tests share: the file tools' names and a sandboxed bash call."""

from __future__ import annotations

from pathlib import Path

from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.bash import BashTool
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.sandbox import SandboxPolicy

# The file tools, in the provider-visible order (the head of the built-in list,
# part of the cached prompt prefix).
FILE_TOOLS = [
    "read_file",
    "write_file",
    "edit_file",
    "multi_edit",
    "move_file",
    "ls",
    "glob",
    "grep",
]


def sandbox_ctx(ws: Path, tmp: Path, **policy: object) -> ToolContext:
    """A tool context whose bash runs under a SandboxPolicy for ``ws`` (``policy`` overrides)."""
    sandbox = SandboxPolicy(workspace=ws, temp_dir=tmp, **policy)  # type: ignore[arg-type]
    return ToolContext(
        env=SessionEnv(workspace=ws, temp_dir=tmp, bash_timeout_seconds=30, sandbox=sandbox)
    )


async def run_bash(ctx: ToolContext, command: str, **args: object) -> ToolResult:
    """One ``bash`` tool call (``args``: its other parameters, e.g. ``timeout_seconds``)."""
    return await BashTool().execute({"command": command, **args}, ctx)
