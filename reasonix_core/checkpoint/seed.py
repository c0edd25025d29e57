"""A workspace's first checkpoint store, seeded from its own git repository.

The first snapshot in a workspace used to hash and store every file, seconds
on a big repository before the first command could run. When the workspace
is a git repository, its index already knows the blob id of every tracked
file with the stat data that proves it (git's own stat cache). The store's
first index is a copy of it (its timestamp kept, so git's racy-entry check
sees what the repository's git sees), minus what the store never keeps:
gitlinks, unmerged entries, entries git is told not to look at
(assume-unchanged, skip-worktree) and anything under an always-skipped
folder. Its first snapshot then reads only what differs from that index:
modified and untracked files.

The blobs of that first tree are still only in the repository's own object
store. They are copied into the store's shared ``checkpoint-objects`` by a
``git pack-objects`` child process started at once (a *seed copy*); until it
has finished, reads of the store (a diff, a restore) borrow the repository's
objects (``GIT_ALTERNATE_OBJECT_DIRECTORIES``, listed by a marker in
``checkpoint-objects/info/``), never writes: what the store writes is always
its own. A copy killed half-way (the session ended, the machine stopped) is
resumed by the next session of the workspace, for the blobs still missing.
If the repository's objects vanish before the copy ends, a restore that needs
them fails and says so; it never writes something else.

Not seeded (the first snapshot reads the whole tree as before): a workspace
whose ``.git`` is not a plain folder (a linked worktree, a submodule), a
partial clone (blobs that are not there at all), an index git cannot read in
the store (a split index).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Protocol

from reasonix_core.checkpoint.tree_cache import TreeCache, nul_terminated
from reasonix_core.errors import CheckpointError
from reasonix_core.tool.host_git import git_command, git_env


class SeedableStore(Protocol):
    """What seeding uses of the checkpoint store (``store.ShadowStore``, which
    imports this module: named by shape here so the two do not import each other)."""

    root: Path
    workspace: Path
    git: str
    git_dir: Path
    index: Path
    objects: Path

    def _git(
        self,
        *args: str,
        stdin: bytes | None = None,
        work_tree: bool = True,
        check: bool = True,
        borrow: bool = False,
    ) -> bytes: ...


_LENDER = ".lender"  # first line: the repository's objects folder
_BLOBS = ".blobs"  # the blob ids to copy, one a line
_LOCK = ".lock"  # held (flock) by whoever copies, the child process included


def borrowed_object_dirs(objects: Path) -> list[str]:
    """Object folders the store's reads may borrow from while seed copies run."""
    folder = objects / "info"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found: list[str] = []
    for name in names:
        if name.startswith("seed-") and name.endswith(_LENDER):
            try:
                line = (folder / name).read_text(encoding="utf-8").split("\n", 1)[0]
            except (OSError, UnicodeError):
                continue
            if line and line not in found:
                found.append(line)
    return sorted(found)


