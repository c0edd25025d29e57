"""Where the file tools read and write a file's text when it is not the host disk.

An editor that drives the session (an ACP client advertising
``fs.readTextFile`` / ``fs.writeTextFile``) holds the truth for the files it
has open: an unsaved buffer is newer than the disk, and an edit should land in
the buffer the user is looking at. The surface gives such an editor to the
session build as a :class:`TextFiles`; :class:`~reasonix_core.tool.env.SessionEnv`
carries it, and the file tools (``read_file`` and the writers) go through it for
the workspace's files. Everything else stays ours: the sandbox's confinement and
``forbid_read``, the permission gate, the observation ledger and its FS_* codes,
the per-path lock. ``None`` in the environment is the host disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class TextFilesError(Exception):
    """The editor could not read or write the file; the message says why (the
    model sees it as the call's error)."""


class TextFiles(Protocol):
    """An editor's view of text files, by absolute path (already checked by the
    sandbox). Raise :class:`TextFilesError` for a refusal or failure."""

    async def read_text(self, path: Path) -> str | None:
        """The file's current text (an unsaved buffer's if open); None: no such file."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Replace (or create) the file's text."""
        ...
