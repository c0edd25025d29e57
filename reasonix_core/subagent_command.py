"""``reasonix subagent list|run|try``: the command line's entry to the one runner.

``run`` starts a writer child with the session's regular permissions and
sandbox (headless: nobody answers approvals, so an ask fails closed); ``try``
runs the read-only runner. Both build the session as ``reasonix run`` does and
hand one :class:`SubagentSpec` to its :class:`SubagentRunner`, the same path
as the ``task`` tool. ``list`` shows the profiles (skills with ``runAs:
subagent``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from reasonix_core import events as ev
from reasonix_core.metrics import MetricsSink, RunMetrics
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_core.skills import load_catalog
from reasonix_core.subagent.delegation import Delegation
from reasonix_core.subagent.profile import catalog_subagent_skills
from reasonix_core.subagent.result import SubagentResult
from reasonix_core.subagent.spec import SubagentError


def list_profiles(workspace: Path, home: Path) -> list[tuple[str, str, str]]:
    """(name, kind, description) of every profile, the two defaults first."""
    rows = [
        ("(task)", "writer", "the default writer: task prompt, completion contract"),
        ("(read-only)", "read-only", "the default investigator: read-only tools only"),
    ]
    for skill in catalog_subagent_skills(load_catalog(workspace, home)):
        kind = "read-only" if skill.read_only else "writer"
        rows.append((skill.name, kind, skill.description))
    return rows


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    result: SubagentResult
    metrics: RunMetrics


async def run_subagent(
    settings: RunSettings,
    prompt: str,
    *,
    read_only: bool,
    profile: str | None = None,
    write_paths: tuple[str, ...] | None = None,
    model: str | None = None,
    effort: str | None = None,
    err: TextIO,
) -> CommandOutcome:
    """One child through the session's runner; its activity goes to ``err``.

    Raises :class:`SubagentError` (or another ``ReasonixError``) when it cannot
    start."""
    sink = MetricsSink()

    async def emit(event: ev.Event) -> None:
        sink.record(event)
        _show(event, err)

    # The session only lends the child its services: it keeps no file of its own
    # (an empty parent in the session list), the child's transcript is the record.
    settings = replace(settings, record_session=False)
    async with build_session(settings, approver=FailClosedApprover()) as runtime:
        handle = runtime.agent.tool_context.subagents
        if not isinstance(handle, Delegation):
            raise SubagentError("this session has no subagent runner")
        runner = handle.runner()
        spec = runner.spec(
            prompt,
            profile=runner.profile(profile),
            read_only=read_only,
            write_paths=write_paths,
            model=model,
            effort=effort,
            label="cli",
            parent_session_id="",  # started by the command line, no parent session
        )
        result = await runner.run(spec, emit=emit)
    return CommandOutcome(result=result, metrics=sink.finish("success" if result.ok else "error"))


def _show(event: ev.Event, err: TextIO) -> None:
    match event:
        case ev.ToolCallStarted(name=name, arguments=arguments):
            short = arguments if len(arguments) <= 100 else arguments[:99] + "…"
            err.write(f"● {name} {short}\n")
        case ev.ToolCallFinished(name=name, outcome=outcome, is_error=True, result=result):
            err.write(f"  ✗ {name} {outcome}: {result.splitlines()[0][:160] if result else ''}\n")
        case ev.Retrying(attempt=attempt, delay=delay, reason=reason):
            err.write(f"retrying ({attempt}) in {delay:.1f}s: {reason}\n")
        case ev.Notice(level=level, text=text):
            err.write(f"{level}: {text}\n")
        case _:
            return
    err.flush()
