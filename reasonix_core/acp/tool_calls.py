"""How a tool call looks to an ACP client: a human title, a kind, the paths it
touches (a leaf: no ``acp`` import, so the mapping is testable alone)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasonix_core.jsontext import loads_bounded

# ACP's ToolKind for each built-in tool; anything else (MCP tools, skills) is "other".
_KINDS: dict[str, str] = {
    "read_file": "read",
    "ls": "read",
    "glob": "search",
    "grep": "search",
    "history": "search",
    "memory": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "multi_edit": "edit",
    "notebook_edit": "edit",
    "delete_range": "edit",
    "delete_symbol": "edit",
    "move_file": "move",
    "bash": "execute",
    "bash_output": "execute",
    "kill_shell": "execute",
    "web_fetch": "fetch",
    "todo_write": "think",
    "exit_plan_mode": "think",
    "submit_plan": "think",
    "ask": "think",
}
#: The tools whose file a diff is shown for (old text before, new text after).
EDIT_TOOLS = frozenset(
    {"write_file", "edit_file", "multi_edit", "notebook_edit", "delete_range", "delete_symbol"}
)


@dataclass(frozen=True, slots=True)
class ToolView:
    title: str
    kind: str
    paths: tuple[Path, ...]
    raw_input: Any


def parse_arguments(arguments: str) -> Any:
    """The call's arguments as JSON (the raw string when they do not parse)."""
    try:
        # Bounded: a model's 100,000 nested brackets failed the turn (and every
        # later session/load of it) with a RecursionError.
        return loads_bounded(arguments) if arguments else {}
    except ValueError:
        return arguments


def tool_view(name: str, arguments: str, workspace: Path) -> ToolView:
    args = parse_arguments(arguments)
    fields: dict[str, Any] = args if isinstance(args, dict) else {}
    kind = _KINDS.get(name, "other")
    paths = tuple(
        _absolute(workspace, value)
        for key in ("path", "source_path", "destination_path")
        if isinstance(value := fields.get(key), str) and value
    )
    return ToolView(_title(name, fields, paths, workspace), kind, paths, args)


def _absolute(workspace: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else workspace / path


def _title(name: str, fields: dict[str, Any], paths: tuple[Path, ...], workspace: Path) -> str:
    shown = [_relative(p, workspace) for p in paths]
    if name == "bash" and isinstance(command := fields.get("command"), str):
        return f"Run: {_short(command)}"
    if name in ("grep", "glob") and isinstance(pattern := fields.get("pattern"), str):
        where = f" in {shown[0]}" if shown else ""
        return f"Search {_short(pattern, 60)}{where}"
    if name == "web_fetch" and isinstance(url := fields.get("url"), str):
        return f"Fetch {_short(url)}"
    if name == "move_file" and len(shown) == 2:
        return f"Move {shown[0]} to {shown[1]}"
    verb = {
        "read_file": "Read",
        "ls": "List",
        "write_file": "Write",
        "todo_write": "Update the plan",
    }.get(name, "Edit" if name in EDIT_TOOLS else name)
    return f"{verb} {shown[0]}" if shown else verb


def _relative(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
