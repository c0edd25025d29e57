"""Tools: the protocol, the registry and the built-ins."""

from reasonix_core.tool.base import Tool, ToolContext, ToolResult
from reasonix_core.tool.registry import (
    ToolRegistry,
    builtin_names,
    builtin_tools,
    canonical_schema,
    register_builtin,
    validate_args,
)

__all__ = [
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "builtin_names",
    "builtin_tools",
    "canonical_schema",
    "register_builtin",
    "validate_args",
]
