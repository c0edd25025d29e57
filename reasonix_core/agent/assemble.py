"""The one construction of an Agent from configuration.

Both the session's agent (``session/build.py``) and every subagent
(``subagent/runner.py``) are assembled here, so a child is built exactly like
its session: the same retry policy from ``[agent]``, the same output budget and
context window for its model, the same context manager. A test lists the
modules that may call :func:`assemble_agent` (and that only this one constructs
an :class:`Agent`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from reasonix_core.agent.budget import BudgetMeter
from reasonix_core.agent.context import ContextManager
from reasonix_core.agent.loop import Agent, AgentOptions
from reasonix_core.agent.model_call import PriceFn
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.agent.session import SessionStore
from reasonix_core.agent.snapshots import TurnSnapshots
from reasonix_core.config import Config, ResolvedModel
from reasonix_core.messages import Message
from reasonix_core.permission.gate import Gate
from reasonix_core.provider.base import Provider
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.capability import UseCapabilityTool
from reasonix_core.tool.registry import ToolRegistry

if TYPE_CHECKING:
    from reasonix_core.agent.vision import VisionFallback
    from reasonix_core.mcp.host import McpHost


def assemble_agent(
    *,
    config: Config,
    resolved: ResolvedModel,
    provider: Provider,
    tools: ToolRegistry,
    tool_context: ToolContext,
    session: SessionStore,
    system_prompt: str,
    effort: str,
    max_steps: int,
    gate: Gate | None,
    price: PriceFn,
    clock: Callable[[], datetime],
    history: Sequence[Message] = (),
    context_suffix: Callable[[bool, str], str] | None = None,
    checkpoints: bool = True,
    source: str = "executor",
    agent_path: tuple[str, ...] = (),
    budget: BudgetMeter | None = None,
    snapshots: TurnSnapshots | None = None,
    vision: VisionFallback | None = None,
) -> Agent:
    """An Agent for ``resolved`` over ``provider``; ``checkpoints``: whether its
    context manager writes compaction checkpoints beside ``session``;
    ``snapshots``: the workspace snapshots around its turns (the session's own)."""
    agent_cfg = config.agent
    options = AgentOptions(
        effort=effort,
        max_steps=max_steps,
        max_output_tokens=resolved.provider.max_output_tokens_for(resolved.model),
        source=source,
        agent_path=agent_path,
        budget=budget,
        vision=vision,
    )
    return Agent(
        provider=provider,
        model=resolved.model,
        tools=tools,
        tool_context=tool_context,
        session=session,
        system_prompt=system_prompt,
        history=history,
        gate=gate,
        retry=RetryPolicy(
            attempts=agent_cfg.retry_attempts,
            base_delay=agent_cfg.retry_base_delay,
            max_delay=agent_cfg.retry_max_delay,
        ),
        options=options,
        price=price,
        clock=clock,
        context_suffix=context_suffix,
        context=ContextManager(
            window=resolved.provider.context_window_for(resolved.model),
            ratio=agent_cfg.compact_ratio,
            store=session if checkpoints else None,
        ),
        checkpoints=snapshots,
    )


def capability_tool(mcp: McpHost | None, *, read_only_targets: bool = False) -> UseCapabilityTool:
    """``use_capability`` for one agent: the session's own capabilities, and the MCP
    host's when servers are declared. Every agent has it, always last, so neither a
    late MCP server nor the lack of one ever changes the tool list
    (docs/MCP.md); ``read_only_targets``: a subagent's or the planner's front end,
    which calls read-only targets only."""
    if mcp is None or not getattr(mcp, "configured", False):
        return UseCapabilityTool(read_only_targets=read_only_targets)
    # Imported only when a server is declared: keeps the MCP package off `reasonix run`.
    from reasonix_core.mcp.capability import McpCapabilities

    return UseCapabilityTool(McpCapabilities(mcp), read_only_targets=read_only_targets)
