"""Resolve a path component by component through directory descriptors.

Checking a resolved path string and then opening it leaves a window in which a
directory on the way can be swapped for a symlink (``renameat2`` with
``RENAME_EXCHANGE`` does it atomically), so the open lands somewhere the check
never saw. Here every directory is opened with ``O_NOFOLLOW | O_DIRECTORY``
relative to the descriptor of its parent. A symlink met on the way is never
followed by the kernel: its text is read with ``readlink`` and spliced into the
remaining components, so the walked names are always the physical path of the
descriptors held. What the caller checks (:attr:`Located.path`) is therefore
what the returned parent descriptor really is, and every later operation goes
through that descriptor and the final name.

Semantics match ``os.path.realpath`` (non-strict): ``..`` after a missing
component is lexical, and a missing tail is kept as names to create.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat as stat_mod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Like the kernel's limit on symlinks followed while resolving one path.
MAX_SYMLINK_HOPS = 40
# Each level holds a descriptor while the walk runs; a deeper path is refused
# as too long rather than risking running out of descriptors.
MAX_DEPTH = 256
PATH_MAX = 4096

# O_PATH (Linux) needs only search permission on a directory, as a path walk
# does, so a workspace below an execute-only directory still resolves.
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_PATH", 0) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathUnusable(ValueError):
    """The path text itself cannot name a file (empty, NUL byte, lone surrogate)."""


def check_text(text: object, *, from_disk: bool = False) -> str:
    """``text`` if it can name a file, else :class:`PathUnusable` saying why.

    ``from_disk`` is for names read from a directory listing, where a
    surrogate stands for an undecodable byte of a real name and is kept.
    """
    if not isinstance(text, str):
        raise PathUnusable(f"invalid path {text!r}: expected text")
    if not text.strip():
        raise PathUnusable(f"invalid path {text!r}: empty")
    if "\x00" in text:
        raise PathUnusable(f"invalid path {text!r}: contains a NUL byte")
    if not from_disk and any("\ud800" <= ch <= "\udfff" for ch in text):
        # Surrogates only appear in text decoded from undecodable bytes; a name
        # the model types with one is not valid Unicode and cannot be shown back.
        raise PathUnusable(f"invalid path {text!r}: contains a lone surrogate (not valid Unicode)")
    try:
        size = len(os.fsencode(text))
    except UnicodeError as exc:
        raise PathUnusable(f"invalid path {text!r}: {exc}") from None
    if size >= PATH_MAX:
        raise PathUnusable(f"invalid path {text[:60]!r}…: file name too long ({size} bytes)")
    return text


def _error(code: int, name: str) -> OSError:
    return OSError(code, os.strerror(code), name)


@dataclass(frozen=True, slots=True)
class Located:
    """A resolved path: the descriptor of its deepest existing directory and the
    names still below it.

    ``path`` is the physical path (no symlinks, no ``..``). ``missing`` are the
    directory names between the deepest existing directory (``dir_fd``) and the
    final ``name``; empty when the parent exists, and then ``dir_fd`` is the
    parent. The owner closes it (it is a context manager).
    """

    path: Path
    name: str
    dir_fd: int
    missing: tuple[str, ...]

    def close(self) -> None:
        os.close(self.dir_fd)

    def __enter__(self) -> Located:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def make_parents(self) -> Located:
        """Create the missing directories one by one under ``dir_fd``.

        Returns a new :class:`Located` (with its own descriptor, to close
        separately) whose ``dir_fd`` is the parent. A name that appears
        meanwhile is used only if it is a real directory; a symlink or a file
        there fails with ENOTDIR.
        """
        fd = self.dir_fd
        try:
            for name in self.missing:
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
                if fd != self.dir_fd:
                    os.close(fd)
                fd = child
        except BaseException:
            if fd != self.dir_fd:
                os.close(fd)
            raise
        if fd == self.dir_fd:
            fd = os.dup(fd)
        return Located(self.path, self.name, fd, ())


def locate(text: str, base: Path, *, follow_final: bool = True) -> Located:
    """Resolve ``text`` (``~`` expanded, relative to ``base``) by descriptors.

    Symlinks in directories on the way are followed by splicing their text;
    the final component is followed too unless ``follow_final`` is false.
    Raises :class:`PathUnusable` for unusable text and ``OSError`` for ELOOP
    (too many links), ENOTDIR (a file used as a directory), ENAMETOOLONG and
    other failures; the caller checks :attr:`Located.path` against its roots.
    """
    check_text(text)
    expanded = os.path.expanduser(text)
    if not os.path.isabs(expanded):
        expanded = os.path.join(os.fspath(base), expanded)
    pending = _components(expanded)
    pending.reverse()  # a stack: the next component is pending[-1]
    walk = _Resolution(text, pending, follow_final=follow_final)
    try:
        while walk.pending:
            walk.step(walk.pending.pop())
        return walk.located()
    except BaseException:
        walk.close()
        raise


def _components(path: str) -> list[str]:
    return [p for p in path.split("/") if p not in ("", ".")]


class _Resolution:
    """One :func:`locate` under way: the components still to walk (a stack), the
    physical names walked so far and their descriptors. ``fds[0]`` is "/" and
    ``fds[i + 1]`` the descriptor of ``walked[i]``, None from the first missing
    name on."""

    def __init__(self, text: str, pending: list[str], *, follow_final: bool) -> None:
        self.text = text
        self.pending = pending
        self.follow_final = follow_final
        self.walked: list[str] = []
        self.fds: list[int | None] = [os.open("/", DIR_FLAGS)]
        self.hops = 0

    def step(self, comp: str) -> None:
        """Walk one component: ``..`` goes up, a directory is opened, a symlink's
        text is spliced in, a missing name (and everything below it) is noted."""
        if comp == "..":
            self._up()
            return
        if len(self.walked) >= MAX_DEPTH:
            raise _error(errno.ENAMETOOLONG, self.text)
        cur = self.fds[-1]
        if cur is None:  # below a missing directory: everything is missing
            self._descend(comp, None)
            return
        if not self.pending:  # the final component
            target = _link_text(comp, cur) if self.follow_final else None
            if target is None:
                self._descend(comp, None)  # the final component is never opened here
                return
        else:
            target = self._open_directory(comp, cur)
            if target is None:
                return
        self._splice(comp, target)

    def _up(self) -> None:
        if self.walked:
            self.walked.pop()
            fd = self.fds.pop()
            if fd is not None:
                os.close(fd)

    def _descend(self, comp: str, fd: int | None) -> None:
        self.walked.append(comp)
        self.fds.append(fd)

    def _hop(self) -> None:
        self.hops += 1
        if self.hops > MAX_SYMLINK_HOPS:
            raise _error(errno.ELOOP, self.text)

    def _open_directory(self, comp: str, cur: int) -> str | None:
        """Open directory ``comp`` under ``cur``; None once handled (opened, missing,
        or swapped back to a directory to try again), else the symlink text to
        splice in."""
        try:
            self._descend(comp, os.open(comp, DIR_FLAGS, dir_fd=cur))
            return None
        except FileNotFoundError:
            self._descend(comp, None)
            return None
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
        target = _link_text(comp, cur)
        if target is None:
            if _is_directory(comp, cur):
                self.pending.append(comp)  # swapped back to a directory: try again
                self._hop()
                return None
            raise _error(errno.ENOTDIR, "/" + "/".join([*self.walked, comp]))
        return target

    def _splice(self, comp: str, target: str) -> None:
        """Follow symlink ``comp`` by walking its text next (from "/" if absolute)."""
        self._hop()
        if not target:
            raise _error(errno.ENOENT, "/" + "/".join([*self.walked, comp]))
        if target.startswith("/"):
            for fd in self.fds[1:]:
                if fd is not None:
                    os.close(fd)
            del self.fds[1:]
            self.walked.clear()
        self.pending.extend(reversed(_components(target)))

    def located(self) -> Located:
        """The result once every component is walked; takes its descriptor along."""
        walked, fds = self.walked, self.fds
        if not walked:
            raise _error(errno.EISDIR, "/")
        # fds[i] is the directory holding walked[i]; the final slot is dropped.
        last = fds.pop()
        if last is not None:
            os.close(last)
        depth = len(fds) - 1
        while fds[depth] is None:
            depth -= 1
        keep = fds[depth]
        assert keep is not None
        for i, fd in enumerate(fds):
            if fd is not None and i != depth:
                os.close(fd)
        fds.clear()
        missing = tuple(walked[depth : len(walked) - 1])
        return Located(Path("/" + "/".join(walked)), walked[-1], keep, missing)

    def close(self) -> None:
        for fd in self.fds:
            if fd is not None:
                os.close(fd)


def _link_text(name: str, dir_fd: int) -> str | None:
    """The symlink text of ``name``, or None if it is not a symlink (or missing)."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            return None
        raise


