"""Putting the workspace back to a checkpoint (a code rewind).

The plan compares three states of every path a rewind may touch:
``target`` (the checkpoint rewound to), ``latest`` (the last checkpoint: what
Reasonix last left) and the disk now. The paths are those that differ
between ``target`` and ``latest``; a path whose disk state is not ``latest``
was changed outside Reasonix since, and stops the rewind unless forced.
Paths a checkpoint could not keep (size bound, nested repository) are not
touched and are reported.

Applying never follows a symlink: every directory on the way is opened with
``O_NOFOLLOW`` from the workspace's descriptor, files are written to a
temporary name in that directory and renamed over the entry, and a symlink is
restored as a symlink (its text), never written through. Files the target
does not have are removed, then folders left empty that the target does not
have, then files are written (bytes and the executable bit).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat as stat_mod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reasonix_core.checkpoint.store import MODE_EXEC, MODE_LINK, Change, Entry, entry_on_disk
from reasonix_core.errors import CheckpointError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

RESTORE, REMOVE, CREATE = "restore", "remove", "create"


@dataclass(frozen=True, slots=True)
class Action:
    path: str
    kind: str  # restore (bytes or mode), remove (the turn created it), create (it deleted it)
    target: Entry | None
    latest: Entry | None


@dataclass(frozen=True, slots=True)
class CodePlan:
    target_tree: str
    latest_tree: str
    actions: tuple[Action, ...]
    # Paths changed outside Reasonix since the latest checkpoint (path -> what is there).
    conflicts: tuple[str, ...]
    # Paths some checkpoint could not keep: left as they are.
    not_kept: dict[str, str]


class BlobSource(Protocol):
    """Where a rewind reads the bytes it restores: the shadow store, or the
    pre-image copies where there is no git."""

    workspace: Path

    def blobs(self, oids: Sequence[str]) -> dict[str, bytes]: ...


def plan_code(
    workspace: Path,
    changes: Iterable[Change],
    not_kept: dict[str, str],
    target_tree: str = "",
    latest_tree: str = "",
) -> CodePlan:
    """``changes``: each path's state at the target (``before``) and as Reasonix
    last left it (``after``)."""
    actions: list[Action] = []
    conflicts: list[str] = []
    for change in changes:
        _check_name(change.path)
        if change.path in not_kept:
            continue
        kind = REMOVE if change.before is None else CREATE if change.after is None else RESTORE
        actions.append(Action(change.path, kind, change.before, change.after))
        if entry_on_disk(workspace, change.path) != change.after:
            conflicts.append(change.path)
    return CodePlan(target_tree, latest_tree, tuple(actions), tuple(conflicts), dict(not_kept))


def apply_code(source: BlobSource, plan: CodePlan, target_dirs: set[str] | None) -> list[str]:
    """Carry out ``plan``; returns the paths it changed. ``target_dirs``: the
    folders the target has (others left empty are removed; None: none are).
    Raises CheckpointError naming the first path that could not be restored
    (earlier ones stay done)."""
    workspace = source.workspace
    wanted = [a.target.oid for a in plan.actions if a.target is not None]
    contents = source.blobs(wanted)
    root = os.open(workspace, _DIR_FLAGS)
    done: list[str] = []
    try:
        removals = sorted(
            (a for a in plan.actions if a.kind == REMOVE), key=lambda a: -a.path.count("/")
        )
        for action in removals:
            _remove(root, action.path)
            done.append(action.path)
            if target_dirs is not None:
                _prune(root, action.path, target_dirs)
        for action in plan.actions:
            if action.target is None:
                continue
            _write(root, action.path, action.target, contents[action.target.oid])
            done.append(action.path)
    except OSError as exc:
        raise CheckpointError(
            f"could not restore {exc.filename or 'a file'}: {exc.strerror}; "
            f"{len(done)} path(s) were restored before it"
        ) from None
    finally:
        os.close(root)
    return sorted(set(done))


def _check_name(path: str) -> None:
    """A path a rewind may write: relative, no ``.``/``..``/empty component, nothing
    inside a ``.git``. Git never records another kind; a record that holds one was
    not written by Reasonix, and nothing is restored from it."""
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") or p == ".git" for p in parts):
        raise CheckpointError(f"refusing to restore {path!r}: not a path inside the workspace")


def folders(entries: Iterable[str]) -> set[str]:
    """Every folder on the way to the given paths."""
    found: set[str] = set()
    for name in entries:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            found.add("/".join(parts[:i]))
    return found


def _open_parent(root: int, path: str, *, create: bool) -> int | None:
    """The descriptor of ``path``'s folder, walked without following symlinks;
    None when missing (and not ``create``). A symlink or file on the way fails."""
    fd = os.dup(root)
    try:
        for name in path.split("/")[:-1]:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                os.mkdir(name, 0o777, dir_fd=fd)
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OSError(
                        exc.errno, "a symlink or a file is in the way of its folder", path
                    ) from None
                raise OSError(exc.errno, exc.strerror, path) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _remove(root: int, path: str) -> None:
    parent = _open_parent(root, path, create=False)
    if parent is None:
        return
    name = path.rsplit("/", 1)[-1]
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if stat_mod.S_ISDIR(info.st_mode):
            raise OSError(errno.EISDIR, "a folder is there now", path)
        os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    finally:
        os.close(parent)


def _prune(root: int, path: str, keep: set[str]) -> None:
    """Remove the now-empty folders of ``path`` the target does not have."""
    parts = path.split("/")[:-1]
    while parts:
        folder = "/".join(parts)
        if folder in keep:
            return
        parent = _open_parent(root, folder, create=False)
        if parent is None:
            return
        try:
            os.rmdir(parts[-1], dir_fd=parent)
        except OSError:
            return  # not empty (ignored or untracked files): it stays
        finally:
            os.close(parent)
        parts.pop()


def _write(root: int, path: str, entry: Entry, data: bytes) -> None:
    parent = _open_parent(root, path, create=True)
    assert parent is not None
    name = path.rsplit("/", 1)[-1]
    tmp = f".rx-rewind-{os.getpid()}-{secrets.token_hex(6)}.tmp"
    try:
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat_mod.S_ISDIR(info.st_mode):
            # What a removed turn made here as a folder was removed above; a
            # folder still here holds files no checkpoint has.
            raise OSError(errno.EISDIR, "a folder with other files is in the way", path)
        if entry.mode == MODE_LINK:
            os.symlink(os.fsdecode(data), tmp, dir_fd=parent)
        else:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=parent,
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                umask = os.umask(0)
                os.umask(umask)
                mode = (0o777 if entry.mode == MODE_EXEC else 0o666) & ~umask
                if info is not None and stat_mod.S_ISREG(info.st_mode):
                    # Keep the file's other permission bits; set the executable
                    # bits as the checkpoint had them.
                    mode = info.st_mode & 0o7777 & ~0o111
                    if entry.mode == MODE_EXEC:
                        mode |= (info.st_mode & 0o444) >> 2 or 0o100
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=parent)
        except OSError:
            pass
        raise
    finally:
        os.close(parent)
