"""ls: list a directory, optionally recursively."""

from __future__ import annotations

import os
import stat as stat_mod
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import (
    Entry,
    ToolFailure,
    Walker,
    WalkFilter,
    guarded,
    read_filter,
    run_reader,
    services,
    suggest_missing,
)
from reasonix_core.tool.builtin.specs import LS as SPEC
from reasonix_core.tool.builtin.specs import MAX_ENTRIES, SpecifiedTool
from reasonix_core.tool.ledger import FS_NOT_FOUND
from reasonix_core.tool.sandbox import SandboxPolicy

TIME_BUDGET_SECONDS = 30.0


class LsArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(default=".", min_length=1)
    recursive: bool = False


def _describe(entry: Entry) -> str:
    """One line for ``entry``, looked up through its directory's descriptor."""
    rel = entry.rel
    if entry.is_dir:
        return rel + "/"
    if entry.is_symlink:
        try:
            target = os.readlink(entry.name, dir_fd=entry.dir_fd)
        except OSError:
            target = "?"
        suffix = "/" if os.path.isdir(entry.path) else ""
        return f"{rel}{suffix} -> {target}"
    try:
        size = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False).st_size
    except OSError:
        return rel
    return f"{rel} ({size} bytes)"


def list_sync(
    path: Path,
    display: str,
    recursive: bool,
    sandbox: SandboxPolicy,
    stop: threading.Event,
    hide: WalkFilter | None = None,
) -> ToolResult:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ToolFailure(
            f"{FS_NOT_FOUND}: {display} does not exist{suggest_missing(path, sandbox)}",
            FS_NOT_FOUND,
        ) from None
    if not stat_mod.S_ISDIR(st.st_mode):
        return ToolResult(
            text=f"{display} is a file ({st.st_size} bytes), not a directory; use read_file "
            "to read it",
            meta={"path": display, "entries": 1},
        )
    walker = Walker(
        root=path,
        sandbox=sandbox,
        gitignore=recursive,
        max_depth=None if recursive else 1,
        hide=hide,
        stop=stop,
        time_budget=TIME_BUDGET_SECONDS,
    )
    lines: list[str] = []
    capped = False
    for entry in walker:
        if len(lines) >= MAX_ENTRIES:
            capped = True
            break
        lines.append(_describe(entry))
    notes: list[str] = []
    if capped:
        notes.append(
            f"… listing capped at {MAX_ENTRIES} entries; list a subdirectory, or use glob "
            "to find specific files"
        )
    if walker.truncated and not capped:
        notes.append(walker.truncated_note())
    skipped = walker.skipped_note()
    if skipped and not capped:
        notes.append(f"(not shown: {skipped})")
    if walker.unreadable:
        notes.append(
            f"({walker.unreadable} director{'y' if walker.unreadable == 1 else 'ies'} could not be read)"
        )
    if not lines:
        body = f"{display} is empty" + (" (apart from entries not shown)" if skipped else "")
        return ToolResult(
            text="\n".join([body, *notes]),
            meta={"path": display, "entries": 0},
        )
    return ToolResult(
        text="\n".join(lines + notes),
        meta={"path": display, "entries": len(lines), "capped": capped},
    )


class Ls(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: LsArgs = validate_args(LsArgs, args)
        sandbox, _ = services(ctx)

        async def body() -> ToolResult:
            path = sandbox.check_read(a.path)
            display = sandbox.display(path)
            hide = read_filter(ctx, self.name)
            return await run_reader(
                lambda stop: list_sync(path, display, a.recursive, sandbox, stop, hide)
            )

        return await guarded(body, sandbox)
