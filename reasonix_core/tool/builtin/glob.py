"""glob: find files by path pattern, newest first."""

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
    ToolFailure,
    Walker,
    WalkFilter,
    displayer,
    guarded,
    read_filter,
    run_reader,
    services,
    suggest_missing,
)
from reasonix_core.tool.builtin.specs import GLOB as SPEC
from reasonix_core.tool.builtin.specs import MAX_RESULTS, SpecifiedTool
from reasonix_core.tool.ignore import GlobPattern, expand_braces, has_magic, names_matching
from reasonix_core.tool.ledger import FS_NOT_FOUND
from reasonix_core.tool.sandbox import PathDenied, SandboxPolicy

MAX_SCAN_MATCHES = 50_000
TIME_BUDGET_SECONDS = 30.0


class GlobArgs(BaseModel):
    model_config = ARGS_CONFIG

    pattern: str = Field(min_length=1, max_length=4096)
    path: str | None = Field(default=None, min_length=1)


def _split(pattern: str, base: Path) -> tuple[Path, str]:
    """Move the leading literal segments of ``pattern`` onto ``base``."""
    expanded = os.path.expanduser(pattern)
    if os.path.isabs(expanded):
        start, rest = Path("/"), expanded.lstrip("/")
    else:
        start, rest = base, expanded
    segs = [s for s in rest.split("/") if s not in ("", ".")]
    prefix: list[str] = []
    while segs and not has_magic(segs[0]):
        prefix.append(segs.pop(0))
    return start.joinpath(*prefix), "/".join(segs)


def _mtime(path: Path | str, dir_fd: int | None = None) -> int:
    """Modification time for the newest-first order (0 when it cannot be had);
    a walked file is looked up through its directory's descriptor."""
    try:
        return os.stat(path, dir_fd=dir_fd).st_mtime_ns
    except OSError:
        return 0


def glob_sync(
    base: Path,
    base_display: str,
    pattern: str,
    sandbox: SandboxPolicy,
    stop: threading.Event,
    explicit_base: bool = False,
    hide: WalkFilter | None = None,
) -> ToolResult:
    if explicit_base and not os.path.isdir(base):
        if not os.path.exists(base):
            raise ToolFailure(
                f"{FS_NOT_FOUND}: {base_display} does not exist{suggest_missing(base, sandbox)}",
                FS_NOT_FOUND,
            )
        raise ToolFailure(f"{base_display} is not a directory; pass a directory as path")
    groups: dict[Path, list[GlobPattern]] = {}
    found: dict[str, int] = {}  # physical path -> modification time
    for expansion in expand_braces(pattern):
        start, rest = _split(expansion, base)
        try:
            root = sandbox.check_read(start)
        except PathDenied:
            continue
        if hide is not None and (hide.denied(str(start), None) or hide.denied(str(root), None)):
            continue  # a brace alternative naming a denied path directly
        if not rest:
            # No wildcard at all: the path itself, if it is a file.
            try:
                if stat_mod.S_ISREG(os.stat(root).st_mode):
                    found[str(root)] = _mtime(root)
            except OSError:
                pass
            continue
        groups.setdefault(root, []).append(GlobPattern(rest))

    scanned_capped = False
    walk_note = ""
    for root, patterns in groups.items():
        if not os.path.isdir(root):
            continue
        walker = Walker(
            root=root,
            sandbox=sandbox,
            include_hidden=any(p.mentions_hidden for p in patterns),
            descend=lambda parts, ps=patterns: any(p.could_descend(parts) for p in ps),
            want_name=names_matching(patterns),
            hide=hide,
            stop=stop,
            time_budget=TIME_BUDGET_SECONDS,
        )
        for entry in walker:
            if entry.is_dir:
                continue
            if entry.is_symlink and not os.path.isfile(entry.path):
                continue
            if any(p.match(entry.parts) for p in patterns):
                found[entry.text] = _mtime(entry.name, entry.dir_fd)
                if len(found) >= MAX_SCAN_MATCHES:
                    scanned_capped = True
                    break
        walk_note = walk_note or walker.truncated_note()
        if scanned_capped:
            break

    if not found:
        hint = ""
        if "/" not in pattern and "**" not in pattern:
            hint = (
                f"; patterns match paths relative to the search directory, so {pattern!r} "
                f"only looks at its top level - use '**/{pattern}' to search subdirectories"
            )
        return ToolResult(
            text=f"no files match {pattern!r} under {base_display}{hint}"
            + (f"\n{walk_note}" if walk_note else ""),
            meta={"matches": 0},
        )
    ordered = sorted(found, key=lambda text: (-found[text], text))
    show = displayer(sandbox)
    shown = [show(text) for text in ordered[:MAX_RESULTS]]
    notes: list[str] = []
    if len(ordered) > MAX_RESULTS or scanned_capped:
        more = f"{len(ordered) - MAX_RESULTS}" + ("+" if scanned_capped else "")
        notes.append(
            f"… {more} more matches not shown (showing the {MAX_RESULTS} most recently "
            "modified); narrow the pattern or the path"
        )
    if walk_note:
        notes.append(walk_note)
    return ToolResult(
        text="\n".join(shown + notes),
        meta={"matches": len(ordered), "capped": len(ordered) > MAX_RESULTS or scanned_capped},
    )


class Glob(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: GlobArgs = validate_args(GlobArgs, args)
        sandbox, _ = services(ctx)

        async def body() -> ToolResult:
            base = sandbox.check_read(a.path or ".")
            display = sandbox.display(base)
            hide = read_filter(ctx, self.name)
            return await run_reader(
                lambda stop: glob_sync(
                    base, display, a.pattern, sandbox, stop, a.path is not None, hide
                )
            )

        return await guarded(body, sandbox)
