"""The skills index: the only part of a skill that enters the prompt prefix.

One line per skill, ``- name: description``, sorted by name, under a short
heading that tells the model how to use them. The index is capped at
:data:`MAX_INDEX_CHARS`; skills past the cap are left out of it (the session
reports them once) and stay reachable by name, through ``run_skill`` and
``/<name>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.skills.model import Skill

MAX_INDEX_CHARS = 12_000

HEADING = """\
# Skills

Skills are instructions for particular kinds of work, kept in SKILL.md files. When a task \
matches a skill's description, call run_skill with its name (and the task's details as \
`arguments`) before you start, then follow the instructions it returns. A skill marked \
(subagent) runs as a separate agent and returns its result."""


@dataclass(frozen=True, slots=True)
class SkillIndex:
    """The rendered index and the skills the cap left out of it."""

    text: str  # empty when there are no skills
    omitted: tuple[str, ...] = ()  # names left out by the cap


def render_index(skills: Iterable[Skill]) -> SkillIndex:
    ordered = sorted(skills, key=lambda s: s.name)
    if not ordered:
        return SkillIndex("")
    lines: list[str] = []
    size = len(HEADING) + 2
    omitted: list[str] = []
    for skill in ordered:
        mark = " (subagent)" if skill.run_as == "subagent" else ""
        line = f"- {skill.name}{mark}: {skill.description}"
        if omitted or size + len(line) + 1 > MAX_INDEX_CHARS:
            omitted.append(skill.name)
            continue
        lines.append(line)
        size += len(line) + 1
    return SkillIndex(HEADING + "\n\n" + "\n".join(lines), tuple(omitted))
