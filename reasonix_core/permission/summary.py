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
    items = args.get("items")
    if tool == "fleet" and isinstance(items, list) and items:
        return f"Start {len(items)} subagent{'s' if len(items) != 1 else ''}"
    return tool


#: The most characters of one line of :func:`detail_lines`, and the most items listed.
DETAIL_CHARS = 160
DETAIL_ITEMS = 50


def detail_lines(tool: str, args: dict[str, Any]) -> list[str] | None:
    """What a call will do beyond its summary, one line each, for a dialog that would
    otherwise list a raw argument: a fleet's items (id, profile, read-only, order,
    write paths, the first line of the task). None: list the arguments as they are."""
    items = args.get("items")
    if tool != "fleet" or not isinstance(items, list):
        return None
    lines = [_item_line(n, item) for n, item in enumerate(items[:DETAIL_ITEMS], start=1)]
    if len(items) > DETAIL_ITEMS:
        lines.append(f"… {len(items) - DETAIL_ITEMS} more items")
    if args.get("fail_fast") is True:
        lines.append("fail_fast: no item starts after one fails")
    return [
        visible(line if len(line) <= DETAIL_CHARS else line[: DETAIL_CHARS - 1] + "…")
        for line in lines
    ]


def _item_line(position: int, item: object) -> str:
    if not isinstance(item, dict):
        return f"{position}. ?"
    name = _words(item.get("id") or position)
    notes = [_words(item["profile"])] if isinstance(item.get("profile"), str) else []
    if item.get("read_only"):
        notes.append("read-only")
    depends = item.get("depends_on")
    if isinstance(depends, list) and depends:
        notes.append("after " + ", ".join(_words(d) for d in depends))
    paths = item.get("write_paths")
    if isinstance(paths, list) and paths:
        notes.append("writes " + ", ".join(_words(p) for p in paths))
    prompt = item.get("prompt")
    task = next((ln for ln in str(prompt).splitlines() if ln.strip()), "") if prompt else ""
    head = f"{name} ({'; '.join(notes)})" if notes else name
    return f"{head}: {_words(task)}" if task else head


def _words(value: object) -> str:
    """Model text on one line (every line break and run of spaces one space)."""
    return " ".join(str(value).split())
