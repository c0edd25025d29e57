"""``use_capability``: one fixed tool in front of every capability that is not a
built-in tool of its own.

The provider-visible tool list must not change within a session (prompt-cache
prefix), yet MCP servers start late, fail, reconnect and change their lists,
and a session's own services (paging a bounded result) need no schema of their
own. So every session has this single tool, always last:

- ``list``: what is available now, source by source;
- ``inspect``: one capability's description and argument schema;
- ``call``: run it, with ``name`` its full name and ``arguments`` its object.

Capabilities come from :class:`CapabilitySource` objects: the session's own
(``session:``, :class:`SessionCapabilities`, always first) and, when servers are
declared, MCP's (``mcp__<server>__<tool>``,
:class:`reasonix_core.mcp.capability.McpCapabilities`). This module owns the
actions, the argument parsing and the read-only front end of subagents; a
source owns its names, its listing and how a call is authorised and run.

Permissions: the loop authorises ``use_capability`` itself as read-only (so
``list`` / ``inspect`` never ask); a capability's ``call`` checks its real target
(the MCP source consults the session's gate), and a session capability only
reads what the session already holds.
"""

from __future__ import annotations

from typing import Any, Protocol

from reasonix_core.errors import ToolArgumentError
from reasonix_core.jsontext import canonical_json
from reasonix_core.tool.base import ToolContext, ToolFamily, ToolResult
from reasonix_core.tool.kept_results import ToolResultPages
from reasonix_core.tool.registry import ToolRegistry, canonical_schema

NAME = "use_capability"

DESCRIPTION = (
    "Capabilities beyond the built-in tools: this session's own (session:tool_result pages "
    "a tool result too long for the conversation) and the tools of the configured MCP "
    'servers (mcp__<server>__<tool>). action "list": what is available now; "inspect": '
    'one capability\'s description and argument schema (pass name); "call": run one (pass '
    "name and arguments, an object matching its schema; a server still starting is "
    "waited for)."
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
            "description": "Full capability name (inspect and call)",
        },
        "arguments": {
            "type": "object",
            "description": "Arguments for call, matching the capability's schema",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}


class CapabilityUnavailable(Exception):
    """A capability that exists but cannot run now; the message says why."""


class Capability(Protocol):
    """One capability, resolved by its source."""

    @property
    def name(self) -> str: ...

    @property
    def read_only(self) -> bool:
        """Declared to change nothing (a subagent's front end calls only these)."""
        ...

    def inspect(self) -> str:
        """Its description and argument schema, as ``inspect`` shows them."""
        ...

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Authorise (when it needs to) and run."""
        ...


class CapabilitySource(Protocol):
    """One namespace of capabilities behind ``use_capability``."""

    def owns(self, name: str) -> bool:
        """Whether ``name`` is in this source's namespace."""
        ...

    async def listing(self) -> list[str]:
        """The lines ``list`` shows for this source."""
        ...

    async def resolve(self, name: str) -> Capability:
        """The capability ``name``; :class:`LookupError` (args[0]: the message)
        when there is none, :class:`CapabilityUnavailable` when it cannot run now."""
        ...


_SUMMARY_CHARS = 160


def summary_line(name: str, read_only: bool, description: str) -> str:
    """One ``list`` line: name, whether it only reads, the description's start."""
    summary = " ".join(description.split())
    if len(summary) > _SUMMARY_CHARS:
        summary = summary[: _SUMMARY_CHARS - 1] + "…"
    flag = "read-only" if read_only else "may write"
    return f"- {name} [{flag}]: {summary or '(no description)'}"


def schema_text(schema: dict[str, Any]) -> str:
    """An argument schema as ``inspect`` shows it (canonical JSON)."""
    return canonical_json(canonical_schema(schema))


class _SessionCapability:
    """A session capability (a plain object with ``call``) as a :class:`Capability`."""

    def __init__(self, capability: ToolResultPages) -> None:
        self.capability = capability
        self.name = capability.name
        self.read_only = capability.read_only

    def inspect(self) -> str:
        return (
            f"{self.name} (this session, read-only)\n{self.capability.description}\n\n"
            f"arguments schema:\n{schema_text(self.capability.parameters)}"
        )

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.capability.call(arguments, ctx)


class SessionCapabilities:
    """The ``session:`` namespace: services of the session itself."""

    PREFIX = "session:"

    def __init__(self) -> None:
        self._capabilities = {c.name: c for c in (ToolResultPages(),)}

    def owns(self, name: str) -> bool:
        return name.startswith(self.PREFIX)

    async def listing(self) -> list[str]:
        lines = ["session (this session's own, always available):"]
        for capability in self._capabilities.values():
            lines.append(summary_line(capability.name, True, capability.description))
        return lines

    async def resolve(self, name: str) -> Capability:
        capability = self._capabilities.get(name)
        if capability is None:
            known = ", ".join(self._capabilities)
            raise LookupError(f"no session capability {name!r} (there is: {known})")
        return _SessionCapability(capability)


class UseCapabilityTool:
    name = NAME
    description = DESCRIPTION
    # The loop only authorises the proxy; `call` checks its real target (see module doc).
    read_only = True
    family = ToolFamily.OTHER
    parameters = PARAMETERS

    def __init__(self, *sources: CapabilitySource, read_only_targets: bool = False) -> None:
        # The session's own capabilities first, then the given ones (MCP).
        self.sources: tuple[CapabilitySource, ...] = (SessionCapabilities(), *sources)
        # A subagent's front end (seed 000 §3.12): only targets declared read-only
        # may be called; the rest are refused before they run.
        self.read_only_targets = read_only_targets

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args.get("action")
        name = args.get("name")
        if action == "list":
            lines: list[str] = []
            for source in self.sources:
                lines.extend(await source.listing())
            return ToolResult(text="\n".join(lines))
        if action not in ("inspect", "call"):
            return ToolResult.error('use_capability: action must be "list", "inspect" or "call"')
        if not isinstance(name, str) or not name.strip():
            return ToolResult.error(
                f'use_capability: action "{action}" needs name '
                "(session:<name> or mcp__<server>__<tool>)"
            )
        name = name.strip()
        try:
            capability = await self._resolve(name)
        except LookupError as exc:
            return ToolResult.error(f"use_capability: {exc.args[0]}")
        except CapabilityUnavailable as exc:
            return ToolResult.error(f"use_capability: {exc}. Nothing was run.")
        if action == "inspect":
            return ToolResult(text=capability.inspect())

        if self.read_only_targets and not capability.read_only:
            return ToolResult.denied(
                f"use_capability: {capability.name} is not declared read-only; "
                "a subagent may call only read-only capabilities. Nothing was run.",
                f"Refused: {capability.name} is not read-only, and a subagent may call only "
                "read-only capabilities.",
            )
        arguments = args.get("arguments", {})
        if isinstance(arguments, str):  # some models send the object as a JSON string
            try:
                arguments = ToolRegistry.parse_arguments(arguments)
            except ToolArgumentError:
                return ToolResult.error("use_capability: arguments must be a JSON object")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return ToolResult.error("use_capability: arguments must be a JSON object")
        return await capability.call(arguments, ctx)

    async def _resolve(self, name: str) -> Capability:
        for source in self.sources:
            if source.owns(name):
                return await source.resolve(name)
        if name.startswith("mcp__"):
            raise LookupError(f"no MCP server is configured for this workspace ({name!r})")
        raise LookupError(
            f"unknown capability {name!r}; names look like session:<name> or "
            'mcp__<server>__<tool> (action "list" shows them)'
        )
