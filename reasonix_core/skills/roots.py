"""Where skills live, in precedence order (stdlib only: a run checks these
folders before it imports anything that reads a skill)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reasonix_core.project import file_label, project_folders

SkillScope = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """A folder of skill folders. ``label`` is how messages name it."""

    path: Path
    scope: SkillScope
    label: str


PROJECT_SKILL_DIRS = (".reasonix/skills", ".claude/skills")


def skill_roots(
    workspace: Path | None, home: Path | None, user_home: Path | None
) -> tuple[SkillRoot, ...]:
    """Highest precedence first: the user's before the project's (a cloned
    repository cannot replace a skill the user wrote), Reasonix's folder before
    Claude Code's. A project's folders are those of every folder from the git root
    down to the workspace (:func:`reasonix_core.project.project_folders`), the
    deeper first, as a deeper folder's command wins."""
    roots: list[SkillRoot] = []
    if home is not None:
        roots.append(SkillRoot(home / "skills", "user", "~/.reasonix/skills"))
    if user_home is not None:
        roots.append(SkillRoot(user_home / ".claude" / "skills", "user", "~/.claude/skills"))
    if workspace is not None:
        folders = project_folders(workspace)[::-1]
        for relative in PROJECT_SKILL_DIRS:
            for folder in folders:
                path = folder / relative
                roots.append(SkillRoot(path, "project", file_label(path, workspace)))
    return tuple(roots)


def any_root_exists(roots: tuple[SkillRoot, ...]) -> bool:
    return any(os.path.isdir(root.path) for root in roots)
