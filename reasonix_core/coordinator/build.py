"""The planner, assembled from configuration beside the session's executor.

``[agent] planner_model`` names it; :func:`resolve_planner` runs at start-up,
before anything is sent, so an unresolvable name is a ConfigError (exit 2),
never a silent executor-only run. The planner is built like a read-only
subagent - the same :func:`~reasonix_core.agent.assemble.assemble_agent`, the
same read-only scope (:func:`~reasonix_core.subagent.scope.child_scope`: no
writers, no bash, no delegation, MCP only through a ``use_capability`` front end
that calls read-only targets) - plus ``submit_plan``, with its own stable system
prompt and its own transcript beside the session's (``sessions/planners/``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix_core.agent.assemble import assemble_agent, capability_tool
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.model_call import PriceFn
from reasonix_core.agent.prompt import workspace_context
from reasonix_core.agent.session import SessionHeader, SessionStore, new_session_id
from reasonix_core.config import Config, ResolvedModel, read_api_key, resolve_model
from reasonix_core.coordinator.coordinator import ApproveFn, Coordinator, PlanInbox
from reasonix_core.coordinator.submit_plan import SubmitPlanTool
from reasonix_core.errors import ConfigError
from reasonix_core.permission.gate import Gate
from reasonix_core.provider.base import Provider, StreamIdleTimeout, create_provider
from reasonix_core.subagent.scope import child_scope
from reasonix_core.tool.base import Tool, ToolContext
from reasonix_core.tool.registry import ToolRegistry, builtin_tools

if TYPE_CHECKING:
    from reasonix_core.mcp.host import McpHost

PLANNER_SYSTEM_PROMPT = """\
You are the planner of a coding agent. Another model, the executor, carries out \
your plan in its own session with the full tool set; you only research and plan.

- Research with the read-only tools you have: read the code that matters, search \
for the real touch points. You cannot write, run commands or delegate.
- Keep what you verified (file:line you read) apart from candidate touch points you \
did not confirm; the executor verifies candidates before relying on them.
- When the evidence supports them, add non-goals, risks, acceptance criteria and the \
commands that verify the work.
- Deliver the plan by calling submit_plan, exactly once, then stop. A plan written as \
ordinary text is not delivered and the turn fails.

Each user turn starts with <planner-turn route="..."/>: plan_then_execute and goal \
hand your plan straight to the executor; plan_for_approval shows it to the user \
first; plan_only shows it and executes nothing."""


def resolve_planner(config: Config) -> ResolvedModel | None:
    """The planner model, or None when ``[agent] planner_model`` is unset."""
    ref = config.agent.planner_model.strip()
    if not ref:
        return None
    try:
        return resolve_model(config, ref)
    except ConfigError as exc:
        raise ConfigError(f"[agent] planner_model = {ref!r}: {exc}") from None


def build_coordinator(
    *,
    stack: AsyncExitStack,
    config: Config,
    resolved: ResolvedModel,
    executor: Agent,
    executor_provider: Provider,
    executor_resolved: ResolvedModel,
    tool_context: ToolContext,
    gate: Gate | None,
    mcp: McpHost | None,
    home: Path,
    workspace: Path,
    effort: str,
    price: PriceFn,
    clock: Callable[[], datetime],
    approve: ApproveFn | None = None,
) -> Coordinator:
    """A Coordinator over ``executor`` and a new planner for ``resolved``."""
    if resolved.provider.name == executor_resolved.provider.name:
        provider = executor_provider  # one connection pool per provider
    else:
        provider = _own_provider(stack, config, resolved, home)
    inbox = PlanInbox()
    tools = ToolRegistry([*_research_tools(config, mcp), SubmitPlanTool(inbox.accept)])
    store = _planner_store(home, workspace, resolved, effort, executor, clock())
    stack.callback(store.close)

    def first_turn_context(first: bool, prompt: str) -> str:
        return workspace_context(workspace, clock()) if first else ""

    planner = assemble_agent(
        config=config,
        resolved=resolved,
        provider=provider,
        tools=tools,
        tool_context=tool_context,
        session=store,
        system_prompt=PLANNER_SYSTEM_PROMPT,
        # The executor's effort when the planner's provider accepts it.
        effort=effort if not provider.efforts() or effort in provider.efforts() else "auto",
        max_steps=0,  # the coordinator sets the research bound per round
        gate=gate,
        price=price,
        clock=clock,
        context_suffix=first_turn_context,
        source="planner",
        budget=executor.options.budget,  # the task's budget counts the planner too
    )
    return Coordinator(executor=executor, planner=planner, inbox=inbox, approve=approve)


def _own_provider(
    stack: AsyncExitStack, config: Config, resolved: ResolvedModel, home: Path
) -> Provider:
    """A provider for a planner on another provider than the executor's."""
    provider = create_provider(resolved.provider, read_api_key(resolved.provider, home))
    stack.push_async_callback(provider.aclose)
    if isinstance(provider, StreamIdleTimeout):
        provider.stream_idle_timeout = config.agent.stream_idle_timeout
    return provider


def _planner_store(
    home: Path,
    workspace: Path,
    resolved: ResolvedModel,
    effort: str,
    executor: Agent,
    now: datetime,
) -> SessionStore:
    """The planner's transcript, naming the executor's session it plans for."""
    header = SessionHeader(
        id=new_session_id(now),
        workspace=str(workspace),
        created=now.isoformat(),
        model=resolved.ref,
        effort=effort,
        system_prompt=PLANNER_SYSTEM_PROMPT,
        tools_fingerprint="",
        extra={"planner": {"executor_session_id": executor.session_id}},
    )
    # Beside the sessions' folder, not in it: listing and --continue see only
    # top-level sessions.
    return SessionStore.create(home / "sessions" / "planners", workspace, header)


def _research_tools(config: Config, mcp: McpHost | None) -> tuple[Tool, ...]:
    """The session's tools a read-only child would keep (fresh instances)."""
    tools = [*builtin_tools(config.tools.enabled), capability_tool(mcp, read_only_targets=True)]
    scope = child_scope(tools, read_only=True, can_nest=False, bash_problem=None, allowed=None)
    return scope.tools
