"""Keeping git metadata honest around sandboxed commands.

Git on the host runs programs named in repository metadata: hooks,
``core.fsmonitor``, ``core.hooksPath``, filter and diff drivers, and a
``commondir`` file can point a git directory at another one's config. A
sandboxed command may write the workspace, so without care it could plant
any of these and the user's next ``git status`` would run it unconfined.

Two mechanisms, because mounts can only protect what already exists:

- :func:`git_binds` (prevention): bubblewrap arguments that bind every git
  directory of the workspace onto itself, so it cannot be renamed, replaced
  or deleted (a mount point is busy), and bind its risky entries
  (:data:`RISKY_ENTRIES`) read-only. A ``.git`` gitfile is bound read-only.
  A missing ``hooks`` directory is created first so it can be protected too.
  Everything else in ``.git`` stays writable: status, add, commit, branch and
  checkout keep working; ``git config`` writes fail inside the sandbox.
- :class:`GitGuard` (detection, after each sandboxed command): what cannot be
  bound because it does not exist yet. A ``.git`` that appears at the
  workspace root, a new git directory under ``.git/modules`` or
  ``.git/worktrees``, a risky entry that appears where there was none, or any
  ``commondir`` in the workspace's own git directory is checked; unless it is
  a plain repository with only harmless settings (what ``git init`` and
  ``git clone`` write), it is renamed aside (``*.reasonix-quarantine``) so
  that git no longer finds it, and the tool result says so.

Repositories registered in the workspace's index as gitlinks (submodules and
embedded repositories: host ``git status`` recurses into each populated one
and runs its settings) count as git directories of the workspace: protected
when they exist, judged when they appear.

A folder granted to one ``bash`` call (``additional_write_dirs``) is often a
folder of checkouts: :func:`nested_git_binds` protects every repository below its
top level the same way, found by a bounded scan (:func:`nested_git_entries`);
a folder past the bounds is not granted.

Not covered: a nested repository in the workspace that is not in the index
(``sub/.git`` the outer repository does not track) is not inspected; host git
only runs its settings when the user runs git inside it. See docs/PERMISSIONS.md.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from reasonix_core.errors import ReasonixError
from reasonix_core.tool.host_git import git_command, git_env, host_git
from reasonix_core.tool.sandbox import is_within

#: Entries of a git directory that decide what host git executes or which
#: config it reads. ``info/`` is left writable: attributes there only select
#: drivers that must be defined in (read-only) config.
RISKY_ENTRIES: tuple[str, ...] = ("config", "config.worktree", "hooks", "commondir")
QUARANTINE_SUFFIX = ".reasonix-quarantine"
# Bounds on the walk through .git/modules (module names may contain "/").
_MAX_DEPTH = 8
_MAX_GITDIRS = 256


class UnsafeGitLayout(ReasonixError):
    """The workspace's git metadata has a shape the sandbox cannot protect."""


def is_gitdir(path: Path) -> bool:
    """True when ``path`` looks like a git directory (``.git`` or a bare repository)."""
    return (path / "HEAD").is_file() and (
        (path / "objects").is_dir() or (path / "commondir").is_file()
    )


