"""read_file: show a window of a text file with line numbers."""

from __future__ import annotations

import codecs
import hashlib
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import SUMMARY, ToolContext, ToolResult
from reasonix_core.tool.builtin._editor import editor_for, existing_text, text_version
from reasonix_core.tool.builtin._fs import (
    BINARY_SNIFF,
    BinaryFile,
    ToolFailure,
    decode,
    guarded,
    open_existing,
    open_regular,
    run_reader,
    same_location,
    services,
    sniff_encoding,
    split_lines,
    suggest_missing,
)
from reasonix_core.tool.builtin.specs import READ_FILE as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool
from reasonix_core.tool.ledger import FS_NOT_FOUND, FileLedger, FileVersion
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.text_files import TextFiles

DEFAULT_LIMIT = 2000
LINE_MAX = 2000
OUTPUT_MAX = 250_000
# Above this size the file is streamed: only the window is kept in memory.
STREAM_THRESHOLD = 8 << 20
_CHUNK = 1 << 20


class ReadFileArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    offset: int | None = Field(default=None, ge=0)
    limit: int | None = Field(default=None, ge=1)


def _binary_failure(display: str, size: int) -> ToolFailure:
    return ToolFailure(
        f"{display} looks like a binary file ({size} bytes, NUL bytes in the first 8 KiB); "
        "read_file only shows text. Inspect it with bash (e.g. `file`, `xxd | head`) if needed"
    )


def render(lines: Iterable[str], start: int, limit: int) -> tuple[list[str], int, int]:
    """Format lines ``start .. start+limit-1`` cat -n style.

    Returns the output lines, the last line number shown and the total line
    count (the iterable is consumed to the end).
    """
    out: list[str] = []
    chars = 0
    last = start - 1
    total = 0
    full = False
    end = start + limit
    for n, line in enumerate(lines, 1):
        total = n
        if n < start or n >= end or full:
            continue
        if len(line) > LINE_MAX:
            line = f"{line[:LINE_MAX]}… [line truncated: {len(line) - LINE_MAX} more chars]"
        text = f"{n:>6}\t{line}"
        if out and chars + len(text) + 1 > OUTPUT_MAX:
            full = True
            continue
        out.append(text)
        chars += len(text) + 1
        last = n
    return out, last, total


class _StreamedLines:
    """Lines of a large file read in chunks; hashes every byte on the way."""

    def __init__(self, fh: BinaryIO, head: bytes, encoding: str, bom: bytes, st: os.stat_result):
        self._fh = fh
        self._head = head
        self._bom = bom
        self._encoding = encoding
        self._st = st
        self.version: FileVersion | None = None

    def __iter__(self) -> Iterator[str]:
        digest = hashlib.sha256(self._head)
        size = len(self._head)
        decoder = codecs.getincrementaldecoder(self._encoding)(errors="replace")
        pending = ""
        buf = self._head[len(self._bom) :]
        final = False
        while True:
            pending += decoder.decode(buf, final=final)
            pieces = pending.split("\n")
            pending = pieces.pop()
            for piece in pieces:
                yield piece[:-1] if piece.endswith("\r") else piece
            if final:
                break
            buf = self._fh.read(_CHUNK)
            digest.update(buf)
            size += len(buf)
            final = not buf
        if pending:
            yield pending[:-1] if pending.endswith("\r") else pending
        self.version = FileVersion(
            sha256=digest.hexdigest(),
            size=size,
            mtime_ns=self._st.st_mtime_ns,
            inode=self._st.st_ino,
        )


def read_window(
    text_path: str,
    path: Path,
    display: str,
    start: int,
    limit: int,
    ledger: FileLedger,
    sandbox: SandboxPolicy,
    stop: threading.Event | None = None,
) -> ToolResult:
    """Read a window of ``text_path`` (checked as ``path`` before the lock).

    The file is opened through the descriptor walk and its forbid_read check,
    so a directory swapped for a symlink after the check cannot redirect it.
    """
    with sandbox.locate_for_read(text_path) as located:
        same_location(located, path, display)
        fd = open_existing(located, display)
    if fd is None:
        raise ToolFailure(
            f"{FS_NOT_FOUND}: {display} does not exist{suggest_missing(path, sandbox)}",
            FS_NOT_FOUND,
        )

    with open_regular(fd, display, "is a directory; use ls to list its contents") as fh:
        window = _read_window_of(fh, display, start, limit)

    if stop is None or not stop.is_set():  # a cancelled read showed nothing
        ledger.observe(path, window.version)
    return _window_result(window, display, start)


