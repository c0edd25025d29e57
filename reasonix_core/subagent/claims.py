"""Write claims (seed 000 §3.12): one source of truth for scheduling and enforcement.

A writer child's claim is resolved once, before it starts: every claimed path
to its physical form (symlinks and ``..`` resolved down to the deepest
existing ancestor, the rest appended), and required inside the workspace. The
child's :class:`~reasonix_core.tool.sandbox.SandboxPolicy` then carries the
claim as its only write roots (besides its temp dir): the path-aware file
tools resolve every target by directory descriptor
(:mod:`reasonix_core.tool.fs_walk`) and refuse anything outside, and bubblewrap
binds only the claimed folders writable for ``bash``. Where bubblewrap cannot
do that, ``bash`` is removed from the child instead (:func:`bash_rebind_problem`).
An omitted claim is the whole workspace. A claim written as a folder glob
(``src/**``, ``src/*``: the spelling models use) claims the folder; any other
wildcard is refused before the child starts (:func:`claim_folder`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reasonix_core.subagent.spec import SubagentError
from reasonix_core.tool.sandbox import PathDenied, SandboxPolicy, is_within
from reasonix_core.tool.write_scope import git_metadata_refusal, write_root_git_refusal

#: Wildcards a claim cannot hold except as whole trailing segments. (``[`` is
#: left literal: ``pages/[id].tsx`` is a real file name.)
_WILDCARDS = ("*", "?")


def claim_folder(entry: str) -> str:
    """The path ``entry`` claims: a trailing ``/**`` or ``/*`` (repeated, as in
    ``src/**/*``) names the folder before it; raises :class:`SubagentError` for
    any other wildcard, naming the forms to use."""
    path = entry.rstrip("/") or entry
    while True:
        head, _, last = path.rpartition("/")
        if last not in ("*", "**"):
            break
        path = head.rstrip("/") or ("/" if entry.startswith("/") else ".")
    if any(mark in path for mark in _WILDCARDS):
        raise SubagentError(
            f"write_paths: {entry!r} is a pattern; name the folder to write (`src`, or "
            "`src/**` for everything in it) or each file, not a glob"
        )
    return path


def resolve_claim(write_paths: Iterable[str] | None, sandbox: SandboxPolicy) -> tuple[Path, ...]:
    """The claimed paths, resolved; ``None`` claims the whole workspace.

    Raises :class:`SubagentError` for a path that cannot name a file, that
    resolves outside the workspace (``..``, an absolute path elsewhere, a
    symlink pointing out), into a protected path, or into git metadata (the
    write-scope grant's rule: a hook planted there runs on the host)."""
    root = sandbox.root
    if write_paths is None:
        return (root,)
    forbidden = sandbox.resolved_forbid_read()
    out: list[Path] = []
    for entry in write_paths:
        try:
            resolved = sandbox.resolve(claim_folder(entry))
        except PathDenied as exc:
            raise SubagentError(f"write_paths: {exc}") from None
        if not is_within(resolved, root):
            raise SubagentError(
                f"write_paths: {entry!r} resolves to {resolved}, outside the workspace {root}; "
                "a subagent can claim only paths inside the workspace"
            )
        if any(is_within(resolved, f) for f in forbidden):
            raise SubagentError(f"write_paths: {entry!r} is inside a protected path")
        # The whole workspace is the session's own root (its git metadata is the
        # sandbox's to protect, as without a claim); a folder below it is a root
        # of its own, judged as a write grant is.
        if resolved == root:
            why = git_metadata_refusal(resolved)
        else:
            why = write_root_git_refusal(resolved, root)
        if why:
            raise SubagentError(f"write_paths: {entry!r} resolves to {resolved}, {why}")
        if resolved not in out:
            out.append(resolved)
    return tuple(out)


def claimed(path: Path, claim: tuple[Path, ...]) -> bool:
    """Is the resolved ``path`` inside the claim?"""
    return any(is_within(path, root) for root in claim)


def bash_rebind_problem(sandbox: SandboxPolicy, claim: tuple[Path, ...]) -> str | None:
    """Why ``bash`` cannot be confined to ``claim`` here, or None when it can.

    Only bubblewrap can rebind bash's write roots: with ``[sandbox] bash =
    "off"``, no usable bwrap, or a claimed path that is not an existing folder
    (which bwrap cannot bind writable for new files), the child gets no bash."""
    if sandbox.bash != "enforce":
        return 'the bash sandbox is off ([sandbox] bash = "off"), so bash cannot be confined'
    from reasonix_core.tool.shell_sandbox import bwrap_available

    if bwrap_available() is None:
        return "bubblewrap is not available, so bash cannot be confined to the claim"
    for path in claim:
        if not path.is_dir():
            return f"{sandbox.display(path)} is not an existing folder the sandbox can bind"
    return None