def _nested_gitdirs(container: Path, depth: int = 0) -> Iterator[Path]:
    """Git directories under ``.git/modules`` (recursively) or ``.git/worktrees``."""
    if depth > _MAX_DEPTH:
        return
    try:
        children = sorted(p for p in container.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        if is_gitdir(child):
            yield child
            yield from _nested_gitdirs(child / "modules", depth + 1)
            yield from _nested_gitdirs(child / "worktrees", depth + 1)
        else:
            yield from _nested_gitdirs(child, depth + 1)


def _gitdir_tree(gitdir: Path) -> list[Path]:
    """``gitdir`` and the git directories under its ``modules`` and ``worktrees``."""
    found = [gitdir]
    for container in ("modules", "worktrees"):
        found += _nested_gitdirs(gitdir / container, 1)
    return found


def _plain(path: Path, workspace: Path) -> bool:
    """True when ``path`` has no symlink in it and lies inside ``workspace``
    (binding it writable then grants nothing new)."""
    return os.path.realpath(path) == str(path) and is_within(path, workspace)


_gitlink_cache: dict[str, tuple[tuple[int, int, int], tuple[str, ...]]] = {}
_gitlink_lock = threading.Lock()


def gitlinks(workspace: Path) -> tuple[str, ...]:
    """Paths of the gitlinks (submodules, embedded repositories) in the
    workspace's index: host ``git status`` recurses into each populated one and
    runs its settings.

    Asks the system git through :mod:`host_git` (hardened), and only when the
    index changed since the last answer.
    """
    index = workspace / ".git" / "index"
    try:
        info = index.stat()
    except OSError:
        return ()
    key = (info.st_ino, info.st_mtime_ns, info.st_size)
    with _gitlink_lock:
        cached = _gitlink_cache.get(str(workspace))
        if cached is not None and cached[0] == key:
            return cached[1]
    git = host_git()
    if git is None:
        return ()  # no host git to run anything either
    env = git_env(workspace / ".git", workspace, {"GIT_OPTIONAL_LOCKS": "0"})
    try:
        proc = subprocess.run(
            git_command(git, "ls-files", "--stage", "-z"),
            cwd=workspace, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ()
    paths: list[str] = []
    for record in proc.stdout.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        if meta.startswith(b"160000 ") and name:
            paths.append(os.fsdecode(name))
    found = tuple(paths)
    with _gitlink_lock:
        _gitlink_cache[str(workspace)] = (key, found)
    return found


def _gitlinked_dot_gits(workspace: Path) -> list[Path]:
    """``<gitlink>/.git`` for every gitlink that has one, inside the workspace."""
    found = []
    for name in gitlinks(workspace):
        dot_git = workspace / name / ".git"
        if os.path.lexists(dot_git) and is_within(Path(os.path.normpath(dot_git)), workspace):
            found.append(dot_git)
    return found


def gitdirs(workspace: Path) -> list[Path]:
    """Every git directory host git may use from the workspace: ``.git`` (if a
    directory), the nested ones inside it, and those of gitlinked repositories
    whose ``.git`` is a directory. Symlinked ones are left out."""
    found: list[Path] = []
    root = workspace / ".git"
    if root.is_dir() and not root.is_symlink():
        found += _gitdir_tree(root)
        for dot_git in _gitlinked_dot_gits(workspace):
            if dot_git.is_dir() and _plain(dot_git, workspace):
                found += _gitdir_tree(dot_git)
    return found[:_MAX_GITDIRS]


#: Bounds on the scan of a granted folder for the repositories below its top
#: level. A grant is for one call, so the scan runs before every such call: it
#: must stay quick, and a tree bigger than this (a home-sized folder) is refused
#: rather than bound unchecked. Sized for a real checkout with its dependencies
#: (a ``.venv`` or ``node_modules`` is often over 10 levels deep and tens of
#: thousands of entries; repositories can hide inside them, e.g. ``.venv/src/x/.git``
#: from an editable install). Measured warm: 72,000 entries (``/usr/lib``) in
#: 0.4-0.5 s, 15,000 (this repository with its venv) in 0.07 s.
NESTED_SCAN_MAX_DEPTH = 40
NESTED_SCAN_MAX_ENTRIES = 100_000


class NestedScanTooLarge(UnsafeGitLayout):
    """A granted folder is too big (or partly unreadable) to check for git
    repositories below it."""


def nested_git_entries(root: Path) -> list[Path]:
    """Every ``.git`` (directory, gitfile or symlink) and bare repository below
    ``root``'s top level, found with a bounded scan that follows no symlink.

    ``root`` must be resolved. ``root/.git`` itself is not listed (the caller
    protects it as a writable root's). A found git directory is not entered: its
    ``modules`` and ``worktrees`` are :func:`git_binds`' business. Raises
    :class:`NestedScanTooLarge` when the scan would pass its bounds or cannot
    list a folder: what is not checked is not granted.
    """
    found: list[Path] = []
    seen = 0
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as entries:
                children = list(entries)
        except OSError as exc:
            raise NestedScanTooLarge(
                f"{folder} cannot be listed ({exc.strerror or exc}) to check it for git "
                "repositories; grant the checkout itself"
            ) from None
        seen += len(children)
        if seen > NESTED_SCAN_MAX_ENTRIES:
            raise NestedScanTooLarge(
                f"{root} holds too many entries (over {NESTED_SCAN_MAX_ENTRIES:,}) to "
                "check for git repositories; grant the checkout itself"
            )
        for child in children:
            path = Path(child.path)
            if child.name == ".git":
                if folder != root:
                    found.append(path)
                continue
            if not child.is_dir(follow_symlinks=False):
                continue
            if is_gitdir(path):
                found.append(path)  # a bare repository: pushes to it run its hooks
                continue
            if depth + 1 > NESTED_SCAN_MAX_DEPTH:
                raise NestedScanTooLarge(
                    f"{root} is nested too deep (over {NESTED_SCAN_MAX_DEPTH} levels) to "
                    "check for git repositories; grant the checkout itself"
                )
            pending.append((path, depth + 1))
    return sorted(found)


def nested_git_binds(root: Path) -> list[str]:
    """bubblewrap arguments protecting every repository below a granted folder's
    top level (:func:`nested_git_entries`) as :func:`git_binds` protects a writable
    root's own: a checkout's ``.git`` through :func:`git_binds`, a bare repository
    through :func:`gitdir_binds`. Raises :class:`UnsafeGitLayout` (a symlinked
    ``.git``) or :class:`NestedScanTooLarge`.

    A ``.git`` directory is bound as a git directory: the scan has already walked
    its work tree, so the submodules and embedded repositories that
    :func:`git_binds` would look up (a host ``git ls-files`` per repository) are
    entries of their own. A gitfile or symlinked ``.git`` goes through
    :func:`git_binds`, which follows or refuses it."""
    argv: list[str] = []
    for entry in nested_git_entries(root):
        if entry.name == ".git" and (entry.is_symlink() or not entry.is_dir()):
            argv += git_binds(entry.parent)
        else:
            argv += gitdir_binds(entry)
    return argv


def gitdir_binds(gitdir: Path) -> list[str]:
    """bubblewrap arguments binding the git directory ``gitdir`` and those under
    its ``modules`` and ``worktrees`` onto themselves, their risky entries read-only."""
    argv: list[str] = []
    for inner in _gitdir_tree(gitdir):
        argv += _one_gitdir_binds(inner)
    return argv


def _one_gitdir_binds(gitdir: Path) -> list[str]:
    # Bound onto itself so it cannot be renamed or replaced (a mount point is busy).
    argv = ["--bind", str(gitdir), str(gitdir)]
    hooks = gitdir / "hooks"
    if not os.path.lexists(hooks):
        try:
            hooks.mkdir()
        except OSError:
            pass  # the guard flags a hooks directory that appears later
    for name in RISKY_ENTRIES:
        entry = gitdir / name
        if entry.is_symlink():
            target = Path(os.path.realpath(entry))
            if target.exists():
                argv += ["--ro-bind", str(target), str(target)]
        elif entry.exists():
            argv += ["--ro-bind", str(entry), str(entry)]
    return argv


def git_binds(workspace: Path) -> list[str]:
    """bubblewrap arguments protecting the workspace's git metadata (see module doc).

    ``workspace`` must be resolved. They must come after the workspace is bound
    writable, parents before children, as returned. Raises
    :class:`UnsafeGitLayout` when ``.git`` is a symlink: a mount follows the
    link, so the link itself could be swapped for a fresh repository.
    """
    dot_git = workspace / ".git"
    if dot_git.is_symlink():
        raise UnsafeGitLayout(
            f"{dot_git} is a symlink; the sandbox cannot keep it from being replaced. "
            "Replace the link with the directory (or a `gitdir:` file), or set "
            '`[sandbox] bash = "off"`'
        )
    if not dot_git.exists():
        return []
    if not dot_git.is_dir():
        # A gitfile (submodule or linked worktree): it names the git directory.
        return ["--ro-bind", str(dot_git), str(dot_git)]
    argv: list[str] = []
    for gitdir in gitdirs(workspace):
        argv += _one_gitdir_binds(gitdir)
    for nested in _gitlinked_dot_gits(workspace):
        if nested.is_file() and _plain(nested, workspace):
            argv += ["--ro-bind", str(nested), str(nested)]
    return argv


# -- detection ------------------------------------------------------------

# What a fresh ``git init`` / ``git clone`` writes, and identity: nothing here
# names a program. Keys are ``section.key`` or ``section.*.key``, lower case.
_HARMLESS_KEYS: frozenset[str] = frozenset(
    {
        "core.repositoryformatversion",
        "core.filemode",
        "core.bare",
        "core.logallrefupdates",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.symlinks",
        "core.autocrlf",
        "core.eol",
        "core.safecrlf",
        "init.defaultbranch",
        "user.name",
        "user.email",
        "extensions.objectformat",
        "branch.*.remote",
        "branch.*.merge",
        "branch.*.rebase",
        "remote.*.url",
        "remote.*.pushurl",
        "remote.*.fetch",
    }
)
_SECTION_RE = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\]')
_KEY_RE = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=.*)?")


