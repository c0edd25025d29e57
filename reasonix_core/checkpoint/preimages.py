"""Checkpoints without git: copies of the files the file tools are about to write.

When the host has no git, the shadow store cannot see what ``bash`` changes.
What the file tools change is still covered: before each call of a tool of
the ``edit`` family, the files its arguments name (the same reading of the
arguments the permission rules make, :meth:`permission.rules.Call.build`) are
copied into ``<id>.rewind/files/`` by content (git's blob id, so a record reads
the same either way), and at the end of the turn their new state is recorded
too. Every such checkpoint says that bash changes are not covered.
"""

from __future__ import annotations

import os
import secrets
import stat as stat_mod
from collections.abc import Iterable, Sequence
from pathlib import Path

from reasonix_core.checkpoint.store import MODE_EXEC, MODE_FILE, MODE_LINK, Entry, blob_id
from reasonix_core.errors import CheckpointError
from reasonix_core.fsutil import PRIVATE_FILE, private_dir, within


class PreImageStore:
    def __init__(self, root: Path, workspace: Path) -> None:
        self.root = root / "files"
        self.workspace = Path(os.path.realpath(workspace))

    def names(self, paths: Iterable[str]) -> list[str]:
        """Workspace-relative names of the absolute ``paths`` inside the workspace."""
        root = str(self.workspace)
        return sorted({os.path.relpath(p, root) for p in paths if within(p, root) and p != root})

    def capture(self, names: Sequence[str]) -> dict[str, Entry | None]:
        """Each file's state now (None: absent), its bytes kept by blob id."""
        found: dict[str, Entry | None] = {}
        for name in names:
            path = self.workspace / name
            try:
                info = os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                found[name] = None
                continue
            if stat_mod.S_ISLNK(info.st_mode):
                data, mode = os.fsencode(os.readlink(path)), MODE_LINK
            elif stat_mod.S_ISREG(info.st_mode):
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
                try:
                    chunks = []
                    while chunk := os.read(fd, 1 << 20):
                        chunks.append(chunk)
                finally:
                    os.close(fd)
                data = b"".join(chunks)
                mode = MODE_EXEC if info.st_mode & stat_mod.S_IXUSR else MODE_FILE
            else:
                continue  # a folder or a device: nothing a file tool writes
            oid = blob_id(data)
            self._keep(oid, data)
            found[name] = Entry(mode, oid)
        return found

    def _keep(self, oid: str, data: bytes) -> None:
        target = self.root / oid[:2] / oid[2:]
        if target.exists():
            return
        private_dir(target.parent)  # the user's code: private (fsutil)
        tmp = target.with_name(f".{oid[2:]}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)  # a killed copy leaves a temp file, never a torn blob

    def blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for oid in set(oids):
            try:
                found[oid] = (self.root / oid[:2] / oid[2:]).read_bytes()
            except OSError:
                raise CheckpointError(f"the copy {oid} is missing from {self.root}") from None
        return found
