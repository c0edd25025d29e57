"""MCP's capabilities behind ``use_capability``
(:mod:`reasonix_core.tool.capability`, which owns the actions).

Names are ``mcp__<server>__<tool>``. ``list`` waits for servers still starting
(each bounded by its start-up timeout) and shows each server's tools; ``call``
of a server still starting waits for it.

Permissions: for ``call`` the source consults the session's
:class:`~reasonix_core.permission.gate.PermissionGate` (found in
``ToolContext.gate``) with the target's real name and its ``readOnlyHint``, so
``mcp__github__create_issue`` / ``mcp__github`` rules allow, ask and deny as
written. Declaring a server trusts its tools (seed 000 §3.7): the policy's
*fallback* "ask" for an MCP writer is treated as allow, while explicit deny and
ask rules and ``mode = "deny"`` still apply.
"""

from __future__ import annotations

import itertools
from typing import Any

from reasonix_core.mcp.connection import McpUnavailable
from reasonix_core.mcp.host import McpHost
from reasonix_core.mcp.status import WAITABLE
from reasonix_core.mcp.tools import McpTool
from reasonix_core.tool.base import ToolContext, ToolResult, current_call_id
from reasonix_core.tool.call_gate import target_hook
from reasonix_core.tool.capability import (
    NAME,
    CapabilityUnavailable,
    schema_text,
    summary_line,
)


class McpCapabilities:
    """The ``mcp__`` namespace: the tools of the session's MCP host."""

    PREFIX = "mcp__"

    def __init__(self, host: McpHost) -> None:
        self.host = host
        self._ids = itertools.count(1)

    def owns(self, name: str) -> bool:
        return name.startswith(self.PREFIX)

    async def resolve(self, name: str) -> _McpCapability:
        try:
            tool = await self.host.resolve_tool(name)
        except McpUnavailable as exc:
            raise CapabilityUnavailable(str(exc)) from None
        return _McpCapability(self, tool)

    async def listing(self) -> list[str]:
        # Servers start beside the first request; the listing is what the model
        # learns the names from, so it waits for those still starting (each
        # bounded by its start-up timeout) instead of showing them half-known.
        await self.host.wait_ready()
        lines: list[str] = []
        for connection in self.host.connections:
            status = connection.status
            label = f"server {status.name}"
            if status.phase == "ready":
                tools = connection.catalog.tools
                lines.append(f"{label} (ready, {len(tools)} tools):")
                for info in tools:
                    lines.append(summary_line(info.full_name, info.read_only, info.description))
            elif status.phase in WAITABLE:
                known = len(connection.catalog.tools)
                extra = f"; {known} tools when it was last ready" if known else ""
                lines.append(
                    f"{label} ({status.phase}{extra}): not ready yet; calling one of its "
                    "capabilities by name waits for it"
                )
            elif status.phase == "disabled":
                continue
            else:
                why = f": {status.reason}" if status.reason else ""
                lines.append(f"{label} ({status.phase}{why}); its capabilities are unavailable")
        for problem in self.host.problems:
            lines.append(
                f"server {problem.name.strip(chr(39))} (invalid configuration: {problem.message}); unavailable"
            )
        if not lines:
            return ["No MCP capabilities are configured."]
        return lines

    async def authorize(
        self, ctx: ToolContext, name: str, read_only: bool, arguments: dict[str, Any]
    ) -> ToolResult | None:
        gate = ctx.gate
        if gate is None:
            return None
        from reasonix_core.permission.policy import Verdict

        # A PreToolUse hook's allow / ask about this tool (docs/HOOKS.md).
        hook = target_hook.get()
        decision = gate.policy.decide(name, read_only, arguments)
        fallback = decision.verdict is Verdict.ASK and decision.rule is None
        if fallback and (hook is None or hook[0] != "ask"):
            return None  # fallback only: a declared server is trusted (seed 000 §3.7)
        auth = await gate.authorize(
            tool=name,
            read_only=read_only,
            args=arguments,
            call_id=current_call_id.get() or f"{NAME}-{next(self._ids)}",
            summary=f"{name} (MCP, via {NAME})",
            hook=hook,
        )
        if auth.allowed:
            return None
        return ToolResult.denied(auth.message, auth.summary)


class _McpCapability:
    def __init__(self, source: McpCapabilities, tool: McpTool) -> None:
        self.source = source
        self.tool = tool
        self.name = tool.name
        self.read_only = tool.read_only

    def inspect(self) -> str:
        info = self.tool.info
        return (
            f"{info.full_name} (MCP server {self.tool.connection.config.name}, "
            f"{'read-only' if info.read_only else 'may write'}"
            f"{', destructive' if info.destructive else ''})\n"
            f"{info.description or '(no description)'}\n\narguments schema:\n"
            f"{schema_text(info.input_schema)}"
        )

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tool = self.tool
        # A tool its server calls destructive is judged as a writer (plan mode blocks
        # it) even when it also claims to be read-only.
        changes_nothing = tool.read_only and not tool.info.destructive
        denied = await self.source.authorize(ctx, tool.name, changes_nothing, arguments)
        if denied is not None:
            return denied
        gate = self.source.host.gate
        if gate is None:
            return await tool.execute(arguments, ctx)
        async with gate.hold(tool.read_only):
            return await tool.execute(arguments, ctx)
