"""Atomic file replacement, shared by every writer of Reasonix's own state files
(config, .env, metrics, checkpoints): a reader never sees a half-written file
and a crash leaves either the old or the new content. Also the one string test
of path containment (:func:`within`)."""

from __future__ import annotations

import os
from pathlib import Path


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