def config_is_harmless(text: str) -> bool:
    """True when every setting in a git config file is in the harmless list.

    Conservative: anything this simple reader does not understand
    (continuation lines, a key on a section line, legacy ``[a.b]``
    subsections) counts as harmful.
    """
    section: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if raw.rstrip().endswith("\\"):
            return False
        if line.startswith("["):
            match = _SECTION_RE.fullmatch(line)
            if match is None or "." in match.group(1):
                return False
            section = match.group(1).lower() + (".*" if match.group(2) is not None else "")
            continue
        match = _KEY_RE.fullmatch(line)
        if match is None or section is None:
            return False
        if f"{section}.{match.group(1).lower()}" not in _HARMLESS_KEYS:
            return False
    return True


def _why_harmful(gitdir: Path) -> str | None:
    """Why a git directory that appeared during a sandboxed command is not
    harmless, or None for a plain repository."""
    if gitdir.is_symlink() or not gitdir.is_dir():
        return "it is not a plain directory"
    if os.path.lexists(gitdir / "config.worktree"):
        return "it has config.worktree"
    if os.path.lexists(gitdir / "commondir") and not _is_linked_worktree(gitdir):
        return "it has a commondir"
    config = gitdir / "config"
    if os.path.lexists(config):
        if config.is_symlink() or not config.is_file():
            return "its config is not a plain file"
        try:
            text = config.read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            return "its config cannot be read"
        if not config_is_harmless(text):
            return "its config sets more than a fresh `git init` does"
    hooks = gitdir / "hooks"
    if os.path.lexists(hooks):
        if hooks.is_symlink() or not hooks.is_dir():
            return "its hooks is not a plain directory"
        try:
            names = [p.name for p in hooks.iterdir()]
        except OSError:
            return "its hooks cannot be listed"
        live = [n for n in names if not n.endswith(".sample")]
        if live:
            return f"it has hooks ({', '.join(sorted(live)[:3])})"
    for gitdir_inside in _gitdir_tree(gitdir)[1:]:
        why = _why_harmful(gitdir_inside)
        if why is not None:
            return f"{gitdir_inside.relative_to(gitdir).as_posix()}: {why}"
    return None


