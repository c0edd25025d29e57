"""grep: regular-expression search over a file or a tree."""

from __future__ import annotations

import os
import re
import stat as stat_mod
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolFamily, ToolResult
from reasonix_core.tool.builtin._fs import (
    BinaryFile,
    ToolFailure,
    Walker,
    decode,
    guarded,
    read_filter,
    run_reader,
    services,
    split_lines,
    suggest_missing,
)
from reasonix_core.tool.builtin.specs import GREP as SPEC
from reasonix_core.tool.builtin.specs import MAX_LINE_CHARS, MAX_MATCHES, MAX_OUTPUT_BYTES
from reasonix_core.tool.ignore import GlobPattern, expand_braces
from reasonix_core.tool.ledger import FS_NOT_FOUND
from reasonix_core.tool.sandbox import SandboxPolicy

MAX_FILE_BYTES = 16 << 20
TIME_BUDGET_SECONDS = 30.0


class GrepArgs(BaseModel):
    model_config = ARGS_CONFIG

    pattern: str = Field(min_length=1, max_length=10_000)
    path: str | None = Field(default=None, min_length=1)
    glob: str | None = Field(default=None, min_length=1, max_length=4096)
    case_insensitive: bool = False


class _FileFilter:
    """The ``glob`` argument: basename match without ``/``, else relative path."""

    def __init__(self, pattern: str) -> None:
        self.patterns = [GlobPattern(p) for p in expand_braces(pattern)]
        self.mentions_hidden = any(p.mentions_hidden for p in self.patterns)

    def accepts(self, parts: tuple[str, ...]) -> bool:
        for p in self.patterns:
            if len(p.segments) == 1 and p.segments[0] != "**":
                if p.match(parts[-1:]):
                    return True
            elif p.match(parts):
                return True
        return False


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


class _Search:
    def __init__(self, regex: re.Pattern[str], prefilter: bool, sandbox: SandboxPolicy) -> None:
        self.regex = regex
        self.prefilter = prefilter
        self.sandbox = sandbox
        self.out: list[str] = []
        self.bytes = 0
        self.matches = 0
        self.files_searched = 0
        self.files_matched = 0
        self.skipped_binary = 0
        self.skipped_large = 0
        self.full = False

    def search_file(self, path: Path) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return
        try:
            # The walk listed a name; what matters is the file actually opened
            # (a directory on the way may have been swapped for a link since).
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode) or st.st_size == 0:
                return
            if self.sandbox.opened_is_hidden(fd):
                return
            if st.st_size > MAX_FILE_BYTES:
                self.skipped_large += 1
                return
            data = _read_all(fd)
        except OSError:
            return
        finally:
            os.close(fd)
        try:
            text, _ = decode(data)
        except BinaryFile:
            self.skipped_binary += 1
            return
        self.files_searched += 1
        if "\r\n" in text:
            text = text.replace("\r\n", "\n")
        if self.prefilter and self.regex.search(text) is None:
            return
        display = self.sandbox.display(path)
        hit = False
        for n, line in enumerate(split_lines(text), 1):
            if self.regex.search(line) is None:
                continue
            hit = True
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f"… [{len(line) - MAX_LINE_CHARS} more chars]"
            entry = f"{display}:{n}:{line}"
            size = len(entry.encode("utf-8", "replace")) + 1
            if self.matches >= MAX_MATCHES or self.bytes + size > MAX_OUTPUT_BYTES:
                self.full = True
                break
            self.out.append(entry)
            self.bytes += size
            self.matches += 1
        if hit:
            self.files_matched += 1


