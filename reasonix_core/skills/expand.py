"""``/<skill> args``: a skill used as a slash command becomes the user turn.

The one hook the prompt expanders call (the TUI's slash commands and
``reasonix run``): :func:`expand_skill_command` returns the text to send, or
None when the text does not start with the name of a skill. Built-in and custom
commands are looked up before it, so a skill never shadows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.skills.catalog import SkillCatalog


def expand_skill_command(text: str, skills: SkillCatalog) -> str | None:
    """The user turn for ``/<skill> args``, or None if ``text`` names no skill
    (see :meth:`SkillCatalog.render_command`)."""
    words = text.strip().split(None, 1)
    if not words or not words[0].startswith("/"):
        return None
    return skills.render_command(words[0][1:], words[1] if len(words) > 1 else "")
