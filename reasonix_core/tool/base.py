"""The Tool protocol, tool results and the per-call context.

A tool never raises out of ``execute`` for an ordinary failure: it returns a
:class:`ToolResult` with ``is_error=True`` so the model can correct itself. The
registry catches anything that escapes anyway and turns it into a result.
"""

from __future__ import annotations

import enum
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from reasonix_core.permission.approver import Approver


#: The model's id of the tool call being executed, for tools that report
#: progress or ask for approval on behalf of another call (the MCP proxy).
current_call_id: ContextVar[str] = ContextVar("reasonix_current_call_id", default="")


class ToolFamily(enum.StrEnum):
    """What kind of effect a tool has; permission rules read it (the ``Read``
    and ``Edit`` aliases cover a family, network tools fall back to asking)."""

    READ = "read"  # reads files by path
    EDIT = "edit"  # writes, edits or moves files by path
    EXECUTE = "execute"  # runs or manages processes
    NETWORK = "network"  # sends data off the machine
    OTHER = "other"  # session state, questions, memory, MCP tools


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    text: str
    is_error: bool = False
    # "ok" | "error" | "denied" | "cancelled" | "unknown"
    outcome: str = "ok"
    # Local-only extras (e.g. a diff for the UI); never sent to the provider.
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, text: str, **meta: Any) -> ToolResult:
        return cls(text=text, is_error=True, outcome="error", meta=dict(meta))


@dataclass(kw_only=True)
class ToolContext:
    """What a tool may touch during one session. Shared by every call."""

    workspace: Path
    temp_dir: Path
    bash_timeout_seconds: float = 120.0
    approver: Approver | None = None
    # Environment variable names never passed to subprocesses (provider keys).
    secret_env: frozenset[str] = frozenset()
    # Free-form per-session services owned by the tool package (observation
    # ledger, background jobs, todo list, sandbox); keyed by their module.
    services: dict[str, Any] = field(default_factory=dict)


class Tool(Protocol):
    """A capability the model can call.

    ``parameters`` is the JSON schema of the arguments object; the registry
    canonicalises it once so the bytes the provider sees never change within a
    session.
    """

    name: str
    description: str
    read_only: bool
    family: ToolFamily
    parameters: dict[str, Any]

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
