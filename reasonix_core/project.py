"""The folders a project's files are discovered in: from the git root down to the
current directory, root first.

Run from ``repo/src/pkg``, the root's ``AGENTS.md``, ``reasonix.toml``,
``.mcp.json`` and ``.reasonix/commands`` belong to the run as much as the current
folder's own; a deeper folder's file comes later and so wins where settings clash.
Outside a git repository the current directory alone is the project. Discovery
reads; the write scope stays the workspace (the current directory or
``--workspace``).

Stdlib only: :mod:`reasonix_core.trust` uses it before the first frame.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["file_label", "git_root", "project_folders"]

GIT_MARKER = ".git"  # a folder, or a file in a worktree or submodule


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git``, or None."""
    here = Path(os.path.realpath(start))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / GIT_MARKER):
            return folder
    return None


def project_folders(cwd: Path) -> tuple[Path, ...]:
    """The git root, each folder below it, and ``cwd`` (real paths, root first);
    ``(cwd,)`` outside a repository."""
    here = Path(os.path.realpath(cwd))
    root = git_root(here)
    if root is None or root == here:
        return (here,)
    below = here.relative_to(root).parts
    return tuple(root.joinpath(*below[:depth]) for depth in range(len(below) + 1))


def file_label(path: Path, cwd: Path) -> str:
    """How a project file is named to the user: relative to ``cwd`` (``reasonix.toml``,
    ``../../.mcp.json``)."""
    return os.path.relpath(path, os.path.realpath(cwd))
