"""``run_skill``: load a skill's instructions into the conversation as a tool result.

The prefix holds only the skills' index (docs/SKILLS.md); the body arrives
here, after the cached prefix, so loading a skill never changes earlier bytes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.errors import SkillError
from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import RUN_SKILL as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool


class RunSkillArgs(BaseModel):
    model_config = ARGS_CONFIG

    name: str = Field(min_length=1, max_length=200)
    arguments: str = ""


class RunSkillTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: RunSkillArgs = validate_args(RunSkillArgs, args)
        if ctx.skills is None or not ctx.skills:
            return ToolResult.error("run_skill: this session has no skills")
        try:
            skill = ctx.skills.load(a.name.strip(), by="model")
        except SkillError as exc:
            return ToolResult.error(f"run_skill: {exc}")
        if skill.run_as == "subagent":
            if ctx.run_subagent_skill is None:
                return ToolResult.error(
                    f"run_skill: skill {skill.name!r} runs as a subagent (runAs: subagent), "
                    "and subagent skills need the subagent runner, which this session does "
                    "not have; do the task yourself or ask the user"
                )
            return await ctx.run_subagent_skill(skill, a.arguments, ctx)
        body = skill.render(a.arguments)
        return ToolResult(
            text=(
                f'<skill name="{skill.name}" folder="{skill.path.parent}">\n'
                f"{body}\n</skill>\n"
                "Follow these instructions for the task. Files the skill mentions are "
                "relative to its folder."
            ),
            meta={"skill": skill.name, "path": str(skill.path)},
        )
