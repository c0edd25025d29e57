"""The session's handle on delegation (``ToolContext.subagents`` of its agent).

The session (``session/build.py``) installs a :class:`Delegation` in every session; the
:class:`~reasonix_core.subagent.runner.SubagentRunner` behind it (and the
delegation tools' module) is imported and built when the model first
delegates, so a run that never delegates does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix_core.subagent.services import SessionServices

if TYPE_CHECKING:
    from reasonix_core.skills import Skill
    from reasonix_core.subagent.runner import SubagentRunner
    from reasonix_core.tool.base import ToolContext, ToolResult


class Delegation:
    """The session's handle (``ToolContext.subagents`` of the top-level agent): its
    :class:`~reasonix_core.subagent.runner.SubagentRunner`, built on first use."""

    def __init__(self, services: SessionServices) -> None:
        self.services = services
        self._runner: SubagentRunner | None = None

    def runner(self) -> SubagentRunner:
        """The session's runner (a child's own runner answers ``runner()`` with itself)."""
        if self._runner is None:
            from reasonix_core.subagent.runner import SubagentRunner

            self._runner = SubagentRunner(self.services)
        return self._runner

    async def run_skill(self, skill: Skill, arguments: str, ctx: ToolContext) -> ToolResult:
        """``ToolContext.run_subagent_skill``: a ``runAs: subagent`` skill through the runner."""
        from reasonix_core.subagent.tools import run_skill_as_subagent

        return await run_skill_as_subagent(self.runner(), ctx, skill, arguments)
