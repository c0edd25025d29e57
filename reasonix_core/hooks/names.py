"""Claude Code's tool names and argument keys beside ours (the one owner of the map).

A hook written for Claude Code reads ``tool_name == "Bash"`` and
``.tool_input.file_path``; ours are ``bash`` and ``path``. Hooks get Claude's
spelling wherever one of our tools has an equivalent, and ours otherwise; a
matcher may use either (:func:`matcher_names`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "capability_target",
    "claude_name",
    "claude_tool_input",
    "hook_tool",
    "matcher_names",
    "our_name",
    "our_tool_input",
]

#: Ours -> Claude Code's, for the tools that have an equivalent.
CLAUDE_NAMES: dict[str, str] = {
    "bash": "Bash",
    "bash_output": "BashOutput",
    "kill_shell": "KillShell",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "multi_edit": "MultiEdit",
    "glob": "Glob",
    "grep": "Grep",
    "ls": "LS",
    "web_fetch": "WebFetch",
    "task": "Task",
    "todo_write": "TodoWrite",
    "notebook_edit": "NotebookEdit",
    "exit_plan_mode": "ExitPlanMode",
}
_OURS: dict[str, str] = {claude: ours for ours, claude in CLAUDE_NAMES.items()}

#: Per tool, our argument key -> Claude Code's.
_KEYS: dict[str, dict[str, str]] = {
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path"},
    "edit_file": {"path": "file_path"},
    "multi_edit": {"path": "file_path"},
    "delete_range": {"path": "file_path"},
    "delete_symbol": {"path": "file_path"},
    "notebook_edit": {"path": "notebook_path", "source": "new_source", "operation": "edit_mode"},
    "task": {"profile": "subagent_type"},
    "todo_write": {},
}


def claude_name(tool: str) -> str:
    """The name a hook sees: Claude Code's where one exists, else ours."""
    return CLAUDE_NAMES.get(tool, tool)


def our_name(name: str) -> str:
    """Our tool for a Claude Code name (unknown names are returned as given)."""
    return _OURS.get(name, name)


def matcher_names(tool: str) -> tuple[str, ...]:
    """Every spelling a matcher may use for ``tool``: Claude's and ours."""
    claude = claude_name(tool)
    return (claude, tool) if claude != tool else (tool,)


def claude_tool_input(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` with Claude Code's keys (``file_path``, ``command``, ``timeout`` in ms)."""
    keys = _KEYS.get(tool, {})
    out: dict[str, Any] = {}
    for key, value in args.items():
        if tool == "bash" and key == "timeout_seconds" and isinstance(value, int | float):
            out["timeout"] = int(value * 1000)
            continue
        out[keys.get(key, key)] = value
    if tool == "bash" and "command" in out:
        out.setdefault("description", "")
    return out


def capability_target(tool: str, args: Mapping[str, Any]) -> str | None:
    """The MCP tool (``mcp__server__tool``) a ``use_capability`` call runs, or None."""
    target = args.get("name")
    if tool == "use_capability" and args.get("action") == "call" and isinstance(target, str):
        if target.startswith("mcp__"):
            return target
    return None


def our_tool_input(
    tool: str, args: Mapping[str, Any], updated: Mapping[str, Any]
) -> dict[str, Any]:
    """A hook's ``updatedInput`` for a call of ``tool`` (made with ``args``) in our
    keys: the inverse of :func:`hook_tool`'s ``tool_input``. Nothing is checked
    here: the result goes through the tool's validation and the permission check
    as the model's own arguments would."""
    if capability_target(tool, args) is not None:
        return {**args, "arguments": dict(updated)}
    ours = {claude: key for key, claude in _KEYS.get(tool, {}).items()}
    out: dict[str, Any] = {}
    for key, value in updated.items():
        if tool == "bash" and key == "timeout" and "timeout" not in args:
            out["timeout_seconds"] = value / 1000 if isinstance(value, int | float) else value
        elif tool == "bash" and key == "description" and key not in args:
            continue  # Claude Code's, added by claude_tool_input
        else:
            out[ours.get(key, key)] = value
    return out


def hook_tool(tool: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any], tuple[str, ...]]:
    """What a hook sees of one call: ``(tool_name, tool_input, matcher names)``.

    An MCP tool called through ``use_capability`` is shown as Claude Code shows it,
    ``mcp__server__tool`` with its own arguments, so ``mcp__github__.*`` matches."""
    target = capability_target(tool, args)
    if target is not None:
        inner = args.get("arguments")
        tool_input: dict[str, Any] = dict(inner) if isinstance(inner, Mapping) else {}  # type: ignore[arg-type]
        return target, tool_input, (target, tool)
    return claude_name(tool), claude_tool_input(tool, args), matcher_names(tool)
