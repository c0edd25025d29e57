"""The tree walk of ls, glob and grep (:class:`Walker`), by directory descriptors,
and the session's per-walk deny filter (:func:`read_filter`).

Synchronous; the tools run it in a worker thread. Re-exported by :mod:`._fs`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.fs_walk import opened_path
from reasonix_core.tool.ignore import IgnoreMatcher
from reasonix_core.tool.sandbox import SandboxPolicy

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})
# Kernel pseudo-filesystems are never walked into (reads there can block or lie).
PSEUDO_FS = frozenset({Path("/proc"), Path("/sys"), Path("/dev")})
_PSEUDO_FS_TEXT = frozenset(str(p) for p in PSEUDO_FS)
WALK_MAX_ENTRIES = 200_000
WALK_TIME_BUDGET = 30.0


@dataclass(frozen=True, slots=True)
class WalkFilter:
    """The session's "may ``tool`` not see this path?" check, as a walk uses it."""

    # (physical path text, is it a symlink; None: look it up) -> skip it?
    denied: Callable[[str, bool | None], bool]
    # False when nothing directly in this directory can be denied unless it is
    # a symlink: the walk then checks only the symlinks there.
    may_deny_in: Callable[[str], bool] = lambda directory: True
    # (path followed, physical path of what was opened) -> skip it? For a file
    # opened by a path that may lead elsewhere than the walk checked (a symlink,
    # a folder on the way swapped for one): judged on what was opened.
    reached: Callable[[str, str], bool] | None = None

    def opened_denied(self, path: str, real: str) -> bool:
        if self.reached is not None:
            return self.reached(path, real)
        return self.denied(real, False)


class _WalkChecks(Protocol):
    """One walk's deny check (the permission policy's ``ReadFilter``)."""

    def __call__(self, path: Path | str, *, is_link: bool | None = None) -> bool: ...

    def may_deny_in(self, directory: str) -> bool: ...

    def reached(self, path: str, real: str) -> bool: ...


@runtime_checkable
class _ReadFilterSource(Protocol):
    """What offers a per-walk deny check beside ``read_denied`` (the policy)."""

    def read_filter(self, tool: str) -> _WalkChecks: ...


def read_filter(ctx: ToolContext, tool: str) -> WalkFilter | None:
    """The session's "may ``tool`` not see this path?" check for one walk, or None.

    Installed by the runtime as ``ctx.read_denied`` (the policy's
    deny rules and protected paths); walking tools skip what it refuses, so a
    ``Read(.env)`` deny rule cannot be bypassed by listing or searching the
    folder that holds ``.env``. When ``read_denied`` is a method of an object
    that also offers ``read_filter(tool)`` (the permission policy does), that
    is used: it resolves the deny rules once for the whole walk instead of
    once per entry, and tells which folders need no check at all.
    """
    check = ctx.read_denied
    if check is None:
        return None
    owner = getattr(check, "__self__", None)
    if isinstance(owner, _ReadFilterSource):
        walk = owner.read_filter(tool)
        return WalkFilter(
            denied=lambda text, is_link: bool(walk(text, is_link=is_link)),
            may_deny_in=walk.may_deny_in,
            reached=walk.reached,
        )
    return WalkFilter(denied=lambda text, is_link: bool(check(tool, Path(text))))


# --------------------------------------------------------------------------- walking


@dataclass(slots=True)
class Entry:
    """One walked entry. ``dir_fd`` is the open directory holding ``name``; it
    stays open only until the walk moves on, so use it at once (open the file
    through it: the name then cannot lead anywhere the walk did not check)."""

    text: str  # the physical path, as text (no symlink on the way, no ..)
    parts: tuple[str, ...]
    is_dir: bool
    is_symlink: bool
    dir_fd: int
    name: str

    @property
    def path(self) -> Path:
        return Path(self.text)

    @property
    def rel(self) -> str:
        return "/".join(self.parts)


# Directories are opened for listing relative to their parent's descriptor, never
# following a symlink: the walk stays on the physical tree it checked.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Each level of the walk holds its directory open; deeper folders are not entered
# (counted as unreadable) rather than risk running out of descriptors.
WALK_MAX_DEPTH = 256
# The share of the process's descriptor limit all walks together may hold open
# (read-only calls run concurrently; the old walk held none between listings):
# a folder past it is not entered, like one past WALK_MAX_DEPTH, so a deep tree
# walked by several calls at once cannot starve the rest of the process.
WALK_DESCRIPTOR_SHARE = 0.25


