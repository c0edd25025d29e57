"""The file tools' steps when an editor holds the workspace's files
(:mod:`reasonix_core.tool.text_files`): the same contract as on disk.

The path was checked by the sandbox and the per-path lock is held by the
caller, exactly as for a disk write. A version here is the hash of the text's
UTF-8 bytes (the editor has no inode or mtime to give): the observation ledger
compares content only, so ``read -> edit -> edit`` works and a buffer changed
by the user since the model's read is ``FS_STALE_VERSION``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio

from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.builtin._fs import ToolFailure, count_lines, fs_failure, suggest_missing
from reasonix_core.tool.ledger import (
    FS_ALREADY_EXISTS,
    FS_NOT_FOUND,
    FS_STALE_VERSION,
    FileLedger,
    FileVersion,
)
from reasonix_core.tool.sandbox import SandboxPolicy, is_within
from reasonix_core.tool.text_files import TextFiles, TextFilesError


def editor_for(ctx: ToolContext, path: Path, sandbox: SandboxPolicy) -> TextFiles | None:
    """The editor that holds ``path``: the session's, for a path inside the
    workspace (the editor's project); None: the host disk."""
    files = ctx.env.text_files
    if files is None or not is_within(path, sandbox.root):
        return None
    return files


def text_version(text: str) -> FileVersion:
    data = text.encode("utf-8", errors="surrogatepass")
    return FileVersion(sha256=hashlib.sha256(data).hexdigest(), size=len(data), mtime_ns=0, inode=0)


async def read_text(files: TextFiles, path: Path, display: str) -> str | None:
    if await anyio.Path(path).is_dir():
        raise ToolFailure(f"{display} is a directory; use ls to list its contents")
    try:
        return await files.read_text(path)
    except TextFilesError as exc:
        raise ToolFailure(f"the editor could not read {display}: {exc}") from None


async def write_text(files: TextFiles, path: Path, display: str, text: str) -> None:
    try:
        await files.write_text(path, text)
    except TextFilesError as exc:
        raise ToolFailure(
            f"the editor could not write {display}: {exc}; it was not changed"
        ) from None


def not_found(path: Path, display: str, sandbox: SandboxPolicy, hint: str = "") -> ToolFailure:
    return ToolFailure(
        f"{FS_NOT_FOUND}: {display} does not exist{suggest_missing(path, sandbox)}{hint}",
        FS_NOT_FOUND,
    )


# An edit of a file that does not exist: the model is told how to create one.
CREATE_HINT = "; to create a new file use write_file"


async def existing_text(
    files: TextFiles, path: Path, display: str, sandbox: SandboxPolicy, hint: str = ""
) -> str:
    """The editor's text of ``path``; FS_NOT_FOUND (with ``hint``) when there is none."""
    text = await read_text(files, path, display)
    if text is None:
        raise not_found(path, display, sandbox, hint)
    return text


async def current_observed(
    files: TextFiles,
    path: Path,
    display: str,
    ledger: FileLedger,
    sandbox: SandboxPolicy,
    verb: str,
) -> str:
    """The editor's text of an existing file the model has seen as it is now."""
    text = await existing_text(files, path, display, sandbox, CREATE_HINT)
    code = ledger.check(path, text_version(text))
    if code is not None:
        raise fs_failure(code, display, verb)
    return text


async def publish(
    files: TextFiles, path: Path, display: str, ledger: FileLedger, before: str | None, text: str,
    verb: str,
) -> None:  # fmt: skip
    """Write ``text`` if the editor still holds ``before`` (None: no file yet),
    then observe what was written."""
    now = await read_text(files, path, display)
    if now != before:
        if before is None:
            raise fs_failure(FS_ALREADY_EXISTS, display)
        raise fs_failure(FS_STALE_VERSION, display, verb)
    await write_text(files, path, display, text)
    ledger.observe(path, text_version(text))


def created_text(display: str, content: str) -> str:
    size = len(content.encode("utf-8", errors="surrogatepass"))
    lines = count_lines(content)
    return (
        f"created {display} ({size} byte{'' if size == 1 else 's'}, "
        f"{lines} line{'' if lines == 1 else 's'})"
    )
