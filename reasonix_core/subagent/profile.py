"""A subagent profile: how a worker thinks, never what one run may do.

Seed 000 §3.10: a profile is a skill with ``runAs: subagent``. It may carry
capability *upper bounds* (model, effort, read-only, allowed tools) but never
per-run values (``max_turns``, ``write_paths``, retries): those belong to the
task or the scheduler. :func:`profile_from_skill` is the one narrowing point
from a skill's (growing) front matter; a test fails when :class:`Profile`
gains a field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reasonix_core.errors import ReasonixError

if TYPE_CHECKING:
    from reasonix_core.skills import Skill, SkillCatalog


class ProfileError(ReasonixError):
    """A skill cannot be used as a subagent profile."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """How a worker thinks: its prompt and its capability upper bounds."""

    name: str
    description: str = ""
    # The profile's body: the child's whole system prompt. None: the default
    # task (or read-only task) prompt.
    system_prompt: str | None = None
    # Upper bounds. None: the caller's choice (or the session's).
    model: str | None = None
    effort: str | None = None
    read_only: bool = False
    allowed_tools: tuple[str, ...] | None = None


def profile_from_skill(skill: Skill) -> Profile:
    """The profile a ``runAs: subagent`` skill describes.

    Routing metadata (triggers, auto-use, cost, ...) stops here: it decides
    *when* a worker is picked, not how it thinks."""
    if skill.run_as != "subagent":
        raise ProfileError(
            f"skill {skill.name!r} ({skill.path}) does not run as a subagent "
            "(its front matter needs runAs: subagent)"
        )
    body = skill.body.strip()
    return Profile(
        name=skill.name,
        description=skill.description,
        system_prompt=body + "\n" if body else None,
        model=skill.model or None,
        effort=skill.effort or None,
        read_only=bool(skill.read_only),
        allowed_tools=tuple(skill.allowed_tools) if skill.allowed_tools is not None else None,
    )


def catalog_profiles(catalog: SkillCatalog) -> Callable[[str], Profile | None]:
    """Profile lookup over a session's skills: the named skill read again from its
    file (an edit since start-up applies), which must run as a subagent.
    None for a name the session does not know; raises ``ReasonixError``
    (SkillError, ProfileError) for a skill that cannot be a profile now."""

    def lookup(name: str) -> Profile | None:
        if catalog.get(name) is None:
            return None
        return profile_from_skill(catalog.load(name, by="model"))

    return lookup


def catalog_subagent_skills(catalog: SkillCatalog) -> list[Skill]:
    """The session's ``runAs: subagent`` skills, by name."""
    return [skill for skill in catalog.skills if skill.run_as == "subagent"]
