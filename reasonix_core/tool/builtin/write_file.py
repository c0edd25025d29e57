"""write_file: create a file or replace an observed one, whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._editor import created_text, current_observed, publish, read_text
from reasonix_core.tool.builtin._fs import (
    BinaryFile,
    Loaded,
    TextFormat,
    ToolFailure,
    count_lines,
    decode,
    detect_newline,
    encode,
    fs_failure,
    load_current,
    publish_new,
    record_write,
    same_location,
)
from reasonix_core.tool.builtin._writes import (
    WriteTarget,
    file_result,
    locked_write,
    publish_replacement,
)
from reasonix_core.tool.builtin.specs import WRITE_FILE as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool
from reasonix_core.tool.fs_walk import Located
from reasonix_core.tool.ledger import FileLedger
from reasonix_core.tool.text_files import TextFiles


class WriteFileArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    content: str


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _parent_not_directory(display: str) -> ToolFailure:
    return ToolFailure(f"cannot create {display}: a parent path exists and is not a directory")


def write_sync(target: WriteTarget, content: str) -> ToolResult:
    """Write ``content`` to the target's path (resolved again by descriptors)."""
    try:
        located = target.sandbox.locate_for_write(target.text_path)
    except NotADirectoryError:
        raise _parent_not_directory(target.display) from None
    with located:
        same_location(located, target.path, target.display)
        return _write_located(
            located, target.display, content, target.ledger, target.sandbox.roots_never_created()
        )


def _write_located(
    located: Located,
    display: str,
    content: str,
    ledger: FileLedger,
    sandbox_roots: tuple[Path, ...],
) -> ToolResult:
    path = located.path
    loaded = load_current(located, display)
    if loaded is None and path in sandbox_roots:
        # A root that does not exist yet: never create a file in its place
        # (its parent directory lies outside every root).
        raise ToolFailure(f"cannot write {display}: it is a workspace or sandbox root")
    if loaded is None:
        return _create(located, display, content, ledger)
    return _overwrite(located, loaded, display, content, ledger)


def _create(located: Located, display: str, content: str, ledger: FileLedger) -> ToolResult:
    """Write a new file (and its missing parent folders)."""
    data = encode(content, TextFormat(), display)
    if located.missing:
        try:
            located = located.make_parents()
        except (FileExistsError, NotADirectoryError):
            raise _parent_not_directory(display) from None
        with located:
            publish_new(located, data, display)
            record_write(ledger, located, data)
    else:
        publish_new(located, data, display)
        record_write(ledger, located, data)
    return file_result(
        display,
        "created",
        "",
        content,
        lambda _plus, _minus: (
            f"created {display} ({_plural(len(data), 'byte')}, "
            f"{_plural(count_lines(content), 'line')})"
        ),
    )


def _overwrite(
    located: Located, loaded: Loaded, display: str, content: str, ledger: FileLedger
) -> ToolResult:
    """Replace an observed file whole, keeping its line endings and encoding."""
    code = ledger.check(located.path, loaded.version)
    if code is not None:
        raise fs_failure(code, display, "overwriting")
    try:
        old_text, fmt = decode(loaded.data)
    except BinaryFile:
        old_text, fmt = "", TextFormat()
    new_text = content
    notes: list[str] = []
    if fmt.newline == "\r\n" and "\n" in content and "\r\n" not in content:
        new_text = content.replace("\n", "\r\n")
        notes.append("kept CRLF line endings")
    if fmt.encoding != "utf-8" or fmt.bom:
        notes.append(f"kept {fmt.encoding}{' with BOM' if fmt.bom else ''} encoding")
    data = encode(new_text, fmt, display)
    if data == loaded.data:
        return ToolResult(
            text=f"{display} already has exactly this content; nothing was written",
            meta={"path": display, "action": "unchanged", "diff": ""},
        )
    publish_replacement(located, loaded, data, ledger, display, "overwriting")
    extra = f"; {'; '.join(notes)}" if notes else ""
    return file_result(
        display,
        "overwrote",
        old_text,
        new_text,
        lambda plus, minus: (
            f"overwrote {display} ({_plural(len(data), 'byte')}, "
            f"{_plural(count_lines(new_text), 'line')}; was {_plural(count_lines(old_text), 'line')}; "
            f"+{plus} -{minus}{extra})"
        ),
    )


async def write_in_editor(files: TextFiles, target: WriteTarget, content: str) -> ToolResult:
    """:func:`write_sync`'s rules on the editor's text: a new file is created, an
    existing one must be observed as it is now; CRLF line endings are kept."""
    path, display, ledger = target.path, target.display, target.ledger
    old = await read_text(files, path, display)
    if old is None:
        if path in target.sandbox.roots_never_created():
            raise ToolFailure(f"cannot write {display}: it is a workspace or sandbox root")
        await publish(files, path, display, ledger, None, content, "creating")
        return file_result(
            display, "created", "", content, lambda _p, _m: created_text(display, content)
        )
    old = await current_observed(files, path, display, ledger, target.sandbox, "overwriting")
    new_text, extra = content, ""
    if detect_newline(old) == "\r\n" and "\n" in content and "\r\n" not in content:
        new_text, extra = content.replace("\n", "\r\n"), "; kept CRLF line endings"
    if new_text == old:
        return ToolResult(
            text=f"{display} already has exactly this content; nothing was written",
            meta={"path": display, "action": "unchanged", "diff": ""},
        )
    await publish(files, path, display, ledger, old, new_text, "overwriting")
    size = len(new_text.encode("utf-8", errors="surrogatepass"))
    return file_result(
        display,
        "overwrote",
        old,
        new_text,
        lambda plus, minus: (
            f"overwrote {display} ({_plural(size, 'byte')}, "
            f"{_plural(count_lines(new_text), 'line')}; was {_plural(count_lines(old), 'line')}; "
            f"+{plus} -{minus}{extra})"
        ),
    )


class WriteFile(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: WriteFileArgs = validate_args(WriteFileArgs, args)
        return await locked_write(
            ctx,
            a.path,
            lambda target: write_sync(target, a.content),
            lambda files, target: write_in_editor(files, target, a.content),
        )
