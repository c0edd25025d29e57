"""Folders ``bash`` asks to write outside its write roots (``additional_write_dirs``).

Each requested folder is resolved here once, by directory descriptors
(:func:`~reasonix_core.tool.fs_walk.locate`: symlinks and ``..`` spliced in
component by component, never followed by the kernel), and judged on its
physical path: it must exist and be a directory, and it must not be ``/``, the
user's home or a folder above it, a system folder, or anything that covers or
lies inside a protected path (the Reasonix home, credential folders,
``forbid_read``). Nor is a git directory or anything inside one (its hooks and
config run programs on the host), nor a folder that holds a git directory the
workspace uses from outside it (a linked worktree's common directory), nor a
folder too big to scan for the repositories below it (the sandbox binds their
git metadata read-only; one it did not find would stay writable). Whether the
user granted it is the permission gate's question (:mod:`reasonix_core.permission.write_grants`); the sandbox then binds
the folder by descriptor (:func:`open_granted`), so what was judged is what
becomes writable.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from reasonix_core.tool.fs_walk import DIR_FLAGS, PathUnusable, locate
from reasonix_core.tool.git_guard import (
    NestedScanTooLarge,
    is_gitdir,
    nested_git_entries,
    workspace_gitdirs,
    workspace_gitdirs_outside,
)
from reasonix_core.tool.sandbox import is_within

__all__ = [
    "SYSTEM_DIRS",
    "WriteScopeRefused",
    "git_metadata_refusal",
    "open_granted",
    "resolve_write_dirs",
    "write_root_git_refusal",
]

#: Folders of the operating system: never granted, nor anything below them.
SYSTEM_DIRS: tuple[str, ...] = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var/run",
)
#: Folders that hold everyone's files: never granted whole (a folder below them is fine).
SHARED_DIRS: tuple[str, ...] = ("/home", "/mnt", "/media", "/opt", "/srv", "/tmp", "/var")

#: Enough for any real request; more is a model flailing.
MAX_DIRS = 8


class WriteScopeRefused(Exception):
    """A requested folder cannot be granted; the message says which and why."""


def _physical(entries: Iterable[str]) -> tuple[Path, ...]:
    # The fixed lists may themselves hold symlinks (/lib -> usr/lib, /var/run -> /run).
    return tuple(dict.fromkeys(Path(os.path.realpath(e)) for e in entries))


def resolve_write_dirs(
    entries: Sequence[str],
    *,
    workspace: Path,
    protected: Sequence[Path],
    user_home: Path,
) -> tuple[Path, ...]:
    """The physical folders ``entries`` name, each checked; raises
    :class:`WriteScopeRefused` naming the first one that cannot be granted.

    Relative entries are relative to ``workspace``; ``~`` expands. ``protected``
    are resolved protected paths (the session's ``forbid_read``).
    """
    if len(entries) > MAX_DIRS:
        raise WriteScopeRefused(
            f"additional_write_dirs lists {len(entries)} folders; ask for at most {MAX_DIRS}"
        )
    home = Path(os.path.realpath(user_home))
    system = _physical(SYSTEM_DIRS)
    shared = _physical(SHARED_DIRS)
    workspace_git = workspace_gitdirs_outside(Path(os.path.realpath(workspace)))
    out: list[Path] = []
    for entry in entries:
        path = _resolve_one(entry, workspace)
        why = _refusal(path, home, system, shared, protected) or _git_refusal(path, workspace_git)
        if why:
            raise WriteScopeRefused(
                f"additional_write_dirs: {entry!r} resolves to {path}, {why}; it cannot be granted"
            )
        out.append(path)
    return tuple(dict.fromkeys(out))


def _resolve_one(entry: str, workspace: Path) -> Path:
    try:
        located = locate(entry, workspace)
    except PathUnusable as exc:
        raise WriteScopeRefused(f"additional_write_dirs: {exc}") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:  # the walk ended at "/" itself
            raise WriteScopeRefused(
                f"additional_write_dirs: {entry!r} resolves to /, the root of the "
                "filesystem; it cannot be granted"
            ) from None
        raise WriteScopeRefused(
            f"additional_write_dirs: {entry!r} cannot be resolved ({exc.strerror or exc})"
        ) from None
    with located:
        if located.missing:
            raise WriteScopeRefused(
                f"additional_write_dirs: {entry!r} does not exist (resolves to {located.path})"
            )
        try:
            mode = os.stat(located.name, dir_fd=located.dir_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            raise WriteScopeRefused(
                f"additional_write_dirs: {entry!r} does not exist (resolves to {located.path})"
            ) from None
        except OSError as exc:
            raise WriteScopeRefused(
                f"additional_write_dirs: {entry!r} cannot be inspected ({exc.strerror or exc})"
            ) from None
        if not stat.S_ISDIR(mode):
            raise WriteScopeRefused(
                f"additional_write_dirs: {entry!r} (resolves to {located.path}) is not a "
                "directory; ask for the folder that holds it"
            )
        return located.path


def _refusal(
    path: Path,
    home: Path,
    system: tuple[Path, ...],
    shared: tuple[Path, ...],
    protected: Sequence[Path],
) -> str:
    if path == Path("/"):
        return "the root of the filesystem"
    if is_within(home, path):
        return "your home folder itself" if path == home else f"a folder above your home {home}"
    for root in system:
        if is_within(path, root):
            return f"inside the system folder {root}"
    if path in shared:
        return "a folder shared by every user; ask for the folder below it that you need"
    for secret in protected:
        if is_within(path, secret):
            return f"inside the protected path {secret} (keys and credentials)"
        if is_within(secret, path):
            return f"a folder that holds the protected path {secret} (keys and credentials)"
    return ""


def git_metadata_refusal(path: Path) -> str:
    """Why the physical ``path`` cannot be made writable as git metadata, or "".

    The one rule for every folder handed to the sandbox as a write root (a
    ``bash`` grant here, a subagent's write claim in
    :mod:`reasonix_core.subagent.claims`): the sandbox protects the git metadata
    of its writable roots and of the repositories below a granted folder
    (git_guard), not a git directory made writable on its own, whose hooks and
    config host git would run later."""
    for folder in (path, *path.parents):
        if folder.name == ".git" or is_gitdir(folder):
            return (
                f"inside the git directory {folder} (its hooks and config run programs "
                "when git runs there)"
            )
    return ""


def write_root_git_refusal(path: Path, workspace: Path) -> str:
    """Why the physical folder ``path`` inside ``workspace`` cannot become a write
    root of its own (a subagent's write claim), or "": the grant's git rule,
    whole. A claimed folder that holds the workspace's git directory (``git init
    --separate-git-dir=sub/repo.git``, then a claim on ``sub``) let a child plant
    a hook that host git runs."""
    if not path.is_dir():  # a file, or one to create: it holds no git directory
        return git_metadata_refusal(path)
    return _git_refusal(path, workspace_gitdirs(Path(os.path.realpath(workspace))))


def _git_refusal(path: Path, workspace_git: Sequence[Path]) -> str:
    if why := git_metadata_refusal(path):
        return why
    for gitdir in workspace_git:
        if is_within(gitdir, path):
            return (
                f"a folder that holds the workspace's git directory {gitdir} (its hooks "
                "and config run programs when git runs in the workspace)"
            )
    # The sandbox binds the repositories below it read-only; one it cannot find
    # within the scan's bounds would stay writable, so the grant is refused.
    try:
        nested = nested_git_entries(path)
    except NestedScanTooLarge as exc:
        return str(exc)
    for entry in nested:
        if entry.is_symlink():  # a mount follows the link: the link itself stays swappable
            return (
                f"a folder that holds {entry}, a symlinked git directory the sandbox "
                "cannot keep from being replaced"
            )
    return ""


def open_granted(path: Path) -> int:
    """A descriptor of the granted folder ``path`` for ``bwrap --bind-fd``, opened
    through a descriptor walk that must land on ``path`` itself: a folder swapped
    for a symlink since it was judged raises ``OSError`` instead of binding
    wherever the link points. The caller closes it."""
    with locate(os.fspath(path), Path("/")) as located:
        if located.missing or located.path != path:
            raise OSError(
                f"{path} changed since it was granted (it now resolves to {located.path})"
            )
        return os.open(located.name, DIR_FLAGS, dir_fd=located.dir_fd)
