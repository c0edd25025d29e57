"""Confining shell commands: the bubblewrap command line and a clean environment.

With ``[sandbox] bash = "enforce"`` every shell command runs under bubblewrap:
the whole filesystem is mounted read-only, only the write roots (workspace,
session temp dir, ``allow_write``, and for one call the folders granted to it,
bound by descriptor: :mod:`reasonix_core.tool.write_scope`) are writable,
``forbid_read`` paths are masked, the network is unshared unless ``[sandbox]
network = true`` and the command gets its own PID namespace, so killing
bubblewrap kills everything the command started. With the network off, host
unix sockets are out of reach too: the socket directories (``/run``,
``/var/run``, ``$XDG_RUNTIME_DIR``) are masked and a seccomp filter
(:mod:`reasonix_core.tool.seccomp`) refuses ``socket(AF_UNIX)`` anywhere, the
workspace included; the filter is loaded with the network on too, refusing the
keyring calls. IPC (SysV, POSIX message queues) is unshared, and every tmpfs
has a size cap (``[sandbox] tmp_size``). Git metadata is protected as
:mod:`reasonix_core.tool.git_guard` describes.

bubblewrap itself is looked up in fixed system directories only
(:data:`SYSTEM_BWRAP_DIRS`), never on ``PATH``: a sandboxed command can write
``.venv/bin/bwrap`` in the workspace, and a later run with that venv first on
``PATH`` would otherwise run every command through it, unconfined.

If bubblewrap is missing or cannot create a sandbox here, or the socket filter
cannot be built for this architecture, :func:`prepare_command` raises
:class:`SandboxUnavailable`; there is never a silent unconfined fallback.
``bash = "off"`` runs plain ``/bin/bash -c``.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reasonix_core.errors import ReasonixError
from reasonix_core.tool.git_guard import UnsafeGitLayout, git_binds, nested_git_binds
from reasonix_core.tool.sandbox import SandboxPolicy, is_within
from reasonix_core.tool.seccomp import SeccompUnsupported, filter_fd, sandbox_filter
from reasonix_core.tool.system_programs import SYSTEM_BIN_DIRS, find_system_program
from reasonix_core.tool.write_scope import open_granted

BASH = "/bin/bash"
#: Where bubblewrap is looked for, in order. Root-owned system directories
#: only: never PATH, the workspace or anything a sandboxed command can write.
SYSTEM_BWRAP_DIRS: tuple[str, ...] = SYSTEM_BIN_DIRS
#: Where host daemons keep their unix sockets (docker, D-Bus, systemd, ssh-agent
#: under $XDG_RUNTIME_DIR); masked with an empty tmpfs when the network is off.
SOCKET_DIRS: tuple[str, ...] = ("/run", "/var/run")

INSTALL_HINT = (
    'bubblewrap is required for `[sandbox] bash = "enforce"`: install it with '
    "`apt-get install bubblewrap` (Debian/Ubuntu) / `dnf install bubblewrap`, "
    'or set `[sandbox] bash = "off"` to run unconfined'
)

# Variables every shell command gets: no pagers, no colours, no cursor tricks.
QUIET_ENV: dict[str, str] = {
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "NO_COLOR": "1",
}


class SandboxUnavailable(ReasonixError):
    """``bash = "enforce"`` is configured but bubblewrap cannot be used."""


def find_system_bwrap() -> str | None:
    """The first executable ``bwrap`` in :data:`SYSTEM_BWRAP_DIRS`, else None."""
    return find_system_program("bwrap", SYSTEM_BWRAP_DIRS)


@functools.cache
def _probe() -> tuple[str | None, str]:
    """Find bwrap and check it can build a sandbox here (once per process).

    Returns ``(path, "")`` when usable, else ``(None, reason)``. Containers
    often forbid the user namespaces bubblewrap needs, so being installed is
    not enough.
    """
    path = find_system_bwrap()
    if path is None:
        return None, f"bwrap was not found in {', '.join(SYSTEM_BWRAP_DIRS)} (PATH is not searched)"
    try:
        proc = subprocess.run(
            [path, "--ro-bind", "/", "/", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} could not be started: {exc}"
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = detail[0] if detail else f"exit status {proc.returncode}"
        return None, (
            f"{path} is installed but cannot create a sandbox here ({why}); "
            "unprivileged user namespaces may be disabled, e.g. by "
            "`kernel.apparmor_restrict_unprivileged_userns = 1` on Ubuntu 24.04+"
        )
    return path, ""


def bwrap_available() -> str | None:
    """Path of a working ``bwrap``, or None. The probe runs once and is cached."""
    return _probe()[0]


def _unavailable_message() -> str:
    path, reason = _probe()
    if path is None and reason:
        return f"{INSTALL_HINT} ({reason})"
    return INSTALL_HINT


def _real(path: Path | str, workspace: Path | None = None) -> Path:
    """Absolute, symlink-free ``path``: ``~`` expanded, relative to ``workspace``."""
    # On strings: this runs for every root and mask before every command.
    text = os.path.expanduser(os.fspath(path))
    if not os.path.isabs(text) and workspace is not None:
        text = os.path.join(workspace, text)
    return Path(os.path.realpath(text))


def _depth_sorted(paths: Iterable[Path]) -> list[Path]:
    """Unique paths, parents before children (later binds stack on earlier ones)."""
    unique = list(dict.fromkeys(paths))
    return sorted(unique, key=lambda p: len(p.parts))


#: The most a mask (an empty tmpfs over a socket or forbidden folder) may hold:
#: nothing is meant to be written there, and there may be many of them.
MASK_SIZE_CAP = 16 * 1024 * 1024


def _mask_size(policy: SandboxPolicy) -> int:
    return min(policy.tmp_size, MASK_SIZE_CAP)


def _socket_masks(size: int) -> list[str]:
    """tmpfs over the host's socket directories (network off).

    They come before the write roots are bound, so a root inside one of them
    (say a session temp dir under ``$XDG_RUNTIME_DIR``) is bound back in.
    """
    dirs = [Path(d) for d in SOCKET_DIRS]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        dirs.append(Path(runtime))
    argv: list[str] = []
    for directory in _depth_sorted(dirs):
        if directory.is_symlink() or not directory.is_dir():
            continue  # /var/run is usually a link to /run, masked already
        argv += ["--size", str(size), "--tmpfs", str(directory)]
    return argv


def shell_argv(command: str) -> list[str]:
    """How a sandboxed command is run inside bubblewrap (fresh or kept)."""
    return [BASH, "--noprofile", "--norc", "-c", command]


def build_command(
    policy: SandboxPolicy,
    command: str,
    *,
    seccomp_fd: int | None = None,
    granted_fds: Sequence[tuple[Path, int]] = (),
) -> list[str]:
    """The argv that runs ``command`` under ``policy``.

    ``seccomp_fd`` is a descriptor holding the seccomp filter, which the
    child must inherit (``pass_fds``); :func:`prepare_command` always supplies it. ``granted_fds`` pairs each of
    ``policy.granted`` with a descriptor of it (:func:`open_granted`), bound
    with ``--bind-fd`` so the folder judged is the folder bound. Raises
    :class:`SandboxUnavailable` when the policy enforces a sandbox and
    bubblewrap is missing or unusable, or the workspace's git metadata cannot
    be protected.
    """
    if policy.bash == "off":
        return [BASH, "-c", command]
    return bwrap_argv(policy, seccomp_fd=seccomp_fd, granted_fds=granted_fds) + shell_argv(command)


def bwrap_argv(
    policy: SandboxPolicy,
    *,
    seccomp_fd: int | None = None,
    granted_fds: Sequence[tuple[Path, int]] = (),
) -> list[str]:
    """bubblewrap and every option of the sandbox ``policy`` describes, without the
    command: what :func:`build_command` runs a command under, and what a kept
    sandbox (:mod:`reasonix_core.tool.kept_sandbox`) is built from and compared
    with before every command. Raises as :func:`build_command` does."""
    if policy.bash != "enforce":
        raise SandboxUnavailable(f"unknown [sandbox] bash mode {policy.bash!r}")
    bwrap = bwrap_available()
    if bwrap is None:
        raise SandboxUnavailable(_unavailable_message())

    workspace = _real(policy.workspace)
    roots = [_real(p, workspace) for p in policy.write_roots]
    hidden_paths = [_real(p, workspace) for p in policy.forbid_read]
    _refuse_writable_bwrap(bwrap, [*roots, *policy.granted])
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        # bubblewrap leaves /proc/sys writable when the folder itself is not (it
        # checks only the folder): run as root, a command with no capability can
        # still write any sysctl (kernel.core_pattern = `|/workspace/script` runs
        # that script as root on the host at the next crash; kernel.hostname is
        # the host's). Read-only, the host's view (net.* still shows the
        # sandbox's own namespace, resolved by the reader).
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        # Every tmpfs has a size cap, or a command could fill the host's RAM with
        # files (and on a kept sandbox keep them until the sweep). /dev gets its
        # own capped /dev/shm and is then read-only (bubblewrap cannot cap --dev);
        # /dev/mqueue shows the sandbox's own message queues (its IPC namespace),
        # which lets the zygote list and remove them after every command.
        "--size", str(policy.tmp_size), "--tmpfs", "/dev/shm",
        "--mqueue", "/dev/mqueue",
        "--remount-ro", "/dev",
        "--size", str(policy.tmp_size), "--tmpfs", "/tmp",
    ]  # fmt: skip
    if not policy.network:
        argv += _socket_masks(_mask_size(policy))
    by_fd = dict(granted_fds)
    writable = _depth_sorted([*(r for r in roots if r.is_dir()), *by_fd])
    argv += _writable_binds(writable, by_fd)
    argv += _git_metadata_binds(writable, by_fd)
    # Masks come last so they cover paths inside writable roots too.
    argv += _read_masks(hidden_paths, _mask_size(policy))
    if not policy.network:
        argv.append("--unshare-net")
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += [
        # SysV IPC and POSIX message queues are not files: without their own
        # namespace a command's queue or shared memory segment is the host's, there
        # for host processes of the same uid and for later commands.
        "--unshare-ipc",
        # Run as root, bubblewrap keeps every capability for the command unless told
        # otherwise: `umount` of a mask would show the secret and `mount -o
        # remount,rw /` would make the host writable. Unprivileged, this is a no-op.
        "--cap-drop", "ALL",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir", str(workspace),
    ]  # fmt: skip
    return argv


def _refuse_writable_bwrap(bwrap: str, writable: Sequence[Path]) -> None:
    """A bubblewrap that a sandboxed command could replace is not trusted."""
    real_bwrap = Path(os.path.realpath(bwrap))
    if any(is_within(real_bwrap, root) for root in writable):
        raise SandboxUnavailable(
            f"{bwrap} resolves to {real_bwrap}, inside a folder sandboxed commands can "
            "write; refusing to trust it"
        )


def _writable_binds(writable: Sequence[Path], by_fd: dict[Path, int]) -> list[str]:
    """Each writable root bound read-write: a granted folder by its descriptor (the
    folder judged is the folder bound), the others by path."""
    argv: list[str] = []
    for root in writable:
        if root in by_fd:
            argv += ["--bind-fd", str(by_fd[root]), str(root)]
        else:
            argv += ["--bind", str(root), str(root)]
    return argv


def _git_metadata_binds(writable: Sequence[Path], by_fd: dict[Path, int]) -> list[str]:
    """Git metadata that decides what host git runs later stays out of reach, in
    every writable root (an `allow_write` folder may hold another repository)."""
    argv: list[str] = []
    try:
        for root in writable:
            argv += git_binds(root)
        # A granted folder may be a folder of checkouts (`~/src`): protect every
        # repository below its top level too, or refuse (the scan is bounded).
        for root in by_fd:
            argv += nested_git_binds(root)
    except UnsafeGitLayout as exc:
        raise SandboxUnavailable(str(exc)) from None
    return argv


#: What ``Path.exists()`` takes to mean "not there" (pathlib's ignored errnos).
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _read_masks(hidden_paths: Sequence[Path], size: int) -> list[str]:
    """What sandboxed commands must not read: a folder under an empty tmpfs, a file
    under /dev/null."""
    argv: list[str] = []
    for hidden in _depth_sorted(hidden_paths):
        try:
            mode = os.stat(hidden).st_mode
        except ValueError:
            continue
        except OSError as exc:
            if exc.errno in _MISSING:
                continue  # nothing to hide (yet), as pathlib's exists() says
            raise
        if stat.S_ISDIR(mode):
            argv += ["--size", str(size), "--tmpfs", str(hidden)]
        else:
            argv += ["--ro-bind", "/dev/null", str(hidden)]
    return argv


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """An argv plus the descriptors its process must inherit (``pass_fds``).

    The caller spawns it, then calls :meth:`close` (the child keeps its copies).
    """

    argv: list[str]
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass


def prepare_command(policy: SandboxPolicy, command: str) -> ShellCommand:
    """What to spawn for ``command`` under ``policy``, the seccomp filter included.

    Raises :class:`SandboxUnavailable` as :func:`build_command` does, and when
    the seccomp filter cannot be built here: the command is refused rather than
    run with the keyrings (or, network off, host sockets) in reach.
    """
    if policy.bash != "enforce":
        return ShellCommand(build_command(policy, command))
    try:
        program = sandbox_filter(network=policy.network)
    except SeccompUnsupported as exc:
        raise SandboxUnavailable(
            f"{exc}; sandboxed commands must not reach the kernel keyrings (nor, with "
            "`[sandbox] network = false`, host unix sockets), so the command was not run. "
            'Set `[sandbox] bash = "off"` to run unconfined'
        ) from None
    fds: list[int] = []
    try:
        granted: list[tuple[Path, int]] = []
        for path in policy.granted:
            try:
                fd = open_granted(path)
            except OSError as exc:
                raise SandboxUnavailable(
                    f"the granted folder {path} cannot be bound ({exc}); nothing was run"
                ) from None
            fds.append(fd)
            granted.append((path, fd))
        seccomp = filter_fd(program)
        fds.append(seccomp)
        argv = build_command(policy, command, seccomp_fd=seccomp, granted_fds=granted)
        return ShellCommand(argv, tuple(fds))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _is_secret(name: str, secrets: set[str] | frozenset[str]) -> bool:
    return name in secrets or name.upper().endswith("_API_KEY")


def sanitized_env(secret_names: Iterable[str] = ()) -> dict[str, str]:
    """``os.environ`` without provider keys, plus the quiet-terminal variables.

    Removed: every name in ``secret_names`` and any variable whose name ends in
    ``_API_KEY``.
    """
    secrets = set(secret_names)
    env = {k: v for k, v in os.environ.items() if not _is_secret(k, secrets)}
    env.update(QUIET_ENV)
    return env