def _is_linked_worktree(gitdir: Path) -> bool:
    """True for ``<repo>/worktrees/<name>`` whose ``commondir`` names ``<repo>``,
    what ``git worktree add`` writes (its config is the repository's own)."""
    if gitdir.parent.name != "worktrees":
        return False
    commondir = gitdir / "commondir"
    if commondir.is_symlink() or not commondir.is_file():
        return False
    try:
        text = commondir.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return False
    return os.path.realpath(gitdir / text) == os.path.realpath(gitdir.parent.parent)


def _empty_dir(path: Path) -> bool:
    try:
        return not path.is_symlink() and path.is_dir() and not any(path.iterdir())
    except OSError:
        return False


def _fingerprint(path: Path) -> tuple[int, str] | None:
    """What a path is (type, and link target for symlinks), or None when absent."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
    return stat.S_IFMT(info.st_mode), target


@dataclass(frozen=True, slots=True)
class _State:
    dot_git: tuple[int, str] | None
    gitdirs: frozenset[str]
    entries: dict[str, tuple[int, str] | None]
    # ``<gitlink>/.git`` that are files or symlinks (directories are in gitdirs).
    linked: dict[str, tuple[int, str] | None]


def _state(workspace: Path) -> _State:
    dirs = gitdirs(workspace)
    entries = {str(d / name): _fingerprint(d / name) for d in dirs for name in RISKY_ENTRIES}
    linked = {
        str(p): _fingerprint(p)
        for p in _gitlinked_dot_gits(workspace)
        if p.is_symlink() or not p.is_dir()
    }
    return _State(_fingerprint(workspace / ".git"), frozenset(map(str, dirs)), entries, linked)


def _without(state: _State, dot_git: Path, moved: list[str]) -> _State:
    """``state`` as it is once the ``moved`` paths (and all under them) are gone."""

    def gone(path: str) -> bool:
        return any(path == m or path.startswith(m + "/") for m in moved)

    return _State(
        dot_git=None if gone(str(dot_git)) else state.dot_git,
        gitdirs=frozenset(d for d in state.gitdirs if not gone(d)),
        entries={p: (None if gone(p) else f) for p, f in state.entries.items()},
        linked={p: (None if gone(p) else f) for p, f in state.linked.items()},
    )


def workspace_gitdirs_outside(workspace: Path) -> tuple[Path, ...]:
    """The git directories host git uses for ``workspace`` that lie outside it.
    ``git_binds`` cannot protect these (they are not under a writable root), so
    nothing may make them writable."""
    return tuple(d for d in workspace_gitdirs(workspace) if not is_within(d, workspace))


def workspace_gitdirs(workspace: Path) -> tuple[Path, ...]:
    """The git directories a ``.git`` gitfile of ``workspace`` names: a linked
    worktree's, a submodule's or a ``--separate-git-dir`` one, and the common
    directory its ``commondir`` names, wherever they lie (one inside the workspace
    is protected by ``git_binds`` only while the gitfile is under the same
    writable root)."""
    dot_git = workspace / ".git"
    if dot_git.is_symlink() or not dot_git.is_file():
        return ()
    gitdir = _gitfile_target(dot_git)
    if gitdir is None:
        return ()
    found = [gitdir]
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        common = ""
    if common:
        found.append(Path(os.path.realpath(gitdir / common)))
    return tuple(dict.fromkeys(found))


def _gitfile_target(gitfile: Path) -> Path | None:
    try:
        text = gitfile.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    return Path(os.path.realpath(gitfile.parent / first[len("gitdir:") :].strip()))


def _quarantine(path: Path) -> str:
    target = path.with_name(path.name + QUARANTINE_SUFFIX)
    n = 1
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}{QUARANTINE_SUFFIX}-{n}")
    os.rename(path, target)
    return target.name


class GitGuard:
    """Detects git metadata a sandboxed command planted, and moves it aside.

    One per workspace and process (:meth:`for_workspace`): the baseline is
    what the workspace held when Reasonix first ran a sandboxed command in it,
    updated when something new is judged harmless.
    """

    _guards: ClassVar[dict[str, GitGuard]] = {}
    _guards_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self._lock = threading.Lock()
        self._moved: list[str] = []  # paths set aside by the running check
        self._baseline = _state(self.workspace)
        # Git directories that were there before any sandboxed command: every
        # later sandbox binds their risky entries read-only. One that appears
        # later is not bound in a background job started before it existed, so
        # it is judged again at every check, not only when it appears.
        self._original = self._baseline.gitdirs

    @classmethod
    def for_workspace(cls, workspace: Path) -> GitGuard:
        key = os.path.realpath(workspace)
        with cls._guards_lock:
            guard = cls._guards.get(key)
            if guard is None:
                guard = cls._guards[key] = cls(Path(key))
            return guard

    def check(self) -> list[str]:
        """Quarantine what appeared since the baseline; one sentence per finding."""
        with self._lock:
            try:
                return self._check()
            except (OSError, ValueError) as exc:  # an unreadable tree must not break bash
                return [
                    f"the git metadata check failed ({exc}); inspect .git before running "
                    "git in this workspace"
                ]

    def _check(self) -> list[str]:
        ws = self.workspace
        findings: list[str] = []
        self._moved = []
        now = _state(ws)
        dot_git = ws / ".git"
        if now.dot_git is not None and now.dot_git != self._baseline.dot_git:
            why = _why_harmful(dot_git) if self._baseline.dot_git is None else None
            if self._baseline.dot_git is not None:
                why = "it replaced the previous .git"
            if why is not None:
                findings.append(self._move(dot_git, f"a new .git appeared ({why})"))
        root = str(dot_git)
        for gitdir in sorted(now.gitdirs - self._baseline.gitdirs):
            if gitdir == root or not os.path.lexists(gitdir):
                continue  # judged with (and maybe moved along with) its parent
            why = _why_harmful(Path(gitdir))
            if why is not None:
                findings.append(self._move(Path(gitdir), f"a new git directory appeared ({why})"))
        for path, fingerprint in now.entries.items():
            if Path(path).parent == dot_git and Path(path).name == "commondir":
                if fingerprint is not None:
                    findings.append(self._move(Path(path), "it redirects git to another config"))
                continue
            if path not in self._baseline.entries:
                continue  # judged with its new git directory above
            before = self._baseline.entries[path]
            if fingerprint is None or fingerprint == before or _empty_dir(Path(path)):
                continue  # an empty hooks directory (git_binds makes one) runs nothing
            findings.append(self._move(Path(path), "it was not there before"))
        for gitdir in sorted((now.gitdirs & self._baseline.gitdirs) - self._original):
            if any(gitdir == m or gitdir.startswith(m + "/") for m in self._moved):
                continue
            if not os.path.lexists(gitdir):
                continue
            why = _why_harmful(Path(gitdir))
            if why is not None:
                findings.append(
                    self._move(
                        Path(gitdir), f"a git directory made in this session changed ({why})"
                    )
                )
        for path, fingerprint in now.linked.items():
            if fingerprint is None or self._baseline.linked.get(path) == fingerprint:
                continue
            why = self._why_linked_harmful(Path(path))
            if why is not None:
                findings.append(self._move(Path(path), f"a repository git status enters ({why})"))
        # The next baseline is what was judged, not a fresh look: something a
        # background job makes meanwhile is judged at the next check.
        self._baseline = _without(now, dot_git, self._moved)
        return findings

    def _why_linked_harmful(self, dot_git: Path) -> str | None:
        """Judge a new ``<gitlink>/.git`` file: fine when it names a git
        directory the sandbox already protects, else judged like a new repository."""
        if dot_git.is_symlink():
            return "its .git is a symlink"
        target = _gitfile_target(dot_git)
        if target is None:
            return "its .git file names no git directory"
        if str(target) in self._baseline.gitdirs:
            return None
        return _why_harmful(target)

    def _move(self, path: Path, why: str) -> str:
        shown = path.relative_to(self.workspace).as_posix()
        try:
            moved = _quarantine(path)
            self._moved.append(str(path))
        except OSError as exc:
            return (
                f"{shown}: {why}, and it could not be moved aside ({exc}); "
                "do not run git in this workspace before inspecting it"
            )
        return f"{shown}: {why}; moved aside to {moved} so git will not use it"
