"""Where tools may read and write: the workspace root, extra write roots, the
session temp dir, and paths hidden from reading.

Paths are resolved through symlinks and ``..`` before every check so neither
can be used to escape.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


class PathDenied(Exception):
    """A path is outside the write roots or hidden by ``forbid_read``."""


def is_within(path: Path, root: Path) -> bool:
    """True if ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


def _realpath(path: str | Path) -> Path:
    """``os.path.realpath`` that turns unusable strings into ``PathDenied``.

    Non-strict realpath resolves every existing component (symlinks and ``..``)
    and appends the non-existing rest lexically, which is exactly "resolve the
    deepest existing ancestor then append the remainder".
    """
    text = os.fspath(path)
    if "\x00" in text:
        raise PathDenied(f"invalid path {text!r}: contains a NUL byte")
    try:
        os.fsencode(text)
        return Path(os.path.realpath(text))
    except (ValueError, UnicodeError) as exc:
        raise PathDenied(f"invalid path {text!r}: {exc}") from None


@dataclass(frozen=True, kw_only=True)
class SandboxPolicy:
    workspace: Path
    temp_dir: Path
    allow_write: tuple[Path, ...] = ()
    forbid_read: tuple[Path, ...] = ()
    # "enforce": bash runs under bubblewrap or refuses; "off": unconfined.
    bash: Literal["enforce", "off"] = "enforce"
    network: bool = False
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def write_roots(self) -> tuple[Path, ...]:
        return (self.workspace, self.temp_dir, *self.allow_write)

    # -- resolution -----------------------------------------------------------

    @property
    def root(self) -> Path:
        """The workspace, resolved."""
        return _realpath(Path(self.workspace).expanduser())

    def _root_path(self, entry: Path | str) -> Path:
        """Resolve a configured root: ``~`` expanded, relative to the workspace."""
        p = Path(os.path.expanduser(os.fspath(entry)))
        if not p.is_absolute():
            p = Path(self.workspace).expanduser() / p
        return _realpath(p)

    def resolved_write_roots(self) -> tuple[Path, ...]:
        return tuple(self._root_path(r) for r in self.write_roots)

    def resolved_forbid_read(self) -> tuple[Path, ...]:
        return tuple(self._root_path(r) for r in self.forbid_read)

    def resolve(self, path: str | Path, *, follow_symlinks: bool = True) -> Path:
        """Absolute, symlink- and ``..``-free form of ``path``.

        Relative paths are relative to the workspace; ``~`` is expanded. A path
        that does not exist yet resolves its deepest existing ancestor and
        appends the rest. With ``follow_symlinks=False`` the final component is
        kept as is (its parent is still resolved), for operating on a link
        itself rather than its target.
        """
        text = os.fspath(path)
        if not isinstance(text, str):
            raise PathDenied(f"invalid path {text!r}: expected text")
        if not text.strip():
            raise PathDenied("invalid path: empty")
        if "\x00" in text:
            raise PathDenied(f"invalid path {text!r}: contains a NUL byte")
        expanded = os.path.expanduser(text)
        p = Path(expanded)
        if not p.is_absolute():
            p = Path(self.workspace).expanduser() / p
        if not follow_symlinks and p.name not in ("", ".", ".."):
            return _realpath(p.parent) / p.name
        return _realpath(p)

    # -- checks -------------------------------------------------------------------

    def check_write(self, path: str | Path, *, follow_symlinks: bool = True) -> Path:
        """Resolve ``path`` and require it to be inside a write root.

        Write roots are the workspace, the session temp dir and ``allow_write``.
        Raises :class:`PathDenied` otherwise.
        """
        resolved = self.resolve(path, follow_symlinks=follow_symlinks)
        roots = self.resolved_write_roots()
        if any(is_within(resolved, root) for root in roots):
            return resolved
        shown = ", ".join(str(r) for r in roots)
        raise PathDenied(
            f"path denied: {os.fspath(path)!r} resolves to {resolved}, which is outside "
            f"the writable roots ({shown}); file tools may only write inside the workspace, "
            "the session temp dir or [sandbox] allow_write"
        )

    def check_read(self, path: str | Path, *, follow_symlinks: bool = True) -> Path:
        """Resolve ``path`` and refuse it if it lies inside a ``forbid_read`` path."""
        resolved = self.resolve(path, follow_symlinks=follow_symlinks)
        if self._forbidden(resolved, self.resolved_forbid_read()):
            raise PathDenied(
                f"path denied: {os.fspath(path)!r} is hidden by [sandbox] forbid_read; "
                "it cannot be read, listed or searched"
            )
        return resolved

    def is_hidden(self, path: str | Path) -> bool:
        """True if ``path`` (resolved) lies inside a ``forbid_read`` path.

        The non-raising form of :meth:`check_read`, used by listing and search
        tools to skip entries silently.
        """
        try:
            resolved = self.resolve(path)
        except PathDenied:
            return True
        return self._forbidden(resolved, self.resolved_forbid_read())

    @staticmethod
    def _forbidden(resolved: Path, forbidden: tuple[Path, ...]) -> bool:
        return any(is_within(resolved, f) for f in forbidden)

    def display(self, path: Path) -> str:
        """``path`` relative to the workspace when inside it, else absolute."""
        root = self.root
        if is_within(path, root):
            rel = path.relative_to(root).as_posix()
            return rel or "."
        return str(path)
