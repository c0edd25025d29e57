"""``kill_shell``: stop a background job started by ``bash``."""

from __future__ import annotations

from typing import Any

from reasonix_core.tool.args import validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.bash_output import (
    NO_JOBS,
    JobArgs,
    job_manager,
    render_job,
)
from reasonix_core.tool.builtin.specs import KILL_SHELL as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool
from reasonix_core.tool.jobs import JobError


class KillShellTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed: JobArgs = validate_args(JobArgs, args)
        jobs = job_manager(ctx)
        if jobs is None:
            return ToolResult.error(NO_JOBS)
        try:
            was_running = jobs.status(parsed.job_id).running
            snapshot = await jobs.kill(parsed.job_id)
        except JobError as exc:
            return ToolResult.error(str(exc))
        verb = "Killed" if was_running else "Already finished:"
        return ToolResult(
            text=f"{verb} {parsed.job_id}.\n{render_job(snapshot, empty='(no unread output)')}",
            meta={"job_id": snapshot.job_id, "status": snapshot.status},
        )
