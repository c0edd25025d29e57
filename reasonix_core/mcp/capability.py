"""``use_capability``: the one stable proxy between the model and every MCP server.

The provider-visible tool list must not change within a session (prompt-cache
prefix), yet MCP servers start late, fail, reconnect and change their lists.
So the model sees a single fixed tool whenever an MCP server is configured:

- ``list``: what is available now (and which servers are still starting);
- ``inspect``: one capability's description and argument schema;
- ``call``: run it, with ``name`` the full ``mcp__<server>__<tool>`` and
  ``arguments`` its arguments object.

Permissions: the loop authorises ``use_capability`` itself as read-only (so
``list`` / ``inspect`` never ask); for ``call`` the proxy consults the
session's :class:`~reasonix_core.permission.gate.PermissionGate` (found in
``ToolContext.gate``) with the target's real name and its
``readOnlyHint``, so ``mcp__github__create_issue`` / ``mcp__github`` rules
allow, ask and deny as written. Declaring a server trusts its tools (seed 000
§3.7): the policy's *fallback* "ask" for an MCP writer is treated as allow,
while explicit deny and ask rules and ``mode = "deny"`` still apply.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from reasonix_core.mcp.connection import McpUnavailable
from reasonix_core.mcp.host import McpHost
from reasonix_core.mcp.status import WAITABLE
from reasonix_core.provider.base import canonical_json
from reasonix_core.tool.base import ToolContext, ToolFamily, ToolResult, current_call_id
from reasonix_core.tool.registry import canonical_schema

NAME = "use_capability"

DESCRIPTION = (
    "Use the tools of the MCP servers configured for this workspace. "
    'action "list": the capabilities available now, one line each (name, summary, '
    "whether it only reads), and servers still starting. "
    'action "inspect": the full description and JSON schema of the arguments of one '
    'capability (pass name). action "call": run a capability (pass name and arguments, '
    "an object matching its schema). Names look like mcp__<server>__<tool>; calling a "
    "capability of a server that is still starting waits for it."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": ["list", "inspect", "call"],
            "description": "list, inspect or call",
        },
        "name": {
            "type": "string",
            "description": "Full capability name, mcp__<server>__<tool> (inspect and call)",
        },
        "arguments": {
            "type": "object",
            "description": "Arguments for call, matching the capability's schema",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}

_SUMMARY_CHARS = 160


class UseCapabilityTool:
    name = NAME
    description = DESCRIPTION
    # The loop only authorises the proxy; `call` checks its real target (see module doc).
    read_only = True
    family = ToolFamily.OTHER
    parameters = PARAMETERS

    def __init__(self, host: McpHost, *, read_only_targets: bool = False) -> None:
        self.host = host
        # A subagent's front end (seed 000 §3.12): only targets the server
        # declares read-only may be called; the rest are refused before they run.
        self.read_only_targets = read_only_targets
        self._ids = itertools.count(1)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args.get("action")
        name = args.get("name")
        if action == "list":
            # Servers start beside the first request; the listing is what the model
            # learns the names from, so it waits for those still starting (each
            # bounded by its start-up timeout) instead of showing them half-known.
            await self.host.wait_ready()
            return ToolResult(text=self._list())
        if action not in ("inspect", "call"):
            return ToolResult.error('use_capability: action must be "list", "inspect" or "call"')
        if not isinstance(name, str) or not name.strip():
            return ToolResult.error(
                f'use_capability: action "{action}" needs name (mcp__<server>__<tool>)'
            )
        name = name.strip()
        try:
            tool = await self.host.resolve_tool(name)
        except LookupError as exc:
            return ToolResult.error(f"use_capability: {exc.args[0]}")
        except McpUnavailable as exc:
            return ToolResult.error(f"use_capability: {exc}. Nothing was run.")
        if action == "inspect":
            info = tool.info
            text = (
                f"{info.full_name} (MCP server {tool.connection.config.name}, "
                f"{'read-only' if info.read_only else 'may write'}"
                f"{', destructive' if info.destructive else ''})\n"
                f"{info.description or '(no description)'}\n\narguments schema:\n"
                f"{canonical_json(canonical_schema(info.input_schema))}"
            )
            return ToolResult(text=text)

        if self.read_only_targets and not tool.read_only:
            return ToolResult(
                text=f"use_capability: {tool.name} is not declared read-only by its server; "
                "a subagent may call only read-only MCP tools. Nothing was run.",
                is_error=True,
                outcome="denied",
            )
        arguments = args.get("arguments", {})
        if isinstance(arguments, str):  # some models send the object as a JSON string
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                return ToolResult.error("use_capability: arguments must be a JSON object")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return ToolResult.error("use_capability: arguments must be a JSON object")

        # A tool its server calls destructive is judged as a writer (plan mode blocks
        # it) even when it also claims to be read-only.
        changes_nothing = tool.read_only and not tool.info.destructive
        denied = await self._authorize(ctx, tool.name, changes_nothing, arguments)
        if denied is not None:
            return denied
        gate = self.host.gate
        if gate is None:
            return await tool.execute(arguments, ctx)
        async with gate.hold(tool.read_only):
            return await tool.execute(arguments, ctx)

    async def _authorize(
        self, ctx: ToolContext, name: str, read_only: bool, arguments: dict[str, Any]
    ) -> ToolResult | None:
        gate = ctx.gate
        if gate is None:
            return None
        from reasonix_core.permission.policy import Verdict

        decision = gate.policy.decide(name, read_only, arguments)
        if decision.verdict is Verdict.ASK and decision.rule is None:
            return None  # fallback only: a declared server is trusted (seed 000 §3.7)
        auth = await gate.authorize(
            tool=name,
            read_only=read_only,
            args=arguments,
            call_id=current_call_id.get() or f"{NAME}-{next(self._ids)}",
            summary=f"{name} (MCP, via {NAME})",
        )
        if auth.allowed:
            return None
        return ToolResult(text=auth.message, is_error=True, outcome="denied")

    def _list(self) -> str:
        lines: list[str] = []
        for connection in self.host.connections:
            status = connection.status
            label = f"server {status.name}"
            if status.phase == "ready":
                tools = connection.catalog.tools
                lines.append(f"{label} (ready, {len(tools)} tools):")
                for info in tools:
                    summary = " ".join(info.description.split())
                    if len(summary) > _SUMMARY_CHARS:
                        summary = summary[: _SUMMARY_CHARS - 1] + "…"
                    flag = "read-only" if info.read_only else "may write"
                    lines.append(f"- {info.full_name} [{flag}]: {summary or '(no description)'}")
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
            return "No MCP capabilities are configured."
        return "\n".join(lines)