def _is_directory(name: str, dir_fd: int) -> bool:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat_mod.S_ISDIR(st.st_mode)


FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def open_final(located: Located) -> int | None:
    """Open the final component for reading without following a symlink.

    None if it does not exist (or its parent does not). ``O_NONBLOCK`` keeps a
    FIFO from blocking the open; callers check ``fstat`` for a regular file.
    A symlink that appeared after the walk fails with ELOOP.
    """
    if located.missing:
        return None
    try:
        return os.open(located.name, FILE_FLAGS, dir_fd=located.dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None


def opened_path(fd: int) -> Path | None:
    """The physical path of an open descriptor, as the kernel knows it now;
    None where it cannot tell (a deleted file, a pipe, no /proc nor F_GETPATH)."""
    try:
        text = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        get_path = getattr(fcntl, "F_GETPATH", None)  # macOS
        if get_path is None:
            return None
        try:
            raw = fcntl.fcntl(fd, get_path, bytes(1024))
        except OSError:
            return None
        text = os.fsdecode(raw.split(b"\0", 1)[0])
    if not text.startswith("/") or text.endswith(" (deleted)"):
        return None
    return Path(text)


def read_regular_capped(
    path: Path, cap: int, refused: Callable[[str], bool], refusal: str
) -> tuple[bytes, int]:
    """Up to ``cap + 1`` bytes of the regular file at ``path``, and its size.

    OSError when it is not a regular file, or (EACCES with ``refusal``) when
    ``refused`` rejects the physical path of what was opened: a folder on the way
    may have been swapped for a link since the caller checked the name.
    ``O_NONBLOCK`` + ``fstat``: a FIFO (or device) under the name must not hang.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        opened = opened_path(fd)
        if opened is not None and refused(os.fspath(opened)):
            raise OSError(errno.EACCES, refusal)
        info = os.fstat(fd)
        if not stat_mod.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(cap + 1)
    finally:
        os.close(fd)
    return data, info.st_size


def list_directory(dir_fd: int) -> list[str]:
    """The names in the directory open as ``dir_fd`` (which may be an O_PATH
    descriptor, which cannot be listed itself)."""
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)
