"""``bash_output``: read new output from a background job started by ``bash``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import BASH_OUTPUT as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool
from reasonix_core.tool.jobs import JobError, JobManager, JobOutput

NO_JOBS = "background jobs are not available in this context"


def job_manager(ctx: ToolContext) -> JobManager | None:
    return ctx.jobs


def render_job(snapshot: JobOutput, *, empty: str = "(no new output)") -> str:
    body = snapshot.output.rstrip("\n") or empty
    return f"[{snapshot.job_id}: {snapshot.status}]\n{body}"


class JobArgs(BaseModel):
    model_config = ARGS_CONFIG

    job_id: str = Field(min_length=1)


class BashOutputTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed: JobArgs = validate_args(JobArgs, args)
        jobs = job_manager(ctx)
        if jobs is None:
            return ToolResult.error(NO_JOBS)
        try:
            snapshot = jobs.read_new(parsed.job_id)
        except JobError as exc:
            return ToolResult.error(str(exc))
        return ToolResult(
            text=render_job(snapshot),
            meta={"job_id": snapshot.job_id, "status": snapshot.status},
        )
