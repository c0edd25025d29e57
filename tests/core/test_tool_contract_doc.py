"""docs/TOOL_CONTRACT.md and the built-in registry must not drift."""

from __future__ import annotations

import re
from pathlib import Path

from reasonix_core.tool import ToolRegistry, builtin_names, builtin_tools
from reasonix_core.tool.capability import UseCapabilityTool
from tests.core.tool_helpers import FILE_TOOLS

DOC = Path(__file__).resolve().parents[2] / "docs" / "TOOL_CONTRACT.md"


def sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## +(\S+)\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_every_builtin_is_documented_with_flag_and_arguments():
    docs = sections()
    problems = []
    # use_capability is every agent's too, built per agent (not in BUILTIN_TOOLS).
    for tool in [*builtin_tools(), UseCapabilityTool()]:
        body = docs.get(tool.name)
        if body is None:
            problems.append(f"{tool.name}: no '## {tool.name}' section")
            continue
        flag = re.search(r"\*\*Read-only:\*\*\s*(yes|no)", body)
        if flag is None or (flag.group(1) == "yes") != tool.read_only:
            problems.append(f"{tool.name}: read-only flag differs (registry: {tool.read_only})")
        for arg in tool.parameters.get("properties", {}):
            if f"`{arg}`" not in body:
                problems.append(f"{tool.name}: argument `{arg}` is not documented")
    assert problems == []


def test_no_documented_tool_is_missing_from_the_registry():
    names = {*builtin_names(), UseCapabilityTool.name}
    documented = {name for name in sections() if re.fullmatch(r"[a-z][a-z0-9_]*", name)}
    assert documented - names == set()


def test_registry_order_and_schema_bytes_are_stable():
    first = ToolRegistry(builtin_tools())
    second = ToolRegistry(builtin_tools())
    assert first.names == second.names
    assert first.fingerprint == second.fingerprint
    assert first.names[: len(FILE_TOOLS)] == FILE_TOOLS
    for schema in first.schemas():
        assert schema.parameters.get("type") == "object"
        assert "title" not in schema.parameters
