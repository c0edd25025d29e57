"""Which folders outside the write roots ``bash`` may be granted without asking.

Covered are the folders the user named before the session (``--add-dir`` and
``[permissions] additional_directories``, a project's only once its folder is
trusted) and the ones granted "for this session" in the grant dialog. Session
grants live in this object only (one per session's permission gate): never
written to any file, gone when the session ends (exit, ``/new``, ``/resume``). A folder is covered when it is one of these or lies below one, compared
on physical paths (``/a`` does not cover ``/a-b``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from reasonix_core.tool.sandbox import is_within

__all__ = ["WriteGrants"]


class WriteGrants:
    def __init__(self, configured: Iterable[Path | str] = ()) -> None:
        self.configured: tuple[Path, ...] = tuple(
            dict.fromkeys(Path(os.path.realpath(os.path.expanduser(p))) for p in configured)
        )
        self._session: list[Path] = []

    @property
    def session(self) -> tuple[Path, ...]:
        return tuple(self._session)

    def covers(self, path: Path) -> bool:
        return any(is_within(path, root) for root in (*self.configured, *self._session))

    def uncovered(self, paths: Iterable[Path]) -> tuple[Path, ...]:
        return tuple(p for p in paths if not self.covers(p))

    def grant_session(self, paths: Iterable[Path]) -> None:
        for path in paths:
            if not self.covers(path):
                self._session.append(path)
