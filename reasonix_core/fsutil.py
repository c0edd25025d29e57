"""Atomic file replacement, shared by every writer of Reasonix's own state files
(config, .env, metrics, checkpoints): a reader never sees a half-written file
and a crash leaves either the old or the new content. Also the one string test
of path containment (:func:`within`), and the one way Reasonix's home makes its
folders and files private to the user (:func:`private_dir`, :func:`open_private`,
:data:`PRIVATE_FILE`): sessions hold the user's code and conversations."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TextIO, cast

#: Modes of everything Reasonix keeps in its home (issue 29 item 4).
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> Path:
    """``path`` as a folder only its owner can use: missing folders are made 0700
    (parents included), and ``path`` itself is set to 0700 if it was looser.
    Only for folders under Reasonix's home. Raises OSError."""
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:
            pass
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, PRIVATE_DIR)
    return path


def private_tree(root: Path) -> None:
    """Take group and other bits off ``root`` and everything below it (folders 0700,
    files 0600; an owner's executable stays executable). Symlinks are neither
    followed nor changed; what this user cannot change is left as it is."""
    _private(str(root))
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            _private(os.path.join(folder, name))


def _private(path: str) -> None:
    import stat

    try:
        st = os.lstat(path)
        if st.st_mode & 0o077 and not stat.S_ISLNK(st.st_mode):
            os.chmod(path, st.st_mode & 0o700)
    except OSError:
        pass  # not this user's to change


def open_private(path: Path, mode: str = "a", buffering: int = -1) -> TextIO:
    """``open(path, mode)`` (text, UTF-8) that creates a missing file as 0600
    rather than the umask's 0644."""
    flags = {"a": os.O_WRONLY | os.O_APPEND, "w": os.O_WRONLY | os.O_TRUNC}[mode]
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    return cast(TextIO, os.fdopen(fd, mode, buffering, encoding="utf-8"))


def within(path: str, root: str) -> bool:
    """True if ``path`` is ``root`` or below it (both already ``realpath``-ed)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644, durable: bool = True) -> None:
    """Write ``text`` to a temp file beside ``path`` (created 0600, then set to
    ``mode`` before any byte is written), fsync it, and rename it over ``path``.

    ``durable=False`` skips the fsync: readers still see the old or the new
    content, never half of it, and a killed process loses nothing (the page cache
    outlives it); only a crash of the machine may lose the last writes. For a file
    rewritten often whose next version supersedes it (a progress snapshot), where an
    fsync would block its writer for milliseconds each time.

    Raises OSError; the temp file never outlives a failure.
    """
    import tempfile  # only writers need it: off the CLI's pre-dispatch checks

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)
            fh.write(text)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class NotARegularFile(OSError):
    """A FIFO, device, socket or folder where a regular file was expected."""


class FileTooLarge(OSError):
    """A file over the reader's cap."""


def read_bounded(path: Path, cap: int) -> bytes:
    """The bytes of the regular file at ``path``, refused over ``cap`` bytes.

    ``O_NONBLOCK`` and the ``fstat`` check keep a FIFO or a device planted under the
    name from hanging the reader, and a huge file is refused before it is read (and
    again if it grew while read). Raises the OSErrors of opening it (FileNotFoundError
    when absent), :class:`NotARegularFile` and :class:`FileTooLarge`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(f"{path}: not a regular file")
        if info.st_size > cap:
            raise FileTooLarge(f"{path}: over {cap} bytes")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(cap + 1)
    finally:
        os.close(fd)
    if len(raw) > cap:
        raise FileTooLarge(f"{path}: over {cap} bytes")
    return raw
