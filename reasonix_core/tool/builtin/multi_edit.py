"""multi_edit: several exact replacements in one file, all or nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import ToolFailure
from reasonix_core.tool.builtin._writes import run_structured_edit
from reasonix_core.tool.builtin.edit_file import EditError, apply_edit
from reasonix_core.tool.builtin.specs import MAX_EDITS, SpecifiedTool
from reasonix_core.tool.builtin.specs import MULTI_EDIT as SPEC


class OneEdit(BaseModel):
    model_config = ARGS_CONFIG

    old_string: str
    new_string: str
    replace_all: bool = False


class MultiEditArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    edits: list[OneEdit] = Field(min_length=1, max_length=MAX_EDITS)


def edits_transform(a: MultiEditArgs) -> Callable[[str, str], tuple[str, str]]:
    """The edits as one transform of the file's text (the tool's, and the approval's
    precheck)."""

    def transform(text: str, display: str) -> tuple[str, str]:
        total = 0
        for i, edit in enumerate(a.edits):
            try:
                text, count, _ = apply_edit(
                    text, edit.old_string, edit.new_string, edit.replace_all, display
                )
            except EditError as exc:
                earlier = "edits[0]" if i == 1 else f"edits[0..{i - 1}]"
                context = f" (line numbers refer to the text after {earlier})" if i else ""
                raise ToolFailure(
                    f"edits[{i}] failed{context}: {exc}\n"
                    f"No changes were written to {display}; fix edits[{i}] and send "
                    "all the edits again.",
                    summary=f"Not changed: edit {i + 1} of {len(a.edits)} did not apply.",
                ) from None
            total += count
        n = len(a.edits)
        return text, f"{n} edit{'s' if n != 1 else ''} applied ({total} replacements)"

    return transform


class MultiEdit(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: MultiEditArgs = validate_args(MultiEditArgs, args)
        return await run_structured_edit(ctx, a.path, edits_transform(a))
