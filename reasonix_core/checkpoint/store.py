"""The shadow store: a bare git repository outside the workspace.

One per session, under the session's folder (``<id>.rewind/``): ``store.git``
(bare: its HEAD is the last snapshot's commit; nothing ever runs ``gc``), a
private ``index`` and a ``lock`` file. The objects live in
``checkpoint-objects/`` beside the workspace's transcripts, shared by its
sessions; a new session starts from the newest other session's index and HEAD
(:meth:`ShadowStore._seed`), so its first snapshot reads only what changed. Git is driven with ``GIT_DIR`` /
``GIT_WORK_TREE`` / ``GIT_INDEX_FILE`` through :mod:`tool.host_git` (system
git, no user or system config, no hooks, no fsmonitor). The workspace's own
``.git`` is never read: git never descends into a directory named ``.git``,
and discovery is off because ``GIT_DIR`` is given.

A snapshot asks ``git status`` what differs from HEAD, the previous
snapshot's commit (the stat cache, preloaded in threads, and the untracked
cache make an unchanged tree one git process, and the previous tree id is
reused). Changed paths are staged by name over standard input (``-z``: a file
named ``--force`` is a name, never an option), ``write-tree`` gives the
snapshot's tree id, and a commit of it becomes HEAD (the chain also keeps every
snapshot reachable).

Bytes are stored as they are: ``info/attributes`` turns off every conversion a
workspace ``.gitattributes`` could ask for (eol, filters, ident, encodings).
What is ignored: ``.gitignore`` files and the tools' always-skipped folders
(:data:`tool.builtin._fs.SKIP_DIRS`); nested repositories (a folder with its
own ``.git``) are not kept and are named as such.

Crash safety: git writes the index, objects and HEAD by rename, so a process
killed mid-snapshot leaves at most ``index.lock``, ``HEAD.lock`` and temporary
objects, and an index ahead of HEAD (the next status lists those paths again).
Every operation holds ``lock`` (``flock``); under it a git lock is a crash
leftover and is removed.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import re
import stat as stat_mod
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reasonix_core.checkpoint.seed import (
    SeedCopy,
    borrowed_object_dirs,
    resume_seed_copies,
    seed_from_workspace,
)
from reasonix_core.checkpoint.tree_cache import TreeCache, nul_terminated, object_id, write_object
from reasonix_core.checkpoint.watcher import MAX_PATHS, ChangeWatcher, WatchFailed
from reasonix_core.errors import CheckpointError
from reasonix_core.fsutil import private_dir, private_tree
from reasonix_core.tool.host_git import git_command, git_env, host_git

#: Config for every store call: bytes and modes as on disk, the stat caches on.
_STORE_OPTIONS: tuple[str, ...] = (
    "-c", "core.untrackedCache=true",
    # The store holds the user's code: private files and folders (fsutil.PRIVATE_*).
    "-c", "core.sharedRepository=0600",
    "-c", "core.filemode=true",
    "-c", "core.symlinks=true",
    "-c", "core.ignorecase=false",
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "core.precomposeunicode=false",
    "-c", "core.quotePath=false",
    "-c", "core.excludesFile=/dev/null",
    "-c", "core.attributesFile=/dev/null",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "index.version=4",
)  # fmt: skip
# Higher precedence than any .gitattributes in the workspace.
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding !diff\n"
_TIMEOUT = 120
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# The snapshots' commits: a fixed identity, never the user's.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "Reasonix",
    "GIT_AUTHOR_EMAIL": "checkpoint@reasonix.invalid",
    "GIT_COMMITTER_NAME": "Reasonix",
    "GIT_COMMITTER_EMAIL": "checkpoint@reasonix.invalid",
}

MODE_FILE, MODE_EXEC, MODE_LINK = "100644", "100755", "120000"
NESTED_REPOSITORY = "a nested git repository"
#: The objects folder the sessions of a workspace share, beside their transcripts.
OBJECTS = "checkpoint-objects"
_HEX40 = re.compile(r"[0-9a-f]{40}")
OVER_BOUND = "over the checkpoint size bound"
NOT_A_FILE = "not a regular file or symlink"
UNREADABLE = "could not be read"


log = logging.getLogger(__name__)


def lstat_inside(workspace: Path, name: str) -> os.stat_result | None:
    """``os.lstat`` of the workspace's ``name``, or None when absent, and also
    when a folder on its way is not a folder (a symlink, a file): a path under
    a symlink is not in the workspace's tree, whatever the link points at (a
    folder replaced by a symlink to its moved self: its old paths are gone)."""
    parts = name.split("/")
    folder = workspace
    try:
        for part in parts[:-1]:
            folder = folder / part
            if not stat_mod.S_ISDIR(os.lstat(folder).st_mode):
                return None
        return os.lstat(folder / parts[-1])
    except (FileNotFoundError, NotADirectoryError):
        return None


class _Unreadable(Exception):
    """A file that is there but cannot be read (permissions, an I/O error)."""


class _ReadAll(Exception):
    """The quick path cannot be exact here: read the whole tree."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One path of a tree: git mode (``100644``, ``100755``, ``120000``) and blob id."""

    mode: str
    oid: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    tree: str
    # path -> why it could not be kept (its entry in ``tree`` is an older version).
    not_kept: dict[str, str]
    # Bytes staged by this snapshot (the size bound counts them).
    added_bytes: int


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    before: Entry | None
    after: Entry | None
    added: int | None  # lines; None for binary
    deleted: int | None


