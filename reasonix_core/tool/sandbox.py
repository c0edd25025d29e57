"""Where tools may read and write: the workspace root, extra write roots, the
session temp dir, and paths hidden from reading.

Paths are resolved through symlinks and ``..`` before every check so neither
can be used to escape. The file tools go further and use
:meth:`SandboxPolicy.locate_for_write` / :meth:`SandboxPolicy.locate_for_read`,
which resolve through directory descriptors (:mod:`reasonix_core.tool.fs_walk`)
so that what is checked is what is then opened, even while another process
swaps directories and symlinks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reasonix_core.tool.fs_walk import Located, PathUnusable, check_text, locate, opened_path


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
    except OSError as exc:
        # A component swapped between realpath's lstat and readlink (EINVAL),
        # a symlink loop, a name too long: the path cannot be resolved now.
        raise PathDenied(f"cannot resolve path {text!r}: {exc.strerror or exc}") from None


#: What the sandbox's /tmp (and /dev/shm) may hold unless ``[sandbox] tmp_size`` says.
DEFAULT_TMP_SIZE = 1 << 30


@dataclass(frozen=True, kw_only=True)
class SandboxPolicy:
    """Where file tools and bash may read and write."""

    workspace: Path
    temp_dir: Path
    allow_write: tuple[Path, ...] = ()
    forbid_read: tuple[Path, ...] = ()
    # "enforce": bash runs under bubblewrap or refuses; "off": unconfined.
    bash: Literal["enforce", "off"] = "enforce"
    network: bool = False
    #: Bytes each of the sandbox's /tmp and /dev/shm may hold ([sandbox] tmp_size).
    tmp_size: int = DEFAULT_TMP_SIZE
    extra: dict[str, object] = field(default_factory=dict)
    # A subagent's write claim (seed 000 §3.12): resolved paths that replace the
    # workspace and ``allow_write`` as write roots (the session temp dir stays).
    # None: no claim, the session's roots.
    claim: tuple[Path, ...] | None = None
    # Folders outside the write roots granted to one ``bash`` call
    # (``additional_write_dirs``; physical paths, judged by tool/write_scope.py).
    # Bound writable by descriptor for that call only; file tools never see them.
    granted: tuple[Path, ...] = ()

    @property
    def write_roots(self) -> tuple[Path, ...]:
        if self.claim is not None:
            return (self.temp_dir, *self.claim)
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
        if self.claim is not None:
            # Resolved once when the claim was made: a claimed folder swapped for
            # a symlink afterwards must not move the root somewhere else.
            return (self._root_path(self.temp_dir), *self.claim)
        return tuple(self._root_path(r) for r in self.write_roots)

    def roots_never_created(self) -> tuple[Path, ...]:
        """Write roots a file tool must not create as a file when missing (a
        missing folder root would otherwise become a file whose parent lies
        outside every root). A claimed path is the exception: the claim names
        exactly what may be written, a new file included."""
        if self.claim is not None:
            return (self._root_path(self.temp_dir),)
        return self.resolved_write_roots()

    def resolved_forbid_read(self) -> tuple[Path, ...]:
        return tuple(self._root_path(r) for r in self.forbid_read)

    def resolve(
        self, path: str | Path, *, follow_symlinks: bool = True, from_disk: bool = False
    ) -> Path:
        """Absolute, symlink- and ``..``-free form of ``path``.

        Relative paths are relative to the workspace; ``~`` is expanded. A path
        that does not exist yet resolves its deepest existing ancestor and
        appends the rest. With ``follow_symlinks=False`` the final component is
        kept as is (its parent is still resolved), for operating on a link
        itself rather than its target. ``from_disk`` accepts names read from a
        listing (see :func:`~reasonix_core.tool.fs_walk.check_text`).
        """
        text = self._usable(path, from_disk=from_disk)
        expanded = os.path.expanduser(text)
        p = Path(expanded)
        if not p.is_absolute():
            p = Path(self.workspace).expanduser() / p
        if not follow_symlinks and p.name not in ("", ".", ".."):
            return _realpath(p.parent) / p.name
        return _realpath(p)

    @staticmethod
    def _usable(path: str | Path, *, from_disk: bool = False) -> str:
        try:
            return check_text(os.fspath(path), from_disk=from_disk)
        except PathUnusable as exc:
            raise PathDenied(str(exc)) from None

    def _locate(self, path: str | Path, follow_symlinks: bool) -> Located:
        text = self._usable(path)
        base = Path(os.path.abspath(os.path.expanduser(os.fspath(self.workspace))))
        try:
            return locate(text, base, follow_final=follow_symlinks)
        except PathUnusable as exc:
            raise PathDenied(str(exc)) from None
        except OSError as exc:
            # Name the path as given (ELOOP, ENOTDIR, ENAMETOOLONG, ...); the
            # errno picks the same OSError subclass.
            raise OSError(exc.errno, exc.strerror, text) from None

    def locate_for_write(self, path: str | Path, *, follow_symlinks: bool = True) -> Located:
        """Resolve ``path`` by descriptors and require it inside a write root and
        not hidden by ``forbid_read``.

        The returned :class:`Located` holds the descriptor of the directory the
        checked path is really in; write through it (``dir_fd``) and its
        ``name``, never through the path string. Raises :class:`PathDenied`, or
        ``OSError`` when the path cannot be walked (ELOOP, ENOTDIR, ...).
        """
        located = self._locate(path, follow_symlinks)
        try:
            self._require_writable(path, located.path)
            self._require_readable(path, located.path)
        except BaseException:
            located.close()
            raise
        return located

    def locate_for_read(self, path: str | Path, *, follow_symlinks: bool = True) -> Located:
        """Resolve ``path`` by descriptors and refuse it if hidden by ``forbid_read``.

        Open the file through the returned descriptor (see
        :func:`reasonix_core.tool.fs_walk.open_final`) so a swap after the
        check cannot redirect the read; ``located.path`` is the physical path
        any further read policy must judge.
        """
        located = self._locate(path, follow_symlinks)
        try:
            self._require_readable(path, located.path)
        except BaseException:
            located.close()
            raise
        return located

    # -- checks -------------------------------------------------------------------

    def check_write(self, path: str | Path, *, follow_symlinks: bool = True) -> Path:
        """Resolve ``path`` and require it to be inside a write root.

        Write roots are the workspace, the session temp dir and ``allow_write``.
        Raises :class:`PathDenied` otherwise.
        """
        resolved = self.resolve(path, follow_symlinks=follow_symlinks)
        self._require_writable(path, resolved)
        return resolved

    def _require_writable(self, path: str | Path, resolved: Path) -> None:
        roots = self.resolved_write_roots()
        if any(is_within(resolved, root) for root in roots):
            return
        shown = ", ".join(str(r) for r in roots)
        if self.claim is not None:
            claimed = ", ".join(self.display(r) for r in self.claim) or "nothing"
            raise PathDenied(
                f"path denied: {os.fspath(path)!r} resolves to {resolved}, which is outside "
                f"this subagent's write claim ({claimed}); write only the claimed paths"
            )
        raise PathDenied(
            f"path denied: {os.fspath(path)!r} resolves to {resolved}, which is outside "
            f"the writable roots ({shown}); file tools may only write inside the workspace, "
            "the session temp dir or [sandbox] allow_write"
        )

    def check_read(self, path: str | Path, *, follow_symlinks: bool = True) -> Path:
        """Resolve ``path`` and refuse it if it lies inside a ``forbid_read`` path."""
        resolved = self.resolve(path, follow_symlinks=follow_symlinks)
        self._require_readable(path, resolved)
        return resolved

    def _require_readable(self, path: str | Path, resolved: Path) -> None:
        if self._forbidden(resolved, self.resolved_forbid_read()):
            raise PathDenied(
                f"path denied: {os.fspath(path)!r} is hidden by [sandbox] forbid_read; "
                "it cannot be read, listed or searched"
            )

    def is_hidden(self, path: str | Path) -> bool:
        """True if ``path`` (resolved) lies inside a ``forbid_read`` path.

        The non-raising form of :meth:`check_read`, used by listing and search
        tools to skip entries silently.
        """
        try:
            resolved = self.resolve(path, from_disk=True)
        except PathDenied:
            return True
        return self._forbidden(resolved, self.resolved_forbid_read())

    def opened_is_hidden(self, fd: int) -> bool:
        """True if the file open as ``fd`` lies inside a ``forbid_read`` path.

        Judges what was opened, not the name it was opened by, so a swap
        between a listing and the open cannot reveal a hidden file. Where the
        kernel cannot tell the path (see :func:`opened_path`) only the name
        check made before the open applies.
        """
        forbidden = self.resolved_forbid_read()
        if not forbidden:
            return False
        real = opened_path(fd)
        return real is not None and self._forbidden(real, forbidden)

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
