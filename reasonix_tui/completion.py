"""Pure helpers behind the ``/`` and ``@`` menus (no widgets, easy to test)."""

from __future__ import annotations

import re
from pathlib import Path

from reasonix_core.command.mentions import path_candidates
from reasonix_tui.commands import CommandRegistry
from reasonix_tui.widgets.completion_menu import MenuItem

_MENTION_AT_CURSOR = re.compile(r"(?:^|(?<=\s))@([^\s@]*)$")


def slash_items(registry: CommandRegistry, text: str) -> list[MenuItem] | None:
    """Menu items while the composer holds only ``/partial``; None when not applicable."""
    if not text.startswith("/") or any(c.isspace() for c in text):
        return None
    query = text[1:]
    if "/" in query:
        return None
    return [
        MenuItem(
            value=c.name,
            label=f"/{c.name}" + (f" {c.argument_hint}" if c.argument_hint else ""),
            detail=c.description,
        )
        for c in registry.match(query)
    ]


def mention_at_cursor(line_before_cursor: str) -> tuple[int, str] | None:
    """(column of the ``@``, partial path) when the cursor ends an ``@`` token."""
    match = _MENTION_AT_CURSOR.search(line_before_cursor)
    if match is None:
        return None
    return match.start(), match.group(1)


def mention_items(workspace: Path, partial: str) -> list[MenuItem]:
    return [
        MenuItem(
            value=c.completion,
            label=c.name,
            detail="dir" if c.is_dir else "",
            descend=c.is_dir,
        )
        for c in path_candidates(workspace, partial)
    ]