class SeedCopy:
    """One ``git pack-objects`` copying a seed's blobs in (see the module doc)."""

    def __init__(self, proc: subprocess.Popen[bytes], marker: Path, lock_fd: int) -> None:
        self.proc = proc
        self.marker = marker  # .../info/seed-<token> (without a suffix)
        self._lock_fd = lock_fd

    def done(self) -> bool:
        """True once finished; a successful copy removes its marker."""
        code = self.proc.poll()
        if code is None:
            return False
        if self._lock_fd >= 0:
            if code == 0:
                _remove_marker(self.marker)  # the child did; a no-op then
            os.close(self._lock_fd)
            self._lock_fd = -1
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the copy (tests, benches); True when it succeeded."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        self.done()
        return code == 0

    def cancel(self) -> None:
        """Stop the copy; the next session resumes it."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the shell and its git
            except ProcessLookupError:
                pass
            self.proc.wait()
        # The git child holds the copy's lock too and dies a moment after the
        # shell: until it is gone, the next session would take the copy for
        # one still running and not resume it.
        self.done()
        try:
            fd = os.open(f"{self.marker}{_LOCK}", os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            return  # the copy had finished: nothing to resume
        try:
            for _ in range(2000):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    time.sleep(0.005)
        finally:
            os.close(fd)


def _remove_marker(marker: Path) -> None:
    for suffix in (_LENDER, _BLOBS, _LOCK):
        try:
            os.unlink(f"{marker}{suffix}")
        except FileNotFoundError:
            pass


def _lock(marker: Path) -> int | None:
    fd = os.open(f"{marker}{_LOCK}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _start_copy(store: SeedableStore, marker: Path, lender: str, lock_fd: int) -> SeedCopy | None:
    env = git_env(store.git_dir)
    env["GIT_OBJECT_DIRECTORY"] = str(store.objects)
    env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = lender
    # The child clears the marker itself once the pack is in place, so a
    # session that ended before the copy did leaves nothing to resume.
    script = 'lender=$1 blobs=$2 lock=$3; shift 3; "$@" < "$blobs" && rm -f -- "$lender" "$blobs" "$lock"'
    paths = [f"{marker}{suffix}" for suffix in (_LENDER, _BLOBS, _LOCK)]
    try:
        proc = subprocess.Popen(
            [
                "/bin/sh", "-c", script, "sh", *paths,
                *git_command(
                    store.git, "-c", "pack.threads=1", "pack-objects", "-q", "--window=0",
                    str(store.objects / "pack" / "pack"),
                ),
            ],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, cwd=store.root, pass_fds=(lock_fd,),
            # Its own session: a Ctrl-C meant for Reasonix does not cut it short.
            start_new_session=True,
        )  # fmt: skip
    except OSError:
        os.close(lock_fd)
        return None
    try:
        os.setpriority(os.PRIO_PROCESS, proc.pid, 10)  # background work: behind the session's
    except OSError:
        pass
    return SeedCopy(proc, marker, lock_fd)


def seed_from_workspace(store: SeedableStore) -> SeedCopy | None:
    """Give a new, empty store the workspace repository's index and a HEAD
    of its tree; start copying its blobs. None (and nothing seeded) when the
    workspace is not a repository this can use."""
    from reasonix_core.tool.builtin._fs import SKIP_DIRS

    dot_git = store.workspace / ".git"
    index = dot_git / "index"
    objects = dot_git / "objects"
    try:
        if dot_git.is_symlink() or not dot_git.is_dir() or not objects.is_dir():
            return None
        if any(name.endswith(".promisor") for name in os.listdir(objects / "pack")):
            return None  # a partial clone: some blobs are nowhere on this machine
        info = os.stat(index)
        with open(index, "rb") as f:
            header = f.read(8)
        if header[:4] != b"DIRC" or int.from_bytes(header[4:8], "big") not in (2, 3, 4):
            return None
        tmp = store.root / f"index.ws-{os.getpid()}"
        shutil.copyfile(index, tmp)
        # The repository's timestamp: git's racy-entry check judges alike.
        os.utime(tmp, ns=(info.st_atime_ns, info.st_mtime_ns))
        os.replace(tmp, store.index)
    except OSError:
        return None
    try:
        listing = store._git("ls-files", "-s", "-v", "-z", work_tree=False)
        drop: list[str] = []
        skipped = [os.fsencode(n) for n in SKIP_DIRS]
        files: list[tuple[bytes, bytes, bytes]] = []  # (path, mode, hex id)
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, raw = record.partition(b"\t")
            tag, mode, oid, stage = meta.split(b" ")
            if (
                tag != b"H"
                or stage != b"0"
                or mode == b"160000"
                or any(
                    raw.startswith(n + b"/") or b"/" + n + b"/" in raw or raw == n for n in skipped
                )
            ):
                drop.append(os.fsdecode(raw))
            else:
                files.append((raw, mode, oid))
        if drop:
            store._git(
                "update-index", "-z", "--force-remove", "--stdin", stdin=nul_terminated(drop)
            )
        # The trees, written here in Python as one pack: ``git write-tree``
        # would look up every blob and cached tree in an object store that has
        # none of them yet, each miss rescanning it, and write a file per tree
        # (seconds on a big repository).
        tree = TreeCache.build(store.objects, files)
        blobs = sorted({oid.decode() for _raw, _mode, oid in files})
        commit = (
            store._git("commit-tree", tree, "-m", "checkpoint seed", work_tree=False)
            .decode()
            .strip()
        )
        store._git("update-ref", "--no-deref", "HEAD", commit, work_tree=False)
    except (CheckpointError, ValueError):
        try:
            store.index.unlink()
        except OSError:
            pass
        return None
    if not blobs:
        return None
    marker = store.objects / "info" / f"seed-{secrets.token_hex(6)}"
    try:
        Path(f"{marker}{_BLOBS}").write_text("".join(f"{oid}\n" for oid in blobs), encoding="ascii")
        tmp_lender = Path(f"{marker}.tmp")
        tmp_lender.write_text(f"{os.path.realpath(objects)}\n", encoding="utf-8")
        lock_fd = _lock(marker)
        os.replace(tmp_lender, f"{marker}{_LENDER}")
    except OSError:
        # Without a marker the store cannot read these blobs: start over unseeded.
        _remove_marker(marker)
        store.index.unlink(missing_ok=True)
        store._git("update-ref", "-d", "HEAD", work_tree=False, check=False)
        return None
    if lock_fd is None:
        return None
    return _start_copy(store, marker, os.path.realpath(objects), lock_fd)


def resume_seed_copies(store: SeedableStore) -> SeedCopy | None:
    """A seed copy nobody is running (its session was killed): start it again
    for the blobs still missing, or clear its marker when none are."""
    folder = store.objects / "info"
    try:
        names = sorted(
            n for n in os.listdir(folder) if n.startswith("seed-") and n.endswith(_LENDER)
        )
    except OSError:
        return None
    for name in names:
        marker = folder / name[: -len(_LENDER)]
        lock_fd = _lock(marker)
        if lock_fd is None:
            continue  # being copied by another process
        try:
            lender = Path(f"{marker}{_LENDER}").read_text(encoding="utf-8").split("\n", 1)[0]
            wanted = Path(f"{marker}{_BLOBS}").read_bytes()
            check = store._git("cat-file", "--batch-check", stdin=wanted, work_tree=False)
        except (OSError, UnicodeError, CheckpointError):
            os.close(lock_fd)
            continue
        missing = [line.split(b" ")[0] for line in check.splitlines() if line.endswith(b" missing")]
        if not missing:
            _remove_marker(marker)
            os.close(lock_fd)
            continue
        try:
            Path(f"{marker}{_BLOBS}").write_bytes(b"".join(m + b"\n" for m in missing))
        except OSError:
            os.close(lock_fd)
            continue
        return _start_copy(store, marker, lender, lock_fd)
    return None
