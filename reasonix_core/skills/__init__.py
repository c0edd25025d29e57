"""Skills: ``SKILL.md`` folders the model can load on demand.

A skill is a folder ``<root>/<name>/SKILL.md``: front matter (``name``,
``description``, ``allowed-tools``, ``runAs``, ``model``, ``effort``,
``read-only``) and a Markdown body of instructions. Only the index (name and
description) enters the prompt prefix; the body is read when the model calls
``run_skill`` or the user types ``/<name>``. A skill with ``runAs: subagent``
is a profile for the subagent runner (``reasonix_core/subagent``).
"""

from reasonix_core.skills.model import Skill

__all__ = ["Skill"]
