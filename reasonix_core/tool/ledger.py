"""The file observation ledger (seed 004).

Structured file writes (``write_file`` over an existing file, ``edit_file``,
``multi_edit``) require that the host has *observed* the file's current
version: any successful ``read_file`` window counts, and every successful
write refreshes the observation, so ``read -> edit -> edit`` works.

A version is the content hash plus size, ``mtime_ns`` and inode. Staleness is
decided by the content hash, so an external same-size rewrite that restores the
mtime is still caught. An observation is only about this session's view of a
file: it never blocks bash, other files or the final answer, and a failed check
fails only the current call.

The ledger is not a general compare-and-swap: a process outside Reasonix can
still write between the final comparison and the publish.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
from dataclasses import dataclass
from pathlib import Path

import anyio

FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
FS_STALE_VERSION = "FS_STALE_VERSION"
FS_NOT_FOUND = "FS_NOT_FOUND"
FS_ALREADY_EXISTS = "FS_ALREADY_EXISTS"

FS_CODES = (FS_NOT_OBSERVED, FS_STALE_VERSION, FS_NOT_FOUND, FS_ALREADY_EXISTS)
#: Each code in people's words (the card names the path; the model's text says what to
#: do next).
FS_SUMMARIES = {
    FS_NOT_OBSERVED: "Not changed: the file was not read first.",
    FS_STALE_VERSION: "Not changed: the file changed on disk since it was read.",
    FS_NOT_FOUND: "Not found.",
    FS_ALREADY_EXISTS: "Already exists.",
}

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileVersion:
    """One observed version of a file."""

    sha256: str
    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of_bytes(cls, data: bytes, st: os.stat_result) -> FileVersion:
        """The version of ``data`` as read from a file whose ``fstat`` is ``st``."""
        return cls(
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            mtime_ns=st.st_mtime_ns,
            inode=st.st_ino,
        )

    def same_content(self, other: FileVersion) -> bool:
        return self.size == other.size and self.sha256 == other.sha256


def _key(path: str | os.PathLike[str]) -> Path:
    text = os.fspath(path)
    try:
        return Path(os.path.realpath(text))
    except (OSError, ValueError):
        # realpath raises when a component is swapped mid-resolution (EINVAL);
        # keys only group aliases, so the lexical form is a safe fallback.
        return Path(os.path.abspath(text))


def read_version(path: str | os.PathLike[str]) -> FileVersion | None:
    """Hash the file at ``path`` now; None if it is missing or not a regular file.

    Blocking; reads the whole file in chunks.
    """
    try:
        if not stat_mod.S_ISREG(os.stat(path).st_mode):
            return None  # never open a FIFO or device: it could block
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    try:
        return version_of_fd(fd)
    finally:
        os.close(fd)


def version_of_fd(fd: int) -> FileVersion | None:
    """Hash the open file ``fd`` from its start; None if it is not a regular file.

    The file tools call this on a descriptor opened through the directory they
    checked, so the version compared is the version of the file they write.
    """
    st = os.fstat(fd)
    if not stat_mod.S_ISREG(st.st_mode):
        return None
    digest = hashlib.sha256()
    size = 0
    offset = 0
    while chunk := os.pread(fd, _CHUNK, offset):
        digest.update(chunk)
        size += len(chunk)
        offset += len(chunk)
    return FileVersion(
        sha256=digest.hexdigest(), size=size, mtime_ns=st.st_mtime_ns, inode=st.st_ino
    )


class FileLedger:
    """Per-session record of the file versions the model has seen.

    Keys are resolved paths (symlink aliases share one entry). Methods are
    synchronous and thread-safe enough for use from worker threads (plain dict
    operations under the GIL); :meth:`lock` returns the per-path
    :class:`anyio.Lock` that serialises the publish sequence of one file.
    """

    def __init__(self) -> None:
        self._seen: dict[Path, FileVersion] = {}
        self._locks: dict[Path, anyio.Lock] = {}

    # -- observations ------------------------------------------------------------

    def observe(
        self, path: str | os.PathLike[str], version: FileVersion | None = None
    ) -> FileVersion | None:
        """Record the version of ``path`` after a successful read window or write.

        Pass the ``version`` computed from the bytes actually read or written
        (so the record matches what the model saw); without it the file is
        hashed now. A missing file drops any record and returns None.
        """
        key = _key(path)
        if version is None:
            version = read_version(key)
        if version is None:
            self._seen.pop(key, None)
            return None
        self._seen[key] = version
        return version

    def get(self, path: str | os.PathLike[str]) -> FileVersion | None:
        return self._seen.get(_key(path))

    def forget(self, path: str | os.PathLike[str]) -> None:
        self._seen.pop(_key(path), None)

    def move(self, source: str | os.PathLike[str], destination: str | os.PathLike[str]) -> None:
        """Carry observations from ``source`` (a file or a directory) to ``destination``.

        Call after the move; ``source`` is keyed lexically (it no longer exists).
        """
        src = Path(os.path.abspath(os.fspath(source)))
        dst = _key(destination)
        for key in list(self._seen):
            if key == src or src in key.parents:
                version = self._seen.pop(key)
                self._seen[dst / key.relative_to(src)] = version

    def check(self, path: str | os.PathLike[str], current: FileVersion | None = None) -> str | None:
        """None if ``path`` may be structurally written, else an FS error code.

        ``current`` is the version just read under the lock (hashed now if
        omitted). Returns ``FS_NOT_FOUND`` if the file does not exist,
        ``FS_NOT_OBSERVED`` if it was never read or written in this session,
        ``FS_STALE_VERSION`` if its content changed since the last observation.
        """
        key = _key(path)
        if current is None:
            current = read_version(key)
        if current is None:
            return FS_NOT_FOUND
        seen = self._seen.get(key)
        if seen is None:
            return FS_NOT_OBSERVED
        if not seen.same_content(current):
            return FS_STALE_VERSION
        return None

    # -- locking ----------------------------------------------------------------------

    @staticmethod
    def key(path: str | os.PathLike[str]) -> Path:
        """The ledger key of ``path``: its fully resolved form."""
        return _key(path)

    def lock(self, path: str | os.PathLike[str]) -> anyio.Lock:
        """The lock serialising resolve-check-publish for one resolved path."""
        key = _key(path)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks.setdefault(key, anyio.Lock())
        return lock

    def __len__(self) -> int:
        return len(self._seen)

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str | os.PathLike):
            return False
        return _key(path) in self._seen
