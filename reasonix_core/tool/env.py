"""The facts of one session every tool call sees (:class:`SessionEnv`).

Frozen, and owned by the session (``reasonix_core/session/build.py`` makes it
once): the tool context of each agent carries it whole, and a subagent's is
derived with :meth:`SessionEnv.child`, never copied field by field. What a
tool may change during the session (the file ledger, the todos, the memory
stores) lives beside it in the :class:`~reasonix_core.tool.base.ToolContext`.

Declared in the tool layer because tools read it; the session above fills it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: building an environment imports none of these
    from datetime import datetime

    from reasonix_core.hooks.engine import Hooks
    from reasonix_core.permission.approver import Approver
    from reasonix_core.tool.call_gate import CallGate
    from reasonix_core.tool.sandbox import SandboxPolicy
    from reasonix_core.tool.sandbox_keeper import SandboxKeeper
    from reasonix_core.tool.text_files import TextFiles


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEnv:
    """Where a session works and who decides for it.

    The session fills every fact; tests and embedders set only what they
    exercise, so each ``None`` below has a stated fallback.
    """

    workspace: Path
    # The session's temp dir (removed with it); the sandbox lets tools write there.
    temp_dir: Path
    # The Reasonix home (memory, sessions); None: ``$REASONIX_HOME``.
    home: Path | None = None
    # Where file tools and bash may read and write. None: the default policy
    # (workspace + temp_dir), not stored.
    sandbox: SandboxPolicy | None = None
    # The session's kept sandboxes (tool/kept_sandbox.py), shared with its
    # subagents; closed by the session. None: a fresh bubblewrap per command.
    kept_sandboxes: SandboxKeeper | None = None
    # Who answers the questions a tool asks the user. None: no one (refused).
    approver: Approver | None = None
    # The session's permission gate, for tools that call other tools
    # (``use_capability``; None: their targets are not checked again) and for
    # ``bash``'s ``additional_write_dirs`` (None: refused, nobody can grant them).
    gate: CallGate | None = None
    # "May ``tool`` not see ``path``?" (deny rules, protected paths). None: walking
    # tools filter nothing beyond the sandbox.
    read_denied: Callable[[str, Path], bool] | None = None
    # Environment variable names never passed to subprocesses (provider keys).
    secret_env: frozenset[str] = frozenset()
    bash_timeout_seconds: float = 120.0
    # The clock facts and records are stamped with; None: the wall clock.
    clock: Callable[[], datetime] | None = None
    # The transcript this agent writes ("this session" to the memory tools).
    session_id: str = ""
    # The session's configured hooks (docs/HOOKS.md), shared with its subagents.
    # None: no hook runs.
    hooks: Hooks | None = None
    # An editor's view of the workspace's files (an ACP client's unsaved buffers):
    # read_file and the writers go through it. None: the host disk. Subagents share it.
    text_files: TextFiles | None = None

    def child(self, *, session_id: str, sandbox: SandboxPolicy) -> SessionEnv:
        """A subagent's environment: the session's workspace, home, temp dir, gate,
        approver, secrets and clock; its own transcript, and its sandbox (bound
        to its write claim)."""
        return dataclasses.replace(self, session_id=session_id, sandbox=sandbox)