class _DescriptorPool:
    """How many directory descriptors the process's walks hold, against their share."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held = 0
        self._cap: int | None = None

    def _limit(self) -> int:
        if self._cap is None:
            try:
                import resource  # POSIX only

                soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                unlimited = soft == resource.RLIM_INFINITY
            except (ImportError, OSError, ValueError):
                soft, unlimited = -1, True
            if soft < 0 or unlimited:
                soft = 1 << 16
            self._cap = max(16, int(soft * WALK_DESCRIPTOR_SHARE))
        return self._cap

    def take(self, *, force: bool = False) -> bool:
        """Count one more held descriptor; False (nothing counted) past the share."""
        with self._lock:
            if not force and self._held >= self._limit():
                return False
            self._held += 1
            return True

    def give_back(self) -> None:
        """Uncount a :meth:`take` whose open failed."""
        with self._lock:
            self._held -= 1

    def close(self, fd: int) -> None:
        """Close a descriptor :meth:`take` counted."""
        try:
            os.close(fd)
        finally:
            with self._lock:
                self._held -= 1


_WALK_DESCRIPTORS = _DescriptorPool()


def _covered(text: str, roots: tuple[str, ...]) -> bool:
    """Whether the physical path ``text`` is one of ``roots`` or below one."""
    return any(text == r or text.startswith(r.rstrip("/") + "/") for r in roots)


@dataclass
class _Level:
    """A directory being walked: its descriptor, its sorted listing, and what
    applies below it."""

    fd: int
    text: str
    parts: tuple[str, ...]
    listing: list[tuple[str, bool, bool]]
    matcher: IgnoreMatcher
    # The forbid_read paths that may cover entries here (below the walk's root,
    # only those inside this directory): none, and no entry needs the check.
    forbidden: tuple[str, ...]
    # Whether the walk's filter must judge each entry here (symlinks always).
    check_hide: bool
    next: int = 0


@dataclass
class Walker:
    """Depth-first, name-sorted walk of a resolved directory, by descriptors.

    Each directory is opened relative to its parent's open descriptor with
    ``O_NOFOLLOW``, so the walk costs a few system calls per entry whatever the
    depth, and a directory swapped for a symlink mid-walk is not entered. What
    each directory really is (its path as the kernel knows it) is judged
    against ``forbid_read`` once it is open.

    Skips ``.git``/``node_modules``/``__pycache__``, hidden entries (unless
    ``include_hidden``), ``forbid_read`` paths (silently) and, with
    ``gitignore``, ignored entries. Symlinked directories are reported but not
    followed, nor are /proc, /sys and /dev. Counters record what was skipped,
    for notes; ``truncated`` is set when the entry or time budget ran out.
    """

    root: Path
    sandbox: SandboxPolicy
    gitignore: bool = True
    include_hidden: bool = False
    max_depth: int | None = None
    descend: Callable[[tuple[str, ...]], bool] | None = None
    # Names of files (and symlinks) the caller can use; the rest are dropped as
    # they are listed, before any other check (so the skip counters leave them out).
    want_name: Callable[[str], bool] | None = None
    # Entries this denies are skipped silently, like forbid_read ones.
    hide: WalkFilter | None = None
    stop: threading.Event | None = None
    skipped_hidden: int = 0
    skipped_ignored: int = 0
    skipped_dirs: set[str] = field(default_factory=set)
    unreadable: int = 0
    # Folders not entered because they lie deeper than WALK_MAX_DEPTH (also
    # counted as unreadable): a search must say its results miss them.
    too_deep: int = 0
    max_entries: int = WALK_MAX_ENTRIES
    time_budget: float = WALK_TIME_BUDGET
    visited: int = 0
    truncated: bool = False
    # forbid_read as text, resolved when the walk starts.
    _forbidden: tuple[str, ...] = field(default=(), init=False, repr=False)

    def __iter__(self) -> Iterator[Entry]:
        self._forbidden = tuple(str(f) for f in self.sandbox.resolved_forbid_read())
        root = self._open_root()
        if root is None:
            return
        stack = [root]
        try:
            deadline = time.monotonic() + self.time_budget
            while stack:
                if self.stop is not None and self.stop.is_set():
                    return
                top = stack[-1]
                if top.next >= len(top.listing):
                    _WALK_DESCRIPTORS.close(stack.pop().fd)
                    continue
                name, is_link, is_dir = top.listing[top.next]
                top.next += 1
                self.visited += 1
                if self.visited > self.max_entries or (
                    self.visited % 256 == 0 and time.monotonic() > deadline
                ):
                    self.truncated = True
                    return
                text = top.text + "/" + name if top.text != "/" else "/" + name
                if self._skipped(top, name, text, is_link, is_dir):
                    continue
                rel = (*top.parts, name)
                yield Entry(text, rel, is_dir, is_link, top.fd, name)
                if is_dir and self._goes_below(rel):
                    child = self._open_child(top, name, text, rel, len(stack))
                    if child is not None:
                        stack.append(child)
        finally:
            for level in stack:
                _WALK_DESCRIPTORS.close(level.fd)

    def _open_root(self) -> _Level | None:
        """The root's level (its ignore rules from the folders above it), or None
        when it cannot be opened or listed."""
        root_text = str(self.root)
        if self.gitignore:
            matcher = IgnoreMatcher.for_directory(self.root, stop_at=self.sandbox.root)
        else:
            matcher = IgnoreMatcher()
        try:
            root_fd = os.open(root_text, _DIR_FLAGS)
        except OSError:
            self.unreadable += 1
            return None
        _WALK_DESCRIPTORS.take(force=True)  # a walk always holds its root
        return self._enter(root_fd, root_text, (), matcher, self._forbidden)

    def _skipped(self, top: _Level, name: str, text: str, is_link: bool, is_dir: bool) -> bool:
        """Whether the entry is left out (counted, when a note reports it): skipped
        folders, pseudo-filesystems, forbid_read and denied paths, hidden and
        gitignored entries."""
        if is_dir and name in SKIP_DIRS:
            self.skipped_dirs.add(name)
            return True
        if is_dir and text in _PSEUDO_FS_TEXT:
            return True
        if top.forbidden and _covered(text, top.forbidden):
            return True
        if is_link and self._forbidden and self.sandbox.is_hidden(text):
            return True
        hide = self.hide
        if hide is not None and (is_link or top.check_hide) and hide.denied(text, is_link):
            return True
        if not self.include_hidden and name.startswith("."):
            self.skipped_hidden += 1
            return True
        m = top.matcher
        if m and m.is_ignored(text, is_dir):
            self.skipped_ignored += 1
            return True
        return False

    def _goes_below(self, rel: tuple[str, ...]) -> bool:
        """Whether the walk enters the directory ``rel`` (depth limit, caller's say)."""
        return (self.max_depth is None or len(rel) < self.max_depth) and (
            self.descend is None or self.descend(rel)
        )

    def _open_child(
        self, top: _Level, name: str, text: str, rel: tuple[str, ...], depth: int
    ) -> _Level | None:
        """Open directory ``name`` through its parent's descriptor (never following
        a symlink) and list it; None, counted unreadable, when that fails."""
        if depth >= WALK_MAX_DEPTH or not _WALK_DESCRIPTORS.take():
            self.unreadable += 1
            self.too_deep += 1
            return None
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=top.fd)
        except OSError:  # gone, unreadable, or swapped for a symlink
            _WALK_DESCRIPTORS.give_back()
            self.unreadable += 1
            return None
        below = tuple(f for f in top.forbidden if f.startswith(text + "/"))
        return self._enter(fd, text, rel, top.matcher, below)

    def _enter(
        self,
        fd: int,
        text: str,
        parts: tuple[str, ...],
        parent: IgnoreMatcher,
        forbidden: tuple[str, ...],
    ) -> _Level | None:
        """List the directory open as ``fd`` (closing it on failure).

        What was opened is judged, not the name it was opened by: a directory
        moved under a hidden folder since its parent was listed must not
        reveal the names in it.
        """
        listed: list[tuple[str, bool, bool]] = []
        want = self.want_name
        has_ignore_file = False
        try:
            if self._opened_hidden(fd):
                _WALK_DESCRIPTORS.close(fd)
                return None
            with os.scandir(fd) as it:
                for e in it:
                    try:
                        is_link = e.is_symlink()
                        is_dir = not is_link and e.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    name = e.name
                    if name == ".gitignore":
                        has_ignore_file = True
                    if is_dir or want is None or want(name):
                        listed.append((name, is_link, is_dir))
        except OSError:
            _WALK_DESCRIPTORS.close(fd)
            self.unreadable += 1
            return None
        except BaseException:  # a caller's callback failed: the walk ends, fd closed
            _WALK_DESCRIPTORS.close(fd)
            raise
        try:
            listed.sort()
            matcher = parent
            if self.gitignore and parts and has_ignore_file:
                matcher = parent.child(Path(text), dir_fd=fd)
            check_hide = self.hide is not None and self.hide.may_deny_in(text)
        except BaseException:
            _WALK_DESCRIPTORS.close(fd)
            raise
        return _Level(fd, text, parts, listed, matcher, forbidden, check_hide)

    def _opened_hidden(self, fd: int) -> bool:
        """:meth:`SandboxPolicy.opened_is_hidden` against the walk's forbid_read
        list, resolved once when it started."""
        if not self._forbidden:
            return False
        real = opened_path(fd)
        if real is None:
            return False
        return _covered(str(real), self._forbidden)

    def truncated_note(self) -> str:
        if not self.truncated:
            return ""
        return (
            f"… the walk stopped early (after {self.visited} entries or "
            f"{self.time_budget:.0f} s); results are incomplete - narrow the path or pattern"
        )

    def too_deep_note(self) -> str:
        if not self.too_deep:
            return ""
        folders = "folder" if self.too_deep == 1 else "folders"
        return (
            f"… {self.too_deep} {folders} nested too deep to walk (past {WALK_MAX_DEPTH} "
            "levels, or past the folders all searches may hold open at once) not searched; "
            "results are incomplete - search from a path nearer them"
        )

    def skipped_note(self) -> str:
        parts = []
        if self.skipped_hidden:
            parts.append(f"{self.skipped_hidden} hidden")
        if self.skipped_ignored:
            parts.append(f"{self.skipped_ignored} gitignored")
        if self.skipped_dirs:
            parts.append(", ".join(sorted(self.skipped_dirs)))
        return ", ".join(parts)
