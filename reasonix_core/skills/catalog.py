"""The skills of one session: the index frozen at start, bodies read on demand.

A session discovers its skills once (:func:`load_catalog`). The index it shows
the model (names and descriptions) is rendered then and never changes for that
session, so editing, adding or removing a ``SKILL.md`` mid-session leaves every
request's prefix byte-identical. A body is read again when it is used
(``run_skill`` or ``/<name>``), so an edited skill's new instructions take
effect at once: they travel in a tool result or a user turn, never in the
prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from reasonix_core.errors import SkillError
from reasonix_core.skills.index import MAX_INDEX_CHARS, SkillIndex, render_index
from reasonix_core.skills.roots import any_root_exists, skill_roots

if TYPE_CHECKING:  # reading skills is imported only when there is a skills folder
    from reasonix_core.command.custom import LoadProblem
    from reasonix_core.skills.discovery import FoundSkill
    from reasonix_core.skills.model import Skill

Invoker = Literal["model", "user"]


class SkillCatalog:
    def __init__(self, found: Sequence[FoundSkill] = (), problems: Sequence[LoadProblem] = ()):
        self._found = {f.skill.name: f for f in sorted(found, key=lambda f: f.skill.name)}
        self.problems: tuple[LoadProblem, ...] = tuple(problems)
        # What the model is offered: skills it may start itself (not
        # ``disable-model-invocation``), rendered once for the session.
        self.index: SkillIndex = render_index(
            f.skill for f in self._found.values() if f.file.model_invocable
        )

    def notices(self) -> list[str]:
        """What the user should hear about once: files skipped or warned about,
        hidden duplicates, skills the index cap left out."""
        from reasonix_core.permission.summary import visible

        # A folder name may hold escape sequences or bytes that are not UTF-8.
        out = [
            visible(
                f"skill file {p.path}: {p.message}".encode("utf-8", "backslashreplace").decode()
            )
            for p in self.problems
        ]
        if self.index.omitted:
            out.append(
                f"{len(self.index.omitted)} skill(s) left out of the model's skills index "
                f"(over {MAX_INDEX_CHARS} characters); /<name> still runs them: "
                + ", ".join(self.index.omitted)
            )
        return out

    def __bool__(self) -> bool:
        return bool(self._found)

    def __contains__(self, name: str) -> bool:
        return name in self._found

    @property
    def skills(self) -> tuple[Skill, ...]:
        """The skills as discovered at start, sorted by name."""
        return tuple(f.skill for f in self._found.values())

    def get(self, name: str) -> Skill | None:
        """The skill as discovered at start (its body may have changed since)."""
        found = self._found.get(name)
        return found.skill if found is not None else None

    def commands(self) -> list[tuple[str, str, str]]:
        """The skills a user may type as ``/<name>``: (name, description, argument hint)."""
        return [
            (name, f.skill.description, f.file.argument_hint)
            for name, f in self._found.items()
            if f.file.user_invocable
        ]

    def render_command(self, name: str, arguments: str) -> str | None:
        """The user turn for the skill ``name`` run with ``arguments`` (``/name
        arguments``); None when the session has no skill of that name. The prompt
        expander calls it on the catalog it was given, so command/ does not import
        skills/.

        An inline skill expands to its body with ``$ARGUMENTS``, ``$1…`` and ``$$``
        filled in, as custom commands do. A ``runAs: subagent`` skill cannot be
        pasted into this conversation; the turn asks the model to run it through
        ``run_skill``, the one path to the subagent runner. Raises
        :class:`~reasonix_core.errors.SkillError` when the skill's file can no
        longer be used or keeps the user from starting it.
        """
        if name not in self:
            return None
        skill = self.load(name, by="user")
        arguments = arguments.strip()
        if skill.run_as == "subagent":
            request = f"Run the skill {skill.name!r} now with the run_skill tool"
            return (
                f"{request}, with these arguments:\n\n{arguments}" if arguments else f"{request}."
            )
        return skill.render(arguments)

    def load(self, name: str, by: Invoker) -> Skill:
        """The skill read again from its file, with the same checks as discovery.

        Raises :class:`~reasonix_core.errors.SkillError` for a name the session
        does not know, a file that can no longer be used, or a skill its file
        keeps from ``by`` (``disable-model-invocation``, ``user-invocable: false``).
        """
        found = self._found.get(name)
        if found is None:
            known = ", ".join(n for n, f in self._found.items() if f.file.model_invocable)
            raise SkillError(
                f"unknown skill {name[:80]!r} (skills in this session: {known or 'none'})"
            )
        from reasonix_core.skills.discovery import SkillFileError, read_skill

        try:
            parsed = read_skill(found.root, found.folder)
        except SkillFileError as exc:
            where = f":{exc.line}" if exc.line is not None else ""
            raise SkillError(
                f"skill {name!r} cannot be used: {found.skill.path}{where}: {exc.message}"
            ) from None
        if by == "model" and not parsed.model_invocable:
            raise SkillError(
                f"skill {name!r} is started only by the user (/{name}): "
                "its file sets disable-model-invocation"
            )
        if by == "user" and not parsed.user_invocable:
            raise SkillError(
                f"skill {name!r} is not a slash command: its file sets user-invocable: false"
            )
        return parsed.skill


def load_catalog(
    workspace: Path | None, home: Path | None, user_home: Path | None = None
) -> SkillCatalog:
    """Discover the skills for a session (``user_home``: the user's home
    directory, for ``~/.claude/skills``; ``Path.home()`` when omitted)."""
    if user_home is None:
        try:
            user_home = Path.home()
        except RuntimeError:  # no HOME and no passwd entry
            user_home = None
    if not any_root_exists(skill_roots(workspace, home, user_home)):
        return SkillCatalog()  # start-up: no reader imported when there is nothing to read
    from reasonix_core.skills.discovery import discover

    found, problems = discover(workspace, home, user_home)
    return SkillCatalog(found, problems)
