"""What changed in the workspace since the last look, from the kernel (inotify).

A snapshot should cost what changed, not the size of the tree. The
:class:`ChangeWatcher` watches every folder of the workspace (but the tools'
always-skipped ones and ``.git``) with inotify and, when asked
(:meth:`ChangeWatcher.take`), hands back the paths the kernel reported since
the previous call. The kernel queues an event during the write call itself,
so once a command has returned, everything it wrote is in the queue: whoever
wrote it (a background job, an editor, a command outside the sandbox: the
watch is on the inodes, whatever mount or process reached them).

When the answer cannot be trusted the watcher says so (``None``) and the
caller reads the whole tree, as without a watcher: the kernel's queue
overflowed, a watch could not be added (the per-user limit), a folder is
reachable under two paths (a bind mount), the workspace itself was moved or
removed, or the platform has no inotify. A folder created or moved in is
reported whole and its subtree is watched before it is read, so files made in
it before its watch existed are not missed.

A file with several names (hard links) can be written through a name the
watches do not see (outside the workspace, say): such files, found by the
walk or read by the store, are compared by stat at every look instead.

Not seen: writes through a shared memory mapping that are not followed by
closing the file, a second name given from outside the workspace to a file
after it was last looked at, and changes made by another machine on a
network filesystem. ``[checkpoints] enabled`` users on such filesystems get
the full read at each turn's end (see :mod:`checkpoint.store`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import stat as stat_mod
import struct
import threading
from pathlib import Path

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
)  # fmt: skip
_HEADER = struct.Struct("iIII")
# More paths than this since the last look: reading the whole tree is as cheap.
MAX_PATHS = 2000

_libc: ctypes.CDLL | None = None
_libc_lock = threading.Lock()


def _inotify() -> ctypes.CDLL | None:
    global _libc
    with _libc_lock:
        if _libc is None:
            name = ctypes.util.find_library("c")
            try:
                lib = ctypes.CDLL(name, use_errno=True)
                lib.inotify_init1.argtypes = [ctypes.c_int]
                lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
                lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
            except (OSError, AttributeError):
                return None
            _libc = lib
        return _libc


class WatchFailed(Exception):
    """The workspace cannot be watched exactly (limit, layout): read the whole tree."""


class ChangeWatcher:
    """inotify watches on every folder of one workspace (see the module doc)."""

    def __init__(self, workspace: Path, skip: frozenset[str]) -> None:
        lib = _inotify()
        if lib is None:
            raise WatchFailed("no inotify on this platform")
        self._lib = lib
        self.workspace = workspace
        self._skip = skip | {".git"}
        fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise WatchFailed(os.strerror(ctypes.get_errno()))
        self._fd = fd
        self._paths: dict[int, str] = {}  # watch descriptor -> folder ("" is the root)
        self._wds: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._linked: dict[str, tuple[int, int, int, int]] = {}  # hard-linked files
        self._lost = False
        try:
            self._watch_tree("")
        except WatchFailed:
            self.close()
            raise

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    # -- watches -----------------------------------------------------------------

    def _add(self, rel: str) -> bool:
        """Watch one folder; False when it is gone or not a folder any more."""
        path = os.fsencode(os.path.join(self.workspace, rel) if rel else self.workspace)
        wd = self._lib.inotify_add_watch(self._fd, path, _MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.ELOOP):
                return False
            raise WatchFailed(f"cannot watch {rel or '.'}: {os.strerror(err)}")
        known = self._paths.get(wd)
        if known is not None and known != rel and self._wds.get(known) == wd:
            raise WatchFailed(f"{rel} and {known} are the same folder")
        self._paths[wd] = rel
        self._wds[rel] = wd
        return True

    def _watch_tree(self, rel: str) -> None:
        """Watch ``rel`` and every folder below it (not following symlinks)."""
        stack = [rel]
        while stack:
            folder = stack.pop()
            if not self._add(folder):
                continue
            try:
                with os.scandir(os.path.join(self.workspace, folder) if folder else self.workspace) as it:
                    for entry in it:
                        if entry.name in self._skip:
                            continue
                        rel_entry = f"{folder}/{entry.name}" if folder else entry.name
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                stack.append(rel_entry)
                            elif entry.is_file(follow_symlinks=False):
                                self._note_links(rel_entry, entry.stat(follow_symlinks=False))
                        except OSError:
                            continue
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue

    def _note_links(self, rel: str, info: os.stat_result) -> None:
        """A file with more than one name: a write through another name (maybe
        outside the workspace) reports no event here, so its stat is compared
        at every look instead."""
        if info.st_nlink > 1:
            self._linked[rel] = _signature(info)

    def _linked_changes(self) -> None:
        for rel, known in list(self._linked.items()):
            try:
                info = os.lstat(os.path.join(self.workspace, rel))
            except OSError:
                info = None
            now = _signature(info) if info is not None and info.st_nlink > 1 else None
            if now != known:
                self._dirty.add(rel)
                if now is None:
                    del self._linked[rel]
                else:
                    self._linked[rel] = now

    def note(self, rel: str, info: os.stat_result) -> None:
        """A file the store just read: watched by stat too when it has other names."""
        if stat_mod.S_ISREG(info.st_mode):
            self._note_links(rel, info)

    def _unwatch_tree(self, rel: str) -> None:
        prefix = rel + "/"
        for folder in [f for f in self._wds if f == rel or f.startswith(prefix)]:
            wd = self._wds.pop(folder)
            if self._paths.get(wd) == folder:
                del self._paths[wd]
                self._lib.inotify_rm_watch(self._fd, wd)

    # -- events ------------------------------------------------------------------

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            pos = 0
            while pos + _HEADER.size <= len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, pos)
                raw = data[pos + _HEADER.size : pos + _HEADER.size + length].rstrip(b"\0")
                pos += _HEADER.size + length
                self._event(wd, mask, os.fsdecode(raw))

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            self._lost = True
            return
        folder = self._paths.get(wd)
        if folder is None:
            return  # a watch already dropped (its folder left or was removed)
        if mask & IN_IGNORED:
            if self._paths.pop(wd, None) is not None and self._wds.get(folder) == wd:
                del self._wds[folder]
            if folder == "":
                self._lost = True
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
            if folder == "":
                self._lost = True  # the workspace itself went away
            return  # the parent reports it by name
        if not name:
            return
        rel = f"{folder}/{name}" if folder else name
        self._dirty.add(rel)
        if mask & IN_ISDIR and name not in self._skip:
            if mask & IN_MOVED_FROM or mask & IN_DELETE:
                self._unwatch_tree(rel)
            elif mask & (IN_CREATE | IN_MOVED_TO):
                self._unwatch_tree(rel)  # a folder moved in over one: fresh watches
                self._watch_tree(rel)

    def take(self) -> set[str] | None:
        """The paths changed since the last call (a folder path stands for all
        below it), or None when that cannot be known: read the whole tree.
        Either way the next call reports from now on."""
        if self._fd < 0:
            return None
        try:
            self._drain()
        except WatchFailed:
            self.close()
            return None
        self._linked_changes()
        dirty, self._dirty = self._dirty, set()
        if self._lost:
            # Missed events: start over (new folders may lack their watches).
            self._lost = False
            self._paths.clear()
            self._wds.clear()
            self._linked.clear()
            lib, fd = self._lib, self._fd
            self._fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            os.close(fd)
            if self._fd < 0:
                return None
            try:
                self._watch_tree("")
            except WatchFailed:
                self.close()
            return None
        if len(dirty) > MAX_PATHS:
            return None
        return dirty

    @property
    def alive(self) -> bool:
        return self._fd >= 0


def _signature(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
