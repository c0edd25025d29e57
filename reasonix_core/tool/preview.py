"""Diff previews of file writes, for approval dialogs.

Computed without touching the file (no lock, no observation): a preview is
only a picture of what the call would do; the tool itself re-checks
everything when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonix_core.tool.base import ToolContext, ToolResult

PREVIEW_TOOLS = frozenset({"write_file", "edit_file", "multi_edit"})
MAX_PREVIEW_BYTES = 2 * 1024 * 1024


def preview_diff(tool: str, args: dict[str, Any], ctx: ToolContext) -> str:
    """A unified diff of what ``tool`` would write, or "" when none can be made."""
    if tool not in PREVIEW_TOOLS or not isinstance(args.get("path"), str):
        return ""
    from reasonix_core.tool.builtin._editor import editor_for
    from reasonix_core.tool.builtin._fs import decode, services, unified_diff
    from reasonix_core.tool.builtin.edit_file import apply_edit

    try:
        sandbox, _ = services(ctx)
        path = sandbox.resolve(args["path"])
        if editor_for(ctx, path, sandbox) is not None:
            return ""  # the disk is not what the editor holds
        display = sandbox.display(path)
        old = ""
        if path.is_file():
            if path.stat().st_size > MAX_PREVIEW_BYTES:
                return ""
            old, _fmt = decode(path.read_bytes())
        if tool == "write_file":
            new = str(args.get("content", ""))
        elif tool == "edit_file":
            new = apply_edit(
                old,
                str(args.get("old_string", "")),
                str(args.get("new_string", "")),
                bool(args.get("replace_all", False)),
                display,
            )[0]
        else:
            new = old
            for edit in args.get("edits") or ():
                new = apply_edit(
                    new,
                    str(edit.get("old_string", "")),
                    str(edit.get("new_string", "")),
                    bool(edit.get("replace_all", False)),
                    display,
                )[0]
        return unified_diff(old, new, display) or ""
    except Exception:  # a preview is best effort; the call itself reports errors
        return ""


def precondition_failure(tool: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
    """The error result of a file write sure to fail (not observed, stale, missing),
    as the tool would give it, or None.

    Checked before the approval dialog, so the user is never asked to approve a
    diff that the tool would then refuse. Only certain failures count; anything
    unclear is left to the tool, which checks everything again when it runs.
    """
    if tool not in PREVIEW_TOOLS or not isinstance(args.get("path"), str):
        return None
    from reasonix_core.tool.builtin._editor import editor_for
    from reasonix_core.tool.builtin._fs import fs_failure, services
    from reasonix_core.tool.ledger import FS_NOT_FOUND, read_version

    try:
        sandbox, ledger = services(ctx)
        path = sandbox.resolve(args["path"])
        if editor_for(ctx, path, sandbox) is not None:
            return None  # the editor holds the file: the tool asks it when it runs
        display = sandbox.display(path)
        current = read_version(path)
    except Exception:
        return None
    if current is None:
        if tool == "write_file" or path.exists():  # creating a file; or not a regular one
            return None
        return fs_failure(FS_NOT_FOUND, display).result()
    code = ledger.check(path, current)
    if code is not None:
        verb = "overwriting" if tool == "write_file" else "editing"
        return fs_failure(code, display, verb).result()
    return _edit_failure(tool, args, path, display)


def _edit_failure(tool: str, args: dict[str, Any], path: Path, display: str) -> ToolResult | None:
    """Why an edit of the (observed, current) file cannot apply: an ``old_string`` not
    in it, or found more than once; in the tool's own words (its transform is run on
    the file's text, nothing is written)."""
    if tool == "write_file":
        return None
    from reasonix_core.tool.builtin._fs import ToolFailure, decode
    from reasonix_core.tool.builtin.edit_file import EditFileArgs, edit_transform
    from reasonix_core.tool.builtin.multi_edit import MultiEditArgs, edits_transform

    try:
        if tool == "edit_file":
            transform = edit_transform(EditFileArgs.model_validate(args))
        else:
            transform = edits_transform(MultiEditArgs.model_validate(args))
        if path.stat().st_size > MAX_PREVIEW_BYTES:
            return None
        text, _fmt = decode(path.read_bytes())
        transform(text, display)
    except ToolFailure as failure:
        return failure.result()
    except Exception:  # bad arguments, a binary file, anything unclear: the tool says it
        return None
    return None
