"""Tools: the protocol, the registry and the built-ins."""

from reasonix_core.tool.args import validate_args
from reasonix_core.tool.base import Tool, ToolContext, ToolFamily, ToolResult
from reasonix_core.tool.registry import (
    ToolRegistry,
    builtin_names,
    builtin_tools,
    canonical_schema,
)

__all__ = [
    "Tool",
    "ToolContext",
    "ToolFamily",
    "ToolRegistry",
    "ToolResult",
    "builtin_names",
    "builtin_tools",
    "canonical_schema",
    "validate_args",
]
