"""The skill value every consumer reads (the index, run_skill, the subagent runner)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

RunAs = Literal["inline", "subagent"]


@dataclass(frozen=True)
class Skill:
    """One loaded ``SKILL.md``.

    ``allowed_tools`` is ``None`` when the file names no tools (no limit of its
    own), otherwise the tool names it allows, in the file's order. ``model``
    and ``effort`` are ``None`` when the file leaves them to the caller.
    """

    name: str
    description: str
    body: str
    path: Path
    run_as: RunAs
    model: str | None
    effort: str | None
    read_only: bool
    allowed_tools: tuple[str, ...] | None

    def render(self, arguments: str) -> str:
        """The body with ``$ARGUMENTS``, ``$1…`` and ``$$`` filled in, as custom commands
        do (:func:`reasonix_core.command.custom.expand_template`)."""
        from reasonix_core.command.custom import expand_template

        return expand_template(self.body, arguments)