class ShadowStore:
    """Snapshots of one workspace for one session (see the module doc)."""

    def __init__(self, root: Path, workspace: Path, git: str, *, watch: bool = False) -> None:
        self.root = root
        self.workspace = workspace
        self.git = git
        self.git_dir = root / "store.git"
        self.index = root / "index"
        # Objects are shared by the sessions of a workspace (their folder holds
        # only that workspace's sessions): content stored once is stored.
        self.objects = root.parent / OBJECTS
        self._last_tree: str | None = None
        self._head: str | None = None  # HEAD's tree, once known
        # O(changes) snapshots (see the module doc): the watcher, once started,
        # and the last snapshot's tree in memory, once a full read made it exact.
        self._watch = watch
        self._watcher: ChangeWatcher | None = None
        self._cache: TreeCache | None = None
        self._index_lags = False  # the quick path left the index behind the last tree
        self._not_kept: dict[str, str] = {}
        self.quick_snapshots = 0  # for tests and benches: how many skipped the full read
        self._seed_copy: SeedCopy | None = None  # a first session's blobs being copied in
        self._seed_checked = False
        self._failed = False  # the last snapshot failed: the next reads the whole tree

    @classmethod
    def open(cls, root: Path, workspace: Path, *, watch: bool = False) -> ShadowStore | None:
        """The store at ``root`` (created when missing); None when the host has no git.
        ``watch``: follow changes with inotify, so a snapshot reads only what changed."""
        git = host_git()
        if git is None:
            return None
        return cls(root, Path(os.path.realpath(workspace)), git, watch=watch)

    def close(self) -> None:
        """Stop watching. A seed copy still running is left to finish (the next
        session resumes one that was killed)."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    # -- plumbing --------------------------------------------------------------

    def _git(
        self,
        *args: str,
        stdin: bytes | None = None,
        work_tree: bool = True,
        check: bool = True,
        borrow: bool = False,
    ) -> bytes:
        """Run git on the store. ``borrow``: a read that may need blobs still
        only in the workspace's own object store (a seed being copied, see
        :mod:`checkpoint.seed`); never set for a write, so that everything the
        store writes is its own."""
        env = git_env(self.git_dir, self.workspace if work_tree else None, _IDENTITY)
        env["GIT_INDEX_FILE"] = str(self.index)
        env["GIT_OBJECT_DIRECTORY"] = str(self.objects)
        if borrow:
            lenders = borrowed_object_dirs(self.objects)
            if lenders:
                env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = os.pathsep.join(lenders)
        try:
            proc = subprocess.run(
                git_command(self.git, *_STORE_OPTIONS, *args),
                cwd=self.workspace if work_tree else self.root,
                env=env,
                input=stdin if stdin is not None else b"",
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CheckpointError(f"git {args[0]} failed in the checkpoint store: {exc}") from None
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(
                f"git {args[0]} failed in the checkpoint store {self.root}: "
                f"{err[-1] if err else proc.returncode}"
            )
        return proc.stdout

    def _ensure(self) -> None:
        """Create the bare repository once; a half-made one (killed) is made again."""
        if (self.git_dir / "info" / "attributes").is_file():
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            os.chmod(self.root, 0o700)
            tmp = self.root / f"store.git.tmp-{os.getpid()}"
            env = git_env(tmp)
            subprocess.run(
                git_command(self.git, "init", "--bare", "-q", str(tmp)),
                env=env, capture_output=True, timeout=_TIMEOUT, check=True,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
            hooks = tmp / "hooks"
            for sample in hooks.iterdir() if hooks.is_dir() else ():
                sample.unlink()
            (tmp / "info").mkdir(exist_ok=True)
            (tmp / "info" / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")
            from reasonix_core.tool.builtin._fs import SKIP_DIRS  # the tools' own list

            skipped = "".join(f"{name}/\n" for name in sorted(SKIP_DIRS - {".git"}))
            (tmp / "info" / "exclude").write_text(skipped, encoding="utf-8")
            for folder in ("info", "pack"):
                private_dir(self.objects / folder)
            private_tree(tmp)
            os.rename(tmp, self.git_dir)
            self._seed()
        except OSError:
            if not (self.git_dir / "info" / "attributes").is_file():
                raise CheckpointError(
                    f"cannot create the checkpoint store {self.git_dir}"
                ) from None
        except subprocess.CalledProcessError as exc:
            raise CheckpointError(f"git init failed for the checkpoint store: {exc}") from None

    def _seed(self) -> None:
        """Start from the newest other session's index and HEAD, so the first
        snapshot re-reads only what changed since (the stat cache stays valid:
        same workspace) instead of hashing the whole tree."""
        best: tuple[float, Path, str] | None = None
        for other in self.root.parent.glob("*.rewind"):
            if other == self.root:
                continue
            try:
                head = (other / "store.git" / "HEAD").read_text(encoding="ascii").strip()
                mtime = (other / "index").stat().st_mtime
            except (OSError, UnicodeError):
                continue
            if _HEX40.fullmatch(head) and (best is None or mtime > best[0]):
                best = (mtime, other, head)
        if best is None:
            self._seed_copy = seed_from_workspace(self)
            return
        _mtime, other, head = best
        tmp = self.root / f"index.seed-{os.getpid()}"
        try:
            tmp.write_bytes((other / "index").read_bytes())
            os.replace(tmp, self.index)
            self._git("update-ref", "--no-deref", "HEAD", head, work_tree=False)
        except (OSError, CheckpointError):
            for leftover in (tmp, self.index):
                try:
                    leftover.unlink()
                except OSError:
                    pass

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One operation at a time; leftovers of a killed one are cleared."""
        self._ensure()
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            for leftover in (self.root / "index.lock", self.git_dir / "HEAD.lock"):
                try:
                    leftover.unlink()
                except FileNotFoundError:
                    pass
            if self._seed_copy is not None and self._seed_copy.done():
                self._seed_copy = None
            if self._seed_copy is None and not self._seed_checked:
                self._seed_checked = True  # once per session: a failing copy is not retried
                self._seed_copy = resume_seed_copies(self)
            yield
        finally:
            os.close(fd)

    # -- snapshots -------------------------------------------------------------

    def snapshot(self, budget: int | None = None, *, whole: bool = False) -> Snapshot:
        """Record the workspace now. ``budget``: bytes this snapshot may still add
        (None: unbounded); files beyond it are listed in ``not_kept``.
        ``whole``: read the whole tree's metadata even when the watcher could
        answer (a turn boundary: what inotify cannot see, a write through a
        shared mapping or through a hard link's name outside the workspace,
        still changes the file's stat data)."""
        with self.locked():
            # A snapshot that fails has taken the watcher's paths with it, and
            # may have left the tree in memory half updated: the next one reads
            # the whole tree (git status against the last full read's commit).
            whole = whole or self._failed
            self._failed = True
            try:
                snap = self._snapshot(budget, whole=whole)
            except OSError as exc:  # a full disk, a folder made unreadable...
                self._cache = None
                raise CheckpointError(f"checkpoint failed: {exc}") from None
            except BaseException:
                self._cache = None
                raise
            self._failed = False
            return snap

    def _changed(self) -> list[str]:
        """Paths that differ from the last snapshot: ``status`` against HEAD (the
        last snapshot's commit) uses the preloaded stat cache and the untracked
        cache, and refreshes the index as it goes. Untracked folders come back
        whole (``dir/``) and are listed file by file; a nested repository stays
        ``dir/``."""
        out = self._git("status", "--porcelain=v1", "-z", "-unormal", "--no-renames")
        names: set[str] = set()
        folders: list[str] = []
        for record in out.split(b"\0"):
            if len(record) < 4:
                continue
            name = os.fsdecode(record[3:])
            if record[:2] == b"??" and name.endswith("/"):
                folders.append(name)
            else:
                names.add(name)
        if folders:
            listed = self._git(
                "ls-files", "-z", "-o", "--exclude-standard", "--",
                *(f":(literal){folder}" for folder in folders),
            )  # fmt: skip
            names.update(os.fsdecode(n) for n in listed.split(b"\0") if n)
        return sorted(names)

    def _snapshot(self, budget: int | None, *, whole: bool = False) -> Snapshot:
        dirty: set[str] | None = None
        if self._watch and self._watcher is None:
            from reasonix_core.tool.builtin._fs import SKIP_DIRS

            try:
                # Started before the full read below: whatever changes during
                # or after it is in the watcher's queue for the next snapshot.
                self._watcher = ChangeWatcher(self.workspace, SKIP_DIRS)
            except WatchFailed as exc:
                log.info("checkpoints read the whole tree at each snapshot: %s", exc)
                self._watch = False
        elif self._watcher is not None:
            dirty = self._watcher.take()
        if dirty is not None and self._last_tree is not None and not whole:
            try:
                snap = self._quick(dirty, budget)
            except _ReadAll as why:
                log.debug("checkpoint: a full read (%s)", why)
            else:
                self.quick_snapshots += 1
                return snap
        snap = self._full(budget)
        self._not_kept = dict(snap.not_kept)
        return snap

    def _full(self, budget: int | None) -> Snapshot:
        names = self._changed()
        if not names and self._last_tree is not None and not self._index_lags:
            return Snapshot(self._last_tree, {}, 0)
        not_kept: dict[str, str] = {}
        removals: list[str] = []
        additions: list[str] = []
        added = 0
        for name in names:
            if name.endswith("/"):
                not_kept[name.rstrip("/")] = NESTED_REPOSITORY
                continue
            info = lstat_inside(self.workspace, name)
            if info is None:
                removals.append(name)
                continue
            if stat_mod.S_ISDIR(info.st_mode):
                removals.append(name)  # a file became a folder: its files are listed too
                continue
            if not (stat_mod.S_ISREG(info.st_mode) or stat_mod.S_ISLNK(info.st_mode)):
                not_kept[name] = NOT_A_FILE
                continue
            size = info.st_size if stat_mod.S_ISREG(info.st_mode) else 0
            if budget is not None and added + size > budget:
                not_kept[name] = OVER_BOUND
                continue
            added += size
            additions.append(name)
        if removals:
            self._git(
                "update-index", "-z", "--force-remove", "--stdin", stdin=nul_terminated(removals)
            )
        if additions:
            self._git(
                "update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                stdin=nul_terminated(additions),
            )  # fmt: skip
        # While a seed's blobs are being copied in, they are not here yet.
        missing_ok = ("--missing-ok",) if borrowed_object_dirs(self.objects) else ()
        tree = self._git("write-tree", *missing_ok).decode().strip()
        if tree != self._head_tree():
            # HEAD is what the next status compares against; the commit chain
            # also keeps every snapshot reachable.
            parent = self._git("rev-parse", "-q", "--verify", "HEAD", check=False).strip()
            commit = self._git(
                "commit-tree", tree, *(["-p", parent.decode()] if parent else []),
                "-m", "checkpoint",
            ).decode().strip()  # fmt: skip
            self._git("update-ref", "--no-deref", "HEAD", commit)
            self._head = tree
        if tree != self._last_tree or self._cache is None or self._cache.root != tree:
            self._cache = None  # loaded again when the quick path next needs it
        self._last_tree = tree
        self._index_lags = False
        return Snapshot(tree, not_kept, added)

    # -- the quick path: only what the watcher names -----------------------------

    def _quick(self, dirty: set[str], budget: int | None) -> Snapshot:
        """The last tree with the ``dirty`` paths read again (module doc).
        Raises :class:`_ReadAll` for what only a full read gets exactly right."""
        if not dirty:
            return Snapshot(self._last_tree or EMPTY_TREE, dict(self._not_kept), 0)
        from reasonix_core.tool.builtin._fs import SKIP_DIRS

        cache = self._tree_cache()
        found: dict[str, os.stat_result] = {}  # files to read now
        gone: set[str] = set()
        for path in sorted(dirty):
            parts = path.split("/")
            if any(p in SKIP_DIRS for p in parts[:-1]):
                continue  # never watched, never kept
            if parts[-1] in (".git", ".gitignore") or parts[-1] in SKIP_DIRS:
                raise _ReadAll(f"{path} changed")
            for depth in range(1, len(parts)):
                if os.path.lexists(self.workspace.joinpath(*parts[:depth], ".git")):
                    raise _ReadAll(f"{path} is in a nested repository")
            self._look(path, cache, found, gone)
        new = [p for p in found if cache.get(p) is None]
        ignored = self._ignored(new) if new else set()
        not_kept = {
            k: v for k, v in self._not_kept.items()
            if not any(k == d or k.startswith(d + "/") for d in dirty)
        }  # fmt: skip
        changes: list[tuple[str, tuple[str, str] | None]] = [(p, None) for p in sorted(gone)]
        added = 0
        for path in sorted(found):
            if path in ignored:
                continue  # new and ignored (a kept file stays kept, as in git)
            info = found[path]
            if not (stat_mod.S_ISREG(info.st_mode) or stat_mod.S_ISLNK(info.st_mode)):
                not_kept[path] = NOT_A_FILE
                continue
            size = info.st_size if stat_mod.S_ISREG(info.st_mode) else 0
            if budget is not None and added + size > budget:
                not_kept[path] = OVER_BOUND
                continue
            if self._watcher is not None:
                self._watcher.note(path, info)
            try:
                entry = self._store_file(path, info)
            except _Unreadable as exc:
                # Not "gone": its last version stays in the tree, named as not kept.
                not_kept[path] = f"{UNREADABLE} ({exc})"
                continue
            if entry is None:  # gone or replaced while read: seen again next time
                changes.append((path, None))
                continue
            if cache.get(path) != (entry.mode, entry.oid):
                added += size
                changes.append((path, (entry.mode, entry.oid)))
        tree = cache.apply(changes)
        if tree != self._last_tree:
            self._index_lags = True
        self._last_tree = tree
        self._not_kept = not_kept
        return Snapshot(tree, dict(not_kept), added)

    def _look(
        self, path: str, cache: TreeCache, found: dict[str, os.stat_result], gone: set[str]
    ) -> None:
        """What is at ``path`` now: files to read into ``found``, paths to drop into ``gone``."""
        from reasonix_core.tool.builtin._fs import SKIP_DIRS

        info = lstat_inside(self.workspace, path)
        if info is None:
            gone.add(path)
            if cache.is_folder(path):  # never looked into: all it held is gone too
                gone.update(cache.files_under(path))
            return
        if not stat_mod.S_ISDIR(info.st_mode):
            if cache.is_folder(path):
                gone.add(path)
            found[path] = info
            return
        # A folder made, moved in or replaced: everything below it, read again.
        on_disk: set[str] = set()
        stack = [path]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(self.workspace / folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                rel = f"{folder}/{entry.name}"
                if entry.name == ".git":
                    raise _ReadAll(f"{folder} is a nested repository")
                if entry.name in SKIP_DIRS:
                    continue
                try:
                    sub = os.lstat(entry.path)
                except FileNotFoundError:
                    continue
                if stat_mod.S_ISDIR(sub.st_mode):
                    stack.append(rel)
                else:
                    on_disk.add(rel)
                    found[rel] = sub
            if len(found) > MAX_PATHS:
                raise _ReadAll(f"{path} holds many files")
        if cache.get(path) is not None:
            gone.add(path)
        gone.update(p for p in cache.files_under(path) if p not in on_disk)

    def _ignored(self, names: list[str]) -> set[str]:
        """Which of these new paths the ignore rules leave out (``.gitignore``
        files, the store's ``info/exclude``): one ``git check-ignore``."""
        env = git_env(self.git_dir, self.workspace, _IDENTITY)
        env["GIT_INDEX_FILE"] = str(self.index)
        env["GIT_OBJECT_DIRECTORY"] = str(self.objects)
        try:
            proc = subprocess.run(
                git_command(self.git, *_STORE_OPTIONS, "check-ignore", "-z", "--stdin", "--no-index"),
                cwd=self.workspace, env=env, input=nul_terminated(names), capture_output=True,
                timeout=_TIMEOUT, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise _ReadAll(f"check-ignore failed: {exc}") from None
        if proc.returncode not in (0, 1):
            raise _ReadAll("check-ignore failed")
        return {os.fsdecode(n) for n in proc.stdout.split(b"\0") if n}

    def _store_file(self, path: str, info: os.stat_result) -> Entry | None:
        """Write one file's bytes as a blob; its entry, or None when it changed
        kind or vanished while read (the watcher reports it again)."""
        full = self.workspace / path
        try:
            if stat_mod.S_ISLNK(info.st_mode):
                data = os.fsencode(os.readlink(full))
                mode = MODE_LINK
            else:
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
                try:
                    if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
                        return None
                    chunks = []
                    while chunk := os.read(fd, 1 << 20):
                        chunks.append(chunk)
                finally:
                    os.close(fd)
                data = b"".join(chunks)
                mode = MODE_EXEC if info.st_mode & stat_mod.S_IXUSR else MODE_FILE
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symlink now (O_NOFOLLOW): an event said so
                return None
            raise _Unreadable(exc.strerror or str(exc)) from None
        return Entry(mode, write_object(self.objects, b"blob", data))

    def _tree_cache(self) -> TreeCache:
        tree = self._last_tree or EMPTY_TREE
        if self._cache is None or self._cache.root != tree:
            listing = self._git("ls-tree", "-r", "-t", "-z", "--full-tree", tree, work_tree=False)
            self._cache = TreeCache(self.objects, listing, tree)
        return self._cache

    def _head_tree(self) -> str | None:
        if self._head is None:
            out = self._git("rev-parse", "-q", "--verify", "HEAD^{tree}", check=False)
            self._head = out.decode().strip() or None
        return self._head

    # -- reading ---------------------------------------------------------------

    def entries(self, tree: str) -> dict[str, Entry]:
        """Every file of ``tree``: path -> entry."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", tree, work_tree=False)
        found: dict[str, Entry] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, _kind, oid = meta.decode().split(" ")
            found[os.fsdecode(name)] = Entry(mode, oid)
        return found

    def changes(self, before: str, after: str) -> list[Change]:
        """What differs between two trees, with line counts (None for binary)."""
        if before == after:
            return []
        raw = self._git(
            "diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat", before, after,
            work_tree=False, borrow=True,
        )  # fmt: skip
        parts = raw.split(b"\0")
        entries: dict[str, tuple[Entry | None, Entry | None]] = {}
        counts: dict[str, tuple[int | None, int | None]] = {}
        i = 0
        while i < len(parts):
            part = parts[i]
            if part.startswith(b":"):
                old_mode, new_mode, old_oid, new_oid, _status = part[1:].decode().split(" ")
                name = os.fsdecode(parts[i + 1])
                entries[name] = (
                    None if old_mode == "000000" else Entry(old_mode, old_oid),
                    None if new_mode == "000000" else Entry(new_mode, new_oid),
                )
                i += 2
            elif part:
                plus, minus, name_bytes = part.split(b"\t", 2)
                counts[os.fsdecode(name_bytes)] = (
                    None if plus == b"-" else int(plus),
                    None if minus == b"-" else int(minus),
                )
                i += 1
            else:
                i += 1
        return [
            Change(name, before_e, after_e, *counts.get(name, (None, None)))
            for name, (before_e, after_e) in sorted(entries.items())
        ]

    def blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        """The content of each blob id."""
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        out = self._git(
            "cat-file", "--batch", stdin="".join(f"{o}\n" for o in wanted).encode(),
            work_tree=False, borrow=True,
        )  # fmt: skip
        found: dict[str, bytes] = {}
        pos = 0
        while pos < len(out):
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split(" ")
            if len(header) < 3:
                raise CheckpointError(f"blob {header[0]} is missing from the checkpoint store")
            size = int(header[2])
            data = out[end + 1 : end + 1 + size]
            # Git does not check an object against its name when reading it: a
            # tampered object (in the store, or in a repository a seed borrows
            # from) would be restored as the file's bytes. Refuse it instead.
            if header[1] != "blob" or blob_id(data) != header[0]:
                raise CheckpointError(
                    f"object {header[0]} in the checkpoint store does not hold "
                    "what it is named for (damaged or tampered with)"
                )
            found[header[0]] = data
            pos = end + 1 + size + 1
        return found


def blob_id(data: bytes) -> str:
    """Git's blob id of ``data`` (what the store would name it)."""
    return object_id(b"blob", data)[0]


def entry_on_disk(workspace: Path, name: str) -> Entry | str | None:
    """The workspace's ``name`` as a tree entry, None when absent, or a word
    saying what else is there (a folder, a FIFO...). Never follows a symlink."""
    path = workspace / name
    info = lstat_inside(workspace, name)
    if info is None:
        return None
    if stat_mod.S_ISLNK(info.st_mode):
        return Entry(MODE_LINK, blob_id(os.fsencode(os.readlink(path))))
    if stat_mod.S_ISDIR(info.st_mode):
        return "a folder"
    if not stat_mod.S_ISREG(info.st_mode):
        return NOT_A_FILE
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    mode = MODE_EXEC if info.st_mode & stat_mod.S_IXUSR else MODE_FILE
    return Entry(mode, blob_id(b"".join(chunks)))
