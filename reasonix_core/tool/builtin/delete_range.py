"""delete_range: delete lines start..end (1-based, inclusive) of an observed file.

The publish sequence (observation check, race-free replace, fresh observation) is
:func:`~reasonix_core.tool.builtin._writes.run_structured_edit`; this module only
computes the new text. :func:`delete_lines` is shared with delete_symbol."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import ToolFailure
from reasonix_core.tool.builtin._writes import run_structured_edit
from reasonix_core.tool.builtin.specs import DELETE_RANGE as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool


class DeleteRangeArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


def lines_with_ends(text: str) -> list[str]:
    """The lines as read_file numbers them (split at ``\\n`` only), each with its
    terminator, so joining them gives ``text`` back byte for byte."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def delete_lines(text: str, start: int, end: int, display: str) -> str:
    """``text`` without lines ``start..end`` (1-based, inclusive)."""
    lines = lines_with_ends(text)
    if end < start:
        raise ToolFailure(f"end_line {end} is before start_line {start}")
    if start > len(lines) or end > len(lines):
        raise ToolFailure(
            f"lines {start}-{end} are out of range: {display} has {len(lines)} lines; "
            "read it again to see the current numbering"
        )
    return "".join(lines[: start - 1] + lines[end:])


def span(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


class DeleteRange(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: DeleteRangeArgs = validate_args(DeleteRangeArgs, args)

        def transform(text: str, display: str) -> tuple[str, str]:
            new = delete_lines(text, a.start_line, a.end_line, display)
            return new, f"deleted {span(a.start_line, a.end_line)}"

        return await run_structured_edit(ctx, a.path, transform)
