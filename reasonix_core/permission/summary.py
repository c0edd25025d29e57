"""One-line, human-readable summaries of tool calls for approval dialogs."""

from __future__ import annotations

from typing import Any

_VERBS = {"write_file": "Write", "edit_file": "Edit", "multi_edit": "Edit"}


def summarize_call(tool: str, args: dict[str, Any]) -> str:
    """ "Run: pytest -q", "Edit src/app.py", "Move a.py → b.py", or the tool name."""
    if tool == "bash" and isinstance(args.get("command"), str):
        suffix = " (in the background)" if args.get("run_in_background") else ""
        return f"Run: {args['command']}{suffix}"
    if tool in _VERBS and isinstance(args.get("path"), str):
        return f"{_VERBS[tool]} {args['path']}"
    if tool == "move_file":
        return f"Move {args.get('source_path', '?')} → {args.get('destination_path', '?')}"
    if tool == "web_fetch" and isinstance(args.get("url"), str):
        return f"Fetch {args['url']}"
    return tool
