"""move_file: rename or move a file or directory inside the writable roots."""

from __future__ import annotations

import errno
import os
import shutil
import stat as stat_mod
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import (
    ToolFailure,
    guarded,
    run_writer,
    same_location,
    services,
    suggest_missing,
)
from reasonix_core.tool.builtin.specs import MOVE_FILE as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool
from reasonix_core.tool.fs_walk import Located
from reasonix_core.tool.ledger import FS_ALREADY_EXISTS, FS_NOT_FOUND, FileLedger
from reasonix_core.tool.sandbox import SandboxPolicy, is_within


class MoveFileArgs(BaseModel):
    model_config = ARGS_CONFIG

    source_path: str = Field(min_length=1)
    destination_path: str = Field(min_length=1)


def _exists_failure(display: str) -> ToolFailure:
    return ToolFailure(
        f"{FS_ALREADY_EXISTS}: destination {display} already exists; move_file never "
        "overwrites - choose another destination or remove the existing one first",
        FS_ALREADY_EXISTS,
    )


def _lstat(located: Located) -> os.stat_result | None:
    if located.missing:
        return None
    try:
        return os.stat(located.name, dir_fd=located.dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def move_sync(
    texts: tuple[str, str],
    src: Path,
    dst: Path,
    src_display: str,
    dst_display: str,
    ledger: FileLedger,
    sandbox: SandboxPolicy,
) -> ToolResult:
    """Move ``texts`` (checked as ``src`` / ``dst`` before the locks) through the
    descriptors of both parent directories; neither link is followed."""
    try:
        source = sandbox.locate_for_write(texts[0], follow_symlinks=False)
    except NotADirectoryError:
        raise ToolFailure(
            f"{FS_NOT_FOUND}: source {src_display} does not exist", FS_NOT_FOUND
        ) from None
    with source:
        same_location(source, src, src_display)
        st = _lstat(source)
        if st is None:
            raise ToolFailure(
                f"{FS_NOT_FOUND}: source {src_display} does not exist"
                f"{suggest_missing(src, sandbox)}",
                FS_NOT_FOUND,
            )
        try:
            target = sandbox.locate_for_write(texts[1], follow_symlinks=False)
        except NotADirectoryError:
            raise _parent_not_directory(dst_display) from None
        with target:
            same_location(target, dst, dst_display)
            if _lstat(target) is not None:
                raise _exists_failure(dst_display)
            if target.missing:
                try:
                    parent = target.make_parents()
                except (FileExistsError, NotADirectoryError):
                    raise _parent_not_directory(dst_display) from None
            else:
                parent = Located(target.path, target.name, os.dup(target.dir_fd), ())
            with parent:
                kind = _move(source, parent, st, dst_display)
    if kind != "symlink":
        ledger.move(src, dst)
    return ToolResult(
        text=f"moved {kind} {src_display} -> {dst_display}",
        meta={"source": src_display, "destination": dst_display, "kind": kind},
    )


def _parent_not_directory(dst_display: str) -> ToolFailure:
    return ToolFailure(f"cannot move to {dst_display}: a parent path exists and is not a directory")


def _move(source: Located, target: Located, st: os.stat_result, dst_display: str) -> str:
    """Move the entry; returns its kind. Both names are relative to open directories."""
    is_link = stat_mod.S_ISLNK(st.st_mode)
    is_dir = stat_mod.S_ISDIR(st.st_mode)
    if not is_dir and not is_link:
        # A hard link then unlink never clobbers a file created meanwhile.
        try:
            os.link(
                source.name,
                target.name,
                src_dir_fd=source.dir_fd,
                dst_dir_fd=target.dir_fd,
                follow_symlinks=False,
            )
        except FileExistsError:
            raise _exists_failure(dst_display) from None
        except OSError:
            _rename(source, target, dst_display)
        else:
            os.unlink(source.name, dir_fd=source.dir_fd)
    else:
        _rename(source, target, dst_display)
    return "directory" if is_dir else "symlink" if is_link else "file"


def _rename(source: Located, target: Located, dst_display: str) -> None:
    if _lstat(target) is not None:
        raise _exists_failure(dst_display)
    try:
        os.rename(source.name, target.name, src_dir_fd=source.dir_fd, dst_dir_fd=target.dir_fd)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise _exists_failure(dst_display) from None
            raise
        # Between filesystems (e.g. the workspace and the session temp dir):
        # a copy by path, the one step not made through descriptors.
        shutil.move(os.fspath(source.path), os.fspath(target.path))


class MoveFile(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: MoveFileArgs = validate_args(MoveFileArgs, args)
        sandbox, ledger = services(ctx)

        async def body() -> ToolResult:
            src = sandbox.check_write(a.source_path, follow_symlinks=False)
            dst = sandbox.check_write(a.destination_path, follow_symlinks=False)
            sandbox.check_read(a.source_path, follow_symlinks=False)
            sandbox.check_read(a.destination_path, follow_symlinks=False)
            src_display, dst_display = sandbox.display(src), sandbox.display(dst)
            if src in sandbox.resolved_write_roots():
                raise ToolFailure(f"cannot move {src_display}: it is a workspace or sandbox root")
            if src == dst:
                raise ToolFailure("source_path and destination_path are the same path")
            if is_within(dst, src):
                raise ToolFailure(f"cannot move {src_display} into itself ({dst_display})")
            async with AsyncExitStack() as stack:
                # One lock per distinct file, always taken in the same order.
                for key in sorted({ledger.key(src), ledger.key(dst)}):
                    await stack.enter_async_context(ledger.lock(key))
                texts = (a.source_path, a.destination_path)
                return await run_writer(
                    lambda: move_sync(texts, src, dst, src_display, dst_display, ledger, sandbox)
                )

        return await guarded(body, sandbox)