def grep_sync(
    target: Path,
    display: str,
    regex: re.Pattern[str],
    prefilter: bool,
    file_filter: _FileFilter | None,
    sandbox: SandboxPolicy,
    stop: threading.Event,
    hide: Callable[[Path], bool] | None = None,
) -> ToolResult:
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise ToolFailure(
            f"{FS_NOT_FOUND}: {display} does not exist{suggest_missing(target, sandbox)}",
            FS_NOT_FOUND,
        ) from None
    search = _Search(regex, prefilter, sandbox)
    timed_out = False
    walker: Walker | None = None
    if not stat_mod.S_ISDIR(st.st_mode):
        search.search_file(target)
        if search.skipped_binary:
            return ToolResult(text=f"{display} is a binary file; grep only searches text")
    else:
        deadline = time.monotonic() + TIME_BUDGET_SECONDS
        walker = Walker(
            root=target,
            sandbox=sandbox,
            include_hidden=file_filter.mentions_hidden if file_filter else False,
            hide=hide,
            stop=stop,
            time_budget=TIME_BUDGET_SECONDS,
        )
        for entry in walker:
            if entry.is_dir:
                continue
            if entry.is_symlink and not os.path.isfile(entry.path):
                continue
            if file_filter is not None and not file_filter.accepts(entry.parts):
                continue
            search.search_file(entry.path)
            if search.full:
                break
            if time.monotonic() > deadline:
                timed_out = True
                break
        timed_out = timed_out or walker.truncated

    notes: list[str] = []
    if search.full:
        notes.append(
            f"… results capped at {MAX_MATCHES} matches / {MAX_OUTPUT_BYTES // 1024} KiB; "
            "narrow the pattern, path or glob to see the rest"
        )
    if timed_out:
        notes.append(
            f"… search stopped early (time or size budget, {TIME_BUDGET_SECONDS:.0f} s); "
            "results are incomplete - narrow the path or glob"
        )
    skipped = []
    if search.skipped_binary:
        skipped.append(f"{search.skipped_binary} binary")
    if search.skipped_large:
        skipped.append(f"{search.skipped_large} larger than {MAX_FILE_BYTES >> 20} MiB")
    meta = {
        "matches": search.matches,
        "files_searched": search.files_searched,
        "capped": search.full,
    }
    if not search.out:
        text = (
            f"no matches for /{regex.pattern}/ in {display} "
            f"({search.files_searched} file{'s' if search.files_searched != 1 else ''} searched"
        )
        if skipped:
            text += "; skipped " + ", ".join(skipped) + " files"
        text += ")"
        if walker is not None and walker.skipped_ignored:
            text += f"; {walker.skipped_ignored} gitignored entries were not searched"
        return ToolResult(text="\n".join([text, *notes]), meta=meta)
    if skipped:
        notes.append("(skipped " + ", ".join(skipped) + " files)")
    return ToolResult(text="\n".join(search.out + notes), meta=meta)


class Grep:
    name: ClassVar[str] = SPEC.name
    description: ClassVar[str] = SPEC.description
    read_only: ClassVar[bool] = SPEC.read_only
    family: ClassVar[ToolFamily] = SPEC.family
    parameters: ClassVar[dict[str, Any]] = SPEC.parameters

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: GrepArgs = validate_args(GrepArgs, args)
        sandbox, _ = services(ctx)
        flags = re.IGNORECASE if a.case_insensitive else 0
        try:
            # MULTILINE: the same regex also serves as a whole-file prefilter.
            regex = re.compile(a.pattern, flags | re.MULTILINE)
        except (re.error, RecursionError, OverflowError, ValueError) as exc:
            where = (
                f" at position {exc.pos}"
                if isinstance(exc, re.error) and exc.pos is not None
                else ""
            )
            msg = exc.msg if isinstance(exc, re.error) else str(exc)
            return ToolResult.error(
                f"invalid regular expression {a.pattern!r}: {msg}{where} "
                "(Python re syntax; escape literal characters such as ( [ . * with a backslash)",
                code="INVALID_REGEX",
            )
        # The whole-text prefilter is sound unless the pattern anchors on \A / \Z.
        prefilter = not any(esc in a.pattern for esc in ("\\A", "\\Z", "\\z"))
        file_filter = _FileFilter(a.glob) if a.glob else None
        hide = read_filter(ctx, self.name)

        async def body() -> ToolResult:
            target = sandbox.check_read(a.path or ".")
            display = sandbox.display(target)
            return await run_reader(
                lambda stop: grep_sync(
                    target,
                    display,
                    regex,
                    prefilter,
                    file_filter,
                    sandbox,
                    stop,
                    hide,
                )
            )

        return await guarded(body, sandbox)
