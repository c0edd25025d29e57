"""Skills: ``SKILL.md`` folders the model can load on demand (docs/SKILLS.md).

A skill is a folder ``<root>/<name>/SKILL.md``: front matter (``name``,
``description``, ``allowed-tools``, ``runAs``, ``model``, ``effort``,
``read-only``) and a Markdown body of instructions. Only the index (name and
description) enters the prompt prefix; the body is read when the model calls
``run_skill`` or the user types ``/<name>``. A skill with ``runAs: subagent``
is a profile for the subagent runner (``reasonix_core/subagent``).

``model`` (the :class:`Skill` value), ``roots`` (where skills live, in
precedence order), ``discovery`` (reading skill files safely; imported only when
a skills folder exists), ``index`` (the prefix text), ``catalog`` (one
session's skills), ``expand`` (``/<skill> args``).
"""

from reasonix_core.skills.catalog import SkillCatalog, load_catalog
from reasonix_core.skills.expand import expand_skill_command
from reasonix_core.skills.model import Skill

__all__ = ["Skill", "SkillCatalog", "expand_skill_command", "load_catalog"]
