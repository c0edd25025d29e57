"""The delegation tools: ``task`` and ``read_only_task`` (``complete_subtask``
lives with the adjudication, in :mod:`.completion`).

Each compiles its arguments into a :class:`SubagentSpec` and hands it to the
session's :class:`SubagentRunner` (``ToolContext.subagents``); none builds an
agent itself. The parent's transcript receives only the child's rendered
result: its final answer and, for writers, the adjudicated report and the
host's receipt.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reasonix_core.subagent.runner import SubagentRunner
from reasonix_core.subagent.spec import SubagentError
from reasonix_core.tool.base import ToolContext, ToolResult, current_call_id
from reasonix_core.tool.builtin.specs import READ_ONLY_TASK, TASK, SpecifiedTool


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class TaskArgs(_Args):
    prompt: str = Field(min_length=1)
    profile: str | None = None
    model: str | None = None
    effort: str | None = None
    write_paths: list[str] | None = Field(default=None, max_length=200)


class ReadOnlyTaskArgs(_Args):
    prompt: str = Field(min_length=1)
    profile: str | None = None


def _runner(ctx: ToolContext, tool: str) -> SubagentRunner | ToolResult:
    runner = ctx.subagents
    if not isinstance(runner, SubagentRunner):
        return ToolResult.error(f"{tool}: subagents are not available in this session")
    return runner


def _invalid(tool: str, exc: ValidationError) -> ToolResult:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
        for err in exc.errors()
    )
    return ToolResult.error(f"{tool}: invalid arguments: {problems}")


async def _delegate(
    ctx: ToolContext, tool: str, runner: SubagentRunner, **fields: Any
) -> ToolResult:
    call_id = current_call_id.get()
    try:
        profile = runner.profile(fields.pop("profile", None))
        spec = runner.spec(fields.pop("prompt"), profile=profile, parent_call_id=call_id, **fields)
        result = await runner.run(spec, emit=ctx.child_events)
    except SubagentError as exc:
        return ToolResult.error(f"{tool}: {exc}")
    text = result.render()
    if not result.ok:
        return ToolResult(text=text, is_error=True, outcome="error")
    return ToolResult(text=text, meta={"subagent": result.session_id})


class TaskTool(SpecifiedTool, spec=TASK):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = _runner(ctx, self.name)
        if isinstance(runner, ToolResult):
            return runner
        try:
            a = TaskArgs.model_validate(args)
        except ValidationError as exc:
            return _invalid(self.name, exc)
        paths = tuple(a.write_paths) if a.write_paths is not None else None
        return await _delegate(
            ctx,
            self.name,
            runner,
            prompt=a.prompt,
            profile=a.profile,
            model=a.model or None,
            effort=a.effort or None,
            write_paths=paths,
        )


class ReadOnlyTaskTool(SpecifiedTool, spec=READ_ONLY_TASK):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = _runner(ctx, self.name)
        if isinstance(runner, ToolResult):
            return runner
        try:
            a = ReadOnlyTaskArgs.model_validate(args)
        except ValidationError as exc:
            return _invalid(self.name, exc)
        return await _delegate(
            ctx, self.name, runner, prompt=a.prompt, profile=a.profile, read_only=True
        )
