"""One writer per session: an advisory lock held for as long as a run (or the
TUI) has the session open.

Two ``reasonix run -c`` at once on one session interleaved their records, and
every later ``-c`` then failed with HTTP 400. The lock is an ``fcntl.flock`` on
``<id>.lock`` beside ``<id>.jsonl``, taken before the session is written to or
any request is sent, and released when the session is closed or the process
dies (the kernel drops a dead process's flock, so a crash never leaves a
session locked; the file itself is left behind, harmlessly). The holder writes
its pid into the file so a refused second process can name it.

Only a recorded session is locked: a session kept in memory is no one's record.
Where ``fcntl`` does not exist (Windows), or the file system refuses flock (some
network mounts; a warning is logged), the session runs unlocked as before.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix_core.errors import SessionBusy, SessionError

if TYPE_CHECKING:
    from reasonix_core.agent.session import SessionStore

log = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def lock_path(session_path: Path) -> Path:
    """``<id>.lock`` beside ``<id>.jsonl``."""
    return session_path.with_suffix(".lock")


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def lock_holder(session_path: Path) -> int | None:
    """Whether another process holds ``session_path``'s lock now: its pid (0 when
    unknown), else None. A probe for a notice; the lock itself is taken only by
    :func:`session_lock` (a shared probe held for an instant)."""
    path = lock_path(session_path)
    if fcntl is None or path.absolute() in _held:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # no lock file: no one ever held it
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd) or 0
        except OSError:
            return None
        return None
    finally:
        os.close(fd)


# The locks this process holds, by lock file: (descriptor, holders). The TUI
# opens a session's next runtime while the previous one is still closing (a
# /resume of the session it is in): the same process may hold it twice.
_held: dict[Path, list[int]] = {}


@contextmanager
def session_lock(session_path: Path, session_id: str) -> Iterator[None]:
    """Hold ``session_path``'s lock for the block; raises :class:`SessionBusy`
    at once (never waits) when another process holds it."""
    if fcntl is None:
        yield
        return
    path = lock_path(session_path)
    key = path.absolute()
    if key in _held:
        _held[key][1] += 1
    else:
        _held[key] = [_acquire(path, session_id), 1]
    try:
        yield
    finally:
        entry = _held[key]
        entry[1] -= 1
        if entry[1] == 0:
            del _held[key]
            os.close(entry[0])  # closing the descriptor releases the flock


def _acquire(path: Path, session_id: str) -> int:
    """The locked descriptor of ``path`` (its pid written in it)."""
    assert fcntl is not None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise SessionError(f"cannot open the session lock {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        # A FIFO or device planted under the name: flock "works" on it, but it is
        # no one's lock, and truncating it fails with a traceback.
        os.close(fd)
        raise SessionError(f"cannot use the session lock {path}: not a regular file")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise SessionBusy(session_id, holder) from None
    except OSError as exc:
        # A file system without flock (some network mounts): run unlocked, as before.
        log.warning("cannot lock the session %s (%s); continuing without the lock", path, exc)
        return fd
    os.ftruncate(fd, 0)
    try:
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:
        # The flock is the lock; the pid only names the holder in SessionBusy
        # ("pid unknown" without it). A full disk fails the session's own writes.
        log.info("cannot write the pid into the session lock %s (%s)", path, exc)
    return fd


@contextmanager
def hold_session(store: SessionStore) -> Iterator[None]:
    """:func:`session_lock` for a store, if it is recorded on disk."""
    from reasonix_core.agent.session import MemorySessionStore

    if isinstance(store, MemorySessionStore):
        yield
        return
    with session_lock(store.path, store.id):
        yield
