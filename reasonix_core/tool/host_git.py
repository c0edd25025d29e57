"""Running the host's git on behalf of Reasonix itself, hardened.

Git runs programs named in configuration and repository metadata (hooks,
``core.fsmonitor``, filter and diff drivers, ``core.sshCommand``...), and a
sandboxed command may have written the workspace. Whenever Reasonix runs git
itself (the gitlink query of :mod:`git_guard`, the checkpoint store), it goes
through :func:`git_command` and :func:`git_env`:

- the program is the system git (``system_programs``), never one found on PATH;
- no system or user configuration (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``), no inherited ``GIT_*`` variable;
- hooks and fsmonitor off on the command line, which outranks any repository
  config; ``safe.directory`` there too, since the repository Reasonix names
  explicitly may be owned by another user (its config is never executable here).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from reasonix_core.tool.system_programs import find_system_program

#: ``-c`` options every Reasonix git call carries (command-line config wins).
HARDENING: tuple[str, ...] = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "safe.directory=*",
    "-c", "core.sshCommand=false",
    "-c", "protocol.allow=never",
)  # fmt: skip


def host_git() -> str | None:
    """The system git, or None when the host has none."""
    return find_system_program("git")


def git_env(
    git_dir: Path, work_tree: Path | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for git on ``git_dir``: no inherited ``GIT_*``, no
    system or user config, no optional locks on a repository we only read."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_ATTR_NOSYSTEM="1",
    )
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    env.update(extra or {})
    return env


def git_command(git: str, *args: str) -> list[str]:
    """``git <hardening> args``."""
    return [git, *HARDENING, *args]
