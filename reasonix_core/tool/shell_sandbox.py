"""Confining shell commands: the bubblewrap command line and a clean environment.

With ``[sandbox] bash = "enforce"`` every shell command runs under bubblewrap:
the whole filesystem is mounted read-only, only the write roots (workspace,
session temp dir, ``allow_write``) are writable, ``forbid_read`` paths are
masked, the network is unshared unless ``[sandbox] network = true`` and the
command gets its own PID namespace, so killing bubblewrap kills everything the
command started. If bubblewrap is missing or cannot create a sandbox here,
:func:`build_command` raises :class:`SandboxUnavailable`; there is never a
silent unconfined fallback. ``bash = "off"`` runs plain ``/bin/bash -c``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from reasonix_core.errors import ReasonixError
from reasonix_core.tool.sandbox import SandboxPolicy

BASH = "/bin/bash"

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


@functools.cache
def _probe() -> tuple[str | None, str]:
    """Find bwrap and check it can build a sandbox here (once per process).

    Returns ``(path, "")`` when usable, else ``(None, reason)``. Containers
    often forbid the user namespaces bubblewrap needs, so being installed is
    not enough.
    """
    path = shutil.which("bwrap")
    if path is None:
        return None, "bwrap was not found on PATH"
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
    p = Path(os.path.expanduser(os.fspath(path)))
    if not p.is_absolute() and workspace is not None:
        p = workspace / p
    return Path(os.path.realpath(p))


def _depth_sorted(paths: Iterable[Path]) -> list[Path]:
    """Unique paths, parents before children (later binds stack on earlier ones)."""
    unique = list(dict.fromkeys(paths))
    return sorted(unique, key=lambda p: len(p.parts))


def build_command(policy: SandboxPolicy, command: str) -> list[str]:
    """The argv that runs ``command`` under ``policy``.

    Raises :class:`SandboxUnavailable` when the policy enforces a sandbox and
    bubblewrap is missing or unusable.
    """
    shell = [BASH, "--noprofile", "--norc", "-c", command]
    if policy.bash == "off":
        return [BASH, "-c", command]
    if policy.bash != "enforce":
        raise SandboxUnavailable(f"unknown [sandbox] bash mode {policy.bash!r}")
    bwrap = bwrap_available()
    if bwrap is None:
        raise SandboxUnavailable(_unavailable_message())

    workspace = _real(policy.workspace)
    roots = [_real(p, workspace) for p in policy.write_roots]
    hidden_paths = [_real(p, workspace) for p in policy.forbid_read]
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
    ]  # fmt: skip
    for root in _depth_sorted(r for r in roots if r.is_dir()):
        argv += ["--bind", str(root), str(root)]
    # Git metadata that can run code later (hooks, config) stays read-only even
    # inside a writable workspace, so the sandbox cannot plant an escape.
    git_dir = workspace / ".git"
    if git_dir.is_dir():
        for name in ("config", "hooks"):
            target = git_dir / name
            if target.exists() and not target.is_symlink():
                argv += ["--ro-bind", str(target), str(target)]
    # Masks come last so they cover paths inside writable roots too.
    for hidden in _depth_sorted(hidden_paths):
        if hidden.is_dir():
            argv += ["--tmpfs", str(hidden)]
        elif hidden.exists():
            argv += ["--ro-bind", "/dev/null", str(hidden)]
    if not policy.network:
        argv.append("--unshare-net")
    argv += [
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir", str(workspace),
    ]  # fmt: skip
    return argv + shell


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
