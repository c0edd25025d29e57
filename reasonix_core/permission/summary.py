"""One-line, human-readable summaries of tool calls for approval dialogs."""

from __future__ import annotations

import unicodedata
from typing import Any

_VERBS = {"write_file": "Write", "edit_file": "Edit", "multi_edit": "Edit"}


def visible(text: str) -> str:
    """``text`` with every character a terminal would not show as itself escaped
    (``\\x1b``, ``\\u202e``...): control characters other than newline and tab,
    format characters (bidi overrides, zero-width) and lone surrogates (which no
    terminal encoding can write). An approval must show the
    command that runs, not one an escape sequence or a right-to-left override
    draws over it."""
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def summarize_call(tool: str, args: dict[str, Any]) -> str:
    """ "Run: pytest -q", "Edit src/app.py", "Move a.py → b.py", or the tool name,
    with invisible characters made visible (:func:`visible`)."""
    return visible(_summary(tool, args))


def _summary(tool: str, args: dict[str, Any]) -> str:
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
