"""The host's own record of a child's run: what it wrote, what it ran, what it reported.

Every tool of a child runs through :class:`RecordedTool`, so the record comes
from the host, not from the child's prose: the paths a path-aware writer
(a tool whose spec declares ``writes``) wrote successfully, each ``bash``
command that ran and its exit code, and the ``complete_subtask`` report.
Adjudication (:mod:`reasonix_core.subagent.completion`) checks the report
against this record, and the write claim is compared with it after the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonix_core.tool.base import Tool, ToolContext, ToolResult
from reasonix_core.tool.sandbox import PathDenied, SandboxPolicy

BASH = "bash"


@dataclass(frozen=True, slots=True)
class CommandReceipt:
    """A ``bash`` command that ran (a refused one has no receipt) and its exit code."""

    command: str
    exit_code: int

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0


@dataclass
class Receipts:
    # Resolved paths, in the order first written.
    writes: dict[Path, None] = field(default_factory=dict)
    commands: list[CommandReceipt] = field(default_factory=list)
    # The last complete_subtask arguments (validated), and how many reports came.
    report: dict[str, Any] | None = None
    reports: int = 0
    # bash ran and its changes could not be itemised (a claim too large to snapshot).
    bash_unaccounted: bool = False
    # Called after each successful path-aware write (the runner narrows the
    # scheduling reservation of an unclaimed writer with it).
    on_write: Callable[[], None] | None = None

    def note_bash_changes(self, paths: list[Path] | None) -> None:
        """The files in the claim that changed while the child could run bash
        (None: too many files to tell), counted as host-observed writes."""
        if paths is None:
            self.bash_unaccounted = True
            return
        for path in paths:
            self.writes.setdefault(path, None)

    def accept_report(self, report: dict[str, Any]) -> None:
        self.report = report
        self.reports += 1

    def record(
        self, tool: Tool, args: dict[str, Any], result: ToolResult, sandbox: SandboxPolicy
    ) -> None:
        if result.outcome in ("denied", "cancelled"):
            return
        if tool.name == BASH and not args.get("run_in_background"):
            # Only a command that ran has an exit code; one refused before it
            # started (a sandbox it cannot have, additional_write_dirs, bad
            # arguments) is no command of the receipt.
            exit_code = result.meta.get("exit_code")
            command = args.get("command")
            if isinstance(command, str) and isinstance(exit_code, int):
                self.commands.append(CommandReceipt(command, exit_code))
            return
        if result.is_error:
            return
        keys = written_keys(tool)
        for key in keys:
            value = args.get(key)
            if not isinstance(value, str):
                continue
            try:
                # The entry written (a link itself, not its target): its folder
                # resolved physically, as the tool located it.
                self.writes.setdefault(sandbox.resolve(value, follow_symlinks=False), None)
            except PathDenied:
                continue
        if keys and self.on_write is not None:
            self.on_write()


def written_keys(tool: Tool) -> tuple[str, ...]:
    """The argument keys naming paths ``tool`` writes (its spec's ``writes``)."""
    spec = getattr(tool, "spec", None)
    return tuple(getattr(spec, "writes", ()) or ())


class RecordedTool:
    """A child's tool, recorded by the host on every call."""

    def __init__(self, inner: Tool, receipts: Receipts) -> None:
        self.inner = inner
        self.receipts = receipts
        self.name = inner.name
        self.description = inner.description
        self.read_only = inner.read_only
        self.family = inner.family
        self.parameters = inner.parameters
        self.spec = getattr(inner, "spec", None)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await self.inner.execute(args, ctx)
        sandbox = ctx.sandbox or SandboxPolicy(workspace=ctx.workspace, temp_dir=ctx.temp_dir)
        self.receipts.record(self.inner, args, result, sandbox)
        return result


# -- what bash changed --------------------------------------------------------------

#: Entries a claim snapshot looks at before it gives up (then bash's changes are
#: not itemised, and the receipt says so).
SNAPSHOT_LIMIT = 50_000

State = dict[Path, tuple[int, int, int]]


def snapshot(roots: tuple[Path, ...]) -> State | None:
    """(mtime_ns, size, inode) of every file below the claimed ``roots``, or
    None past :data:`SNAPSHOT_LIMIT`. Blocking: run it in a worker thread.

    Taken before and after a child that may run ``bash``: bubblewrap keeps its
    writes inside the claim, and this tells the host which files there it
    changed (evidence for ``diff``/``files``, ``subagent_mutations``). The
    folders every walking tool skips (``.git``, ``node_modules``, ...) are
    skipped here too. Bash is kept only for claims of existing folders, so a
    root is a folder (a missing one contributes nothing)."""
    from reasonix_core.tool.builtin._fs import SKIP_DIRS

    state: State = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            for name in files:
                path = Path(folder) / name
                try:
                    st = path.lstat()
                except OSError:
                    continue
                state[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
                if len(state) > SNAPSHOT_LIMIT:
                    return None
    return state


def changed(before: State | None, after: State | None) -> list[Path] | None:
    """Files created, modified or deleted between two snapshots, sorted; None
    when either snapshot gave up (too many files to tell). An empty snapshot is
    a claim emptied, every file of ``before`` deleted, not one past the limit."""
    if before is None or after is None:
        return None
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
