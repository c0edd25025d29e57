"""The delegation tools: ``task``, ``read_only_task`` and ``fleet`` (``complete_subtask``
lives with the adjudication, in :mod:`.completion`).

Each compiles its arguments into a :class:`SubagentSpec` and hands it to the
session's :class:`SubagentRunner` (``ToolContext.subagents``); none builds an
agent itself. The parent's transcript receives only the child's rendered
result: its final answer and, for writers, the adjudicated report and the
host's receipt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, Field

from reasonix_core import events as ev
from reasonix_core.errors import FleetPlanError
from reasonix_core.subagent.fleet import (
    FleetItem,
    FleetPlan,
    FleetResult,
    ItemResult,
    preflight,
    run_fleet,
)
from reasonix_core.subagent.profile import Profile, ProfileError, profile_from_skill
from reasonix_core.subagent.runner import SubagentRunner
from reasonix_core.subagent.spec import SubagentError
from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import FOR_MODEL, SUMMARY, ToolContext, ToolResult, current_call_id
from reasonix_core.tool.builtin.specs import FLEET, READ_ONLY_TASK, TASK, SpecifiedTool

if TYPE_CHECKING:
    from reasonix_core.skills import Skill
    from reasonix_core.subagent.result import SubagentResult


class _Args(BaseModel):
    model_config = ARGS_CONFIG


class TaskArgs(_Args):
    prompt: str = Field(min_length=1)
    profile: str | None = None
    model: str | None = None
    effort: str | None = None
    write_paths: list[str] | None = Field(default=None, max_length=200)
    continue_from: str | None = Field(default=None, max_length=128)
    fork_from: str | None = Field(default=None, max_length=128)


class ReadOnlyTaskArgs(_Args):
    prompt: str = Field(min_length=1)
    profile: str | None = None
    continue_from: str | None = Field(default=None, max_length=128)
    fork_from: str | None = Field(default=None, max_length=128)


class FleetItemArgs(_Args):
    prompt: str = Field(min_length=1)
    id: str | None = None
    profile: str | None = None
    depends_on: list[str] = Field(default_factory=list, max_length=64)
    write_paths: list[str] | None = Field(default=None, max_length=200)
    read_only: bool = False
    continue_from: str | None = Field(default=None, max_length=128)
    fork_from: str | None = Field(default=None, max_length=128)


class FleetArgs(_Args):
    items: list[FleetItemArgs] = Field(min_length=1, max_length=64)
    fail_fast: bool = False


def in_plan_mode(ctx: ToolContext) -> bool:
    """The session is in plan mode (a run option its children are told)."""
    return ctx.plan_mode is not None and bool(getattr(ctx.plan_mode, "active", False))


def _runner(ctx: ToolContext, tool: str) -> SubagentRunner | ToolResult:
    """The runner of the agent calling: a child's own, or the session's (its
    Delegation handle builds it on first use). Both answer ``runner()``."""
    handle = getattr(ctx.subagents, "runner", None)
    runner = handle() if callable(handle) else None
    if not isinstance(runner, SubagentRunner):
        return ToolResult.error(f"{tool}: subagents are not available in this session")
    return runner


async def _delegate(
    ctx: ToolContext,
    tool: str,
    runner: SubagentRunner,
    *,
    resumable: bool = True,
    profile_name: str | None = None,
    profile: Profile | None = None,
    **fields: Any,
) -> ToolResult:
    call_id = current_call_id.get()
    try:
        if profile is None:
            profile = runner.profile(profile_name)
        spec = runner.spec(
            fields.pop("prompt"),
            profile=profile,
            parent_call_id=call_id,
            plan_mode=in_plan_mode(ctx),
            **fields,
        )
        result = await runner.run(spec, emit=ctx.child_events)
    except SubagentError as exc:
        return ToolResult.error(f"{tool}: {exc}")
    text = result.render_resumable() if resumable and not spec.ephemeral else result.render()
    # People read what the child came back with, not the line telling the model how to
    # go on in its transcript.
    shown = {SUMMARY: result.render(), FOR_MODEL: True} if text != result.render() else {}
    if not result.ok:
        return ToolResult(text=text, is_error=True, outcome="error", meta=shown)
    return ToolResult(text=text, meta={"subagent": result.session_id, **shown})


async def run_skill_as_subagent(
    runner: SubagentRunner, ctx: ToolContext, skill: Skill, arguments: str
) -> ToolResult:
    """``run_skill`` for a ``runAs: subagent`` skill: the skill becomes the
    child's profile, the arguments its task."""
    try:
        profile = profile_from_skill(skill)
    except ProfileError as exc:
        return ToolResult.error(f"run_skill: {exc}")
    task = arguments.strip() or f"Do what your instructions describe: {skill.description}"
    return await _delegate(ctx, "run_skill", runner, resumable=False, profile=profile, prompt=task)


