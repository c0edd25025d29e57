"""``/<skill> args``: a skill used as a slash command becomes the user turn.

The one hook the prompt expanders call (the TUI's slash commands and
``reasonix run``): :func:`expand_skill_command` returns the text to send, or
None when the text does not start with the name of a skill. Built-in and custom
commands are looked up before it, so a skill never shadows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the catalog calls in here (SkillCatalog.render_command)
    from reasonix_core.skills.catalog import SkillCatalog


def expand_skill_command(text: str, skills: SkillCatalog) -> str | None:
    """The user turn for ``/<skill> args``, or None if ``text`` names no skill
    (see :func:`render_skill_command`)."""
    words = text.strip().split(None, 1)
    if not words or not words[0].startswith("/"):
        return None
    return render_skill_command(words[0][1:], words[1] if len(words) > 1 else "", skills)


def render_skill_command(name: str, arguments: str, skills: SkillCatalog) -> str | None:
    """The user turn for the skill ``name`` run with ``arguments``; None when the
    session has no skill of that name.

    An inline skill expands to its body with ``$ARGUMENTS``, ``$1…`` and ``$$``
    filled in, as custom commands do. A ``runAs: subagent`` skill cannot be
    pasted into this conversation; the turn asks the model to run it through
    ``run_skill``, the one path to the subagent runner. Raises
    :class:`~reasonix_core.errors.SkillError` when the skill's file can no
    longer be used or keeps the user from starting it.
    """
    if name not in skills:
        return None
    skill = skills.load(name, by="user")
    arguments = arguments.strip()
    if skill.run_as == "subagent":
        request = f"Run the skill {skill.name!r} now with the run_skill tool"
        return f"{request}, with these arguments:\n\n{arguments}" if arguments else f"{request}."
    return skill.render(arguments)
