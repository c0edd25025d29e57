"""multi_edit: several exact replacements in one file, all or nothing."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolFamily, ToolResult
from reasonix_core.tool.builtin._fs import ToolFailure, guarded, run_writer, services
from reasonix_core.tool.builtin.edit_file import EditError, apply_edit, edit_sync

MAX_EDITS = 100


class OneEdit(BaseModel):
    model_config = ARGS_CONFIG

    old_string: str
    new_string: str
    replace_all: bool = False


class MultiEditArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    edits: list[OneEdit] = Field(min_length=1, max_length=MAX_EDITS)


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to edit, relative to the workspace or absolute.",
        },
        "edits": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_EDITS,
            "description": "Replacements applied in order.",
            "items": {
                "type": "object",
                "properties": {
                    "old_string": {
                        "type": "string",
                        "description": "Exact text to replace (as it is after earlier edits).",
                    },
                    "new_string": {"type": "string", "description": "Replacement text."},
                    "replace_all": {
                        "type": "boolean",
                        "description": "Replace every occurrence (default false).",
                    },
                },
                "required": ["old_string", "new_string"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}


class MultiEdit:
    name = "multi_edit"
    description = (
        "Apply several exact string replacements to one file in a single atomic step. Edits "
        "are applied in order, each to the result of the previous ones, with the same rules "
        "as edit_file (exact match, unique unless replace_all, old_string != new_string). "
        "If any edit fails nothing is written and the error names the failing edit index. "
        "Requires having read the file in this session (any read_file window counts) and no "
        "change on disk since (FS_NOT_OBSERVED / FS_STALE_VERSION otherwise). Prefer it over "
        f"several edit_file calls on the same file. At most {MAX_EDITS} edits per call."
    )
    read_only = False
    family = ToolFamily.EDIT
    parameters = PARAMETERS

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: MultiEditArgs = validate_args(MultiEditArgs, args)
        sandbox, ledger = services(ctx)

        async def body() -> ToolResult:
            path = sandbox.check_write(a.path)
            sandbox.check_read(a.path)
            display = sandbox.display(path)

            def transform(text: str) -> tuple[str, str]:
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
                            "all the edits again."
                        ) from None
                    total += count
                n = len(a.edits)
                return text, f"{n} edit{'s' if n != 1 else ''} applied ({total} replacements)"

            async with ledger.lock(path):
                return await run_writer(
                    lambda: edit_sync(a.path, path, display, ledger, sandbox, transform)
                )

        return await guarded(body, sandbox)