@dataclass(frozen=True, slots=True)
class _Window:
    """The rendered lines of a window and what was learnt reading the file."""

    lines: list[str]
    last: int
    total: int
    version: FileVersion
    # The encoding when it is not plain UTF-8 ("utf-16-le with BOM"), else "".
    encoding_note: str


def _read_window_of(fh: BinaryIO, display: str, start: int, limit: int) -> _Window:
    """Decode and render the window: a small file whole, a large one streamed."""
    fst = os.fstat(fh.fileno())
    if fst.st_size <= STREAM_THRESHOLD:
        data = fh.read()
        version = FileVersion.of_bytes(data, fst)
        try:
            text, fmt = decode(data)
        except BinaryFile:
            raise _binary_failure(display, len(data)) from None
        note = fmt.label if fmt.encoding != "utf-8" or fmt.bom else ""
        out, last, total = render(split_lines(text), start, limit)
        return _Window(out, last, total, version, note)
    head = fh.read(BINARY_SNIFF)
    sniffed = sniff_encoding(head)
    if sniffed is None and b"\x00" in head:
        raise _binary_failure(display, fst.st_size)
    encoding, bom = sniffed or ("utf-8", b"")
    note = encoding + (" with BOM" if bom else "") if sniffed is not None else ""
    streamed = _StreamedLines(fh, head, encoding, bom, fst)
    out, last, total = render(streamed, start, limit)
    return _Window(out, last, total, streamed.version or FileVersion.of_bytes(b"", fst), note)


def _window_result(window: _Window, display: str, start: int) -> ToolResult:
    """The window as the model sees it: the lines, or why there are none, and a trailer."""
    out, last, total = window.lines, window.last, window.total
    meta: dict[str, Any] = {"path": display, "lines": total, "first": start, "last": last}
    if window.version.size == 0:
        return ToolResult(text=f"{display} is empty (0 bytes).", meta=meta)
    if total == 0 or (not out and start > total):
        return ToolResult(
            text=(
                f"{display} has {total} line{'s' if total != 1 else ''}; offset={start} is past "
                f"the end. Call read_file with a smaller offset."
            ),
            meta=meta,
        )
    shown = last - start + 1
    meta[SUMMARY] = f"Read {shown} line{'s' if shown != 1 else ''}" + (
        f" of {total}" if shown < total else ""
    )
    trailer: list[str] = []
    if last < total:
        trailer.append(
            f"… {total - last} more line{'s' if total - last != 1 else ''}; "
            f"call read_file with offset={last + 1} to continue"
        )
    if window.encoding_note:
        trailer.append(f"(file encoding: {window.encoding_note})")
    return ToolResult(text="\n".join(out + trailer), meta=meta)


async def read_editor_window(
    files: TextFiles,
    path: Path,
    display: str,
    start: int,
    limit: int,
    ledger: FileLedger,
    sandbox: SandboxPolicy,
) -> ToolResult:
    """The window of the editor's text of ``path`` (an unsaved buffer's if open)."""
    text = await existing_text(files, path, display, sandbox)
    version = text_version(text)
    out, last, total = render(split_lines(text), start, limit)
    ledger.observe(path, version)
    return _window_result(_Window(out, last, total, version, ""), display, start)


class ReadFile(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: ReadFileArgs = validate_args(ReadFileArgs, args)
        sandbox, ledger = services(ctx)
        start = max(1, a.offset or 1)
        limit = a.limit or DEFAULT_LIMIT

        async def body() -> ToolResult:
            path = sandbox.check_read(a.path)
            display = sandbox.display(path)
            files = editor_for(ctx, path, sandbox)
            async with ledger.lock(path):
                if files is not None:
                    return await read_editor_window(
                        files, path, display, start, limit, ledger, sandbox
                    )
                return await run_reader(
                    lambda stop: read_window(
                        a.path, path, display, start, limit, ledger, sandbox, stop
                    )
                )

        return await guarded(body, sandbox)
