"""The per-session tool registry, and the built-ins it is usually made of.

Schemas are canonicalised when a tool is registered, and the registry's order
is fixed at construction, so the tool list the provider sees is byte-stable for
the whole session.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from reasonix_core.errors import ToolArgumentError
from reasonix_core.jsontext import canonical_json
from reasonix_core.tool.base import Tool, ToolContext, ToolFamily, ToolResult
from reasonix_core.tool_schema import ToolSchema

if TYPE_CHECKING:
    from reasonix_core.tool.builtin.specs import ToolSpec

log = logging.getLogger(__name__)


def _builtin_specs() -> tuple[ToolSpec, ...]:
    # Imported on use: importing the registry does not load the built-in list.
    from reasonix_core.tool.builtin import BUILTIN_TOOLS

    return BUILTIN_TOOLS


def builtin_names() -> list[str]:
    """Names of the built-in tools, in provider-visible order."""
    return [spec.name for spec in _builtin_specs()]


def builtin_tools(enabled: Iterable[str] | None = None) -> list[Tool]:
    """Fresh instances of the built-ins, in the order of ``BUILTIN_TOOLS``.

    ``enabled`` (from ``[tools].enabled``) restricts the set; empty or None
    means all of them. Each is a :class:`LazyTool`: its module is imported by its
    first call.
    """
    specs = _builtin_specs()
    names = [spec.name for spec in specs]
    wanted = set(enabled or ())
    unknown = wanted - set(names)
    if unknown:
        from reasonix_core.errors import ConfigError

        raise ConfigError(
            f"[tools].enabled names unknown tools: {', '.join(sorted(unknown))}; "
            f"built-ins are: {', '.join(names)}"
        )
    return [LazyTool(spec) for spec in specs if not wanted or spec.name in wanted]


class LazyTool:
    """A built-in tool as a session holds it: what the model sees (the spec) at once,
    the tool's class (its module, argument model and helpers) with its first call.

    Start-up: the first request needs every tool's schema, but a run calls few tools;
    importing all of them up front was ~20 ms of every ``reasonix run``.
    """

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        self._tool: Tool | None = None

    # What the model sees is the spec's: read from it, never copied.
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def read_only(self) -> bool:
        return self.spec.read_only

    @property
    def family(self) -> ToolFamily:
        return self.spec.family

    @property
    def parameters(self) -> dict[str, Any]:
        return self.spec.parameters

    def load(self) -> Tool:
        """The tool itself, imported and created on first use."""
        if self._tool is None:
            module, _, cls = self.spec.implementation.partition(":")
            tool: Tool = getattr(importlib.import_module(module), cls)()
            self._tool = tool
            return tool
        return self._tool

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.load().execute(args, ctx)


def canonical_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Normalise a JSON schema: drop ``title`` noise, sort keys recursively."""

    def clean(node: object, in_properties: bool = False) -> object:
        if isinstance(node, dict):
            out: dict[str, object] = {}
            for key in sorted(node):
                # "title" is a schema keyword except where it is a property name.
                if key == "title" and not in_properties:
                    continue
                out[key] = clean(node[key], in_properties=(key == "properties"))
            return out
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    cleaned = clean(schema)
    assert isinstance(cleaned, dict)  # a dict cleans to a dict
    return cleaned


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        schemas: list[ToolSchema] = []
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool
            schemas.append(
                ToolSchema(
                    name=tool.name,
                    description=tool.description,
                    parameters=canonical_schema(tool.parameters),
                )
            )
        self._schemas = tuple(schemas)
        self.fingerprint = canonical_json([s.to_openai() for s in self._schemas])

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def schemas(self) -> tuple[ToolSchema, ...]:
        return self._schemas

    @staticmethod
    def parse_arguments(raw: str) -> dict[str, Any]:
        """Parse the model's argument string; raise ToolArgumentError if unusable."""
        text = raw.strip() or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ToolArgumentError(
                f"arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
                "send a single JSON object matching the tool's schema"
            ) from None
        except RecursionError:
            raise ToolArgumentError(
                "arguments are nested too deeply to parse; "
                "send a single flat JSON object matching the tool's schema"
            ) from None
        except ValueError as exc:  # valid JSON Python will not load (a 5,000-digit integer)
            raise ToolArgumentError(f"arguments cannot be used: {exc}") from None
        if not isinstance(value, dict):
            raise ToolArgumentError(f"arguments must be a JSON object, got {type(value).__name__}")
        return value

    async def call(self, name: str, raw_arguments: str, ctx: ToolContext) -> ToolResult:
        """Run one call. Every failure comes back as a result, never an exception
        (cancellation excepted)."""
        tool = self._tools.get(name)
        if tool is None:
            from reasonix_core.tool.retired import retired_result

            retired = retired_result(name)
            if retired is not None:
                return retired
            return ToolResult.error(
                f"unknown tool {name!r}; available tools: {', '.join(self._tools)}"
            )
        try:
            args = self.parse_arguments(raw_arguments)
            return await tool.execute(args, ctx)
        except ToolArgumentError as exc:
            return ToolResult.error(f"{name}: {exc}")
        except Exception as exc:  # a tool bug must not crash the loop
            return internal_error(name, exc)


def internal_error(tool: str, exc: Exception) -> ToolResult:
    """The result for a call that raised something nobody anticipated: the model
    reads the type and message, the run goes on. The traceback goes to the log at
    INFO (the TUI's log file), not to a headless run's stderr: the error is already
    shown there as the call's result."""
    log.info("tool %s raised", tool, exc_info=exc)
    return ToolResult.error(f"internal error in {tool}: {type(exc).__name__}: {exc}")