class TaskTool(SpecifiedTool, spec=TASK):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = _runner(ctx, self.name)
        if isinstance(runner, ToolResult):
            return runner
        a: TaskArgs = validate_args(TaskArgs, args)
        paths = tuple(a.write_paths) if a.write_paths is not None else None
        return await _delegate(
            ctx,
            self.name,
            runner,
            prompt=a.prompt,
            profile_name=a.profile,
            model=(a.model or "").strip() or None,
            effort=(a.effort or "").strip() or None,
            write_paths=paths,
            continue_from=(a.continue_from or "").strip(),
            fork_from=(a.fork_from or "").strip(),
        )


class ReadOnlyTaskTool(SpecifiedTool, spec=READ_ONLY_TASK):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = _runner(ctx, self.name)
        if isinstance(runner, ToolResult):
            return runner
        a: ReadOnlyTaskArgs = validate_args(ReadOnlyTaskArgs, args)
        return await _delegate(
            ctx,
            self.name,
            runner,
            prompt=a.prompt,
            profile_name=a.profile,
            read_only=True,
            continue_from=(a.continue_from or "").strip(),
            fork_from=(a.fork_from or "").strip(),
        )


def _checked_plan(
    a: FleetArgs, runner: SubagentRunner
) -> tuple[FleetPlan, dict[str, Profile | None]]:
    """The fleet's plan (fleet.preflight) and each item's profile, all checked
    before anything starts; raises FleetPlanError or SubagentError."""
    items = [
        FleetItem(
            prompt=i.prompt,
            id=i.id,
            profile=i.profile,
            depends_on=tuple(i.depends_on),
            write_paths=tuple(i.write_paths) if i.write_paths is not None else None,
            read_only=i.read_only,
        )
        for i in a.items
    ]
    plan = preflight(items, runner.services.sandbox, resolve=runner.claim)
    profiles = {item.id: runner.profile(item.profile) for item in plan.items if item.id}
    return plan, profiles


def _continuations(a: FleetArgs, plan: FleetPlan) -> dict[str, tuple[str, str]]:
    """Each item's (continue_from, fork_from), by the id preflight gave it; two items
    going on in one transcript could not both write it, so that is refused here."""
    out = {
        item.id: ((i.continue_from or "").strip(), (i.fork_from or "").strip())
        for item, i in zip(plan.items, a.items, strict=True)
        if item.id
    }
    continued = [c for c, _ in out.values() if c]
    if len(continued) != len(set(continued)):
        raise FleetPlanError("two items continue_from the same subagent; fork_from one of them")
    return out


class FleetTool(SpecifiedTool, spec=FLEET):
    """Checks the plan (fleet.preflight), then runs it (fleet.run_fleet) with one
    spec per item through the runner; the scheduler holds each item's slot."""

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runner = _runner(ctx, self.name)
        if isinstance(runner, ToolResult):
            return runner
        a: FleetArgs = validate_args(FleetArgs, args)
        try:
            plan, profiles = _checked_plan(a, runner)
            going_on = _continuations(a, plan)
        except (FleetPlanError, SubagentError) as exc:
            return ToolResult.error(f"{self.name}: {exc}")
        call_id = current_call_id.get()
        # One ordered channel into the parent's stream: the plan's state changes
        # and the children's events, in the order they happened.
        send, receive = anyio.create_memory_object_stream[ev.Event](math.inf)

        def report(change: ev.FleetItemChanged) -> None:
            send.send_nowait(replace(change, agent_path=runner.agent_path))

        async def run_item(item: FleetItem, upstream: Mapping[str, ItemResult]) -> ItemResult:
            assert item.id is not None
            spec = runner.spec(
                item.prompt,
                profile=profiles[item.id],
                write_paths=item.write_paths,
                read_only=item.read_only,
                parent_call_id=call_id,
                label=f"{call_id}#{item.id}",
                fleet_item=item.id,
                continue_from=going_on[item.id][0],
                fork_from=going_on[item.id][1],
                plan_mode=in_plan_mode(ctx),
            )
            try:
                result = await runner.run(spec, emit=send.send)
            except SubagentError as exc:
                return ItemResult(ok=False, text=str(exc))
            return _item_result(result)

        async def drain() -> None:
            async with receive:
                async for event in receive:
                    if ctx.child_events is not None:
                        await ctx.child_events(event)

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            async with send:
                outcome = await run_fleet(
                    plan,
                    run_item,
                    slots=runner.slots,
                    fail_fast=a.fail_fast,
                    report=report,
                    tool_call_id=call_id,
                )
        # Bound: the task group re-raises whatever stopped run_fleet.
        return _fleet_result(outcome)  # pyright: ignore[reportPossiblyUnboundVariable]


def _item_result(result: SubagentResult) -> ItemResult:
    """What a fleet item's child gives its dependents and the fleet's result."""
    return ItemResult(
        ok=result.ok, text=result.render_resumable(), status=result.status, brief=result.brief
    )


def _fleet_result(outcome: FleetResult) -> ToolResult:
    """The model reads the fleet's XML; people read its items as a list."""
    shown = {SUMMARY: outcome.summary(), FOR_MODEL: True}
    if not outcome.ok:
        return ToolResult(text=outcome.render(), is_error=True, outcome="error", meta=shown)
    return ToolResult(text=outcome.render(), meta=shown)
