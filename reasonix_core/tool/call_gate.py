"""What tools that run other tools need of the session's permission gate.

Declared here rather than imported: permission/ reads each tool's family, so the
tool layer must not depend on permission/ (no import cycle).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol


class GateDecision(Protocol):
    @property
    def verdict(self) -> enum.Enum: ...
    @property
    def rule(self) -> str | None: ...


class GatePolicy(Protocol):
    def decide(
        self, tool: str, read_only: bool, args: Mapping[str, Any] | None
    ) -> GateDecision: ...


class GateAuthorization(Protocol):
    @property
    def allowed(self) -> bool: ...
    @property
    def message(self) -> str: ...
    @property
    def summary(self) -> str: ...  # a refusal in people's words


#: A PreToolUse hook's ``(permissionDecision, reason)`` about the MCP tool the
#: running ``use_capability`` call targets (agent/tool_batch.py sets it in the
#: call's own task): the hook spoke about the target, so the target's permission
#: check (mcp/capability.py) passes it to ``CallGate.authorize`` as ``hook``, where
#: it tightens or skips a question exactly as for a built-in tool (docs/HOOKS.md).
target_hook: ContextVar[tuple[str, str] | None] = ContextVar("target_hook", default=None)


class CallGate(Protocol):
    """What a tool that runs other tools (``use_capability``) needs of the session's
    permission gate (:class:`reasonix_core.permission.gate.PermissionGate`).

    Declared here rather than imported: permission/ reads each tool's family, so the
    tool layer must not depend on permission/ (no import cycle).
    """

    @property
    def policy(self) -> GatePolicy: ...

    async def authorize(
        self,
        *,
        tool: str,
        read_only: bool,
        args: Mapping[str, Any] | None,
        call_id: str,
        summary: str = "",
        hook: tuple[str, str] | None = None,
    ) -> GateAuthorization: ...

    async def authorize_write_scope(
        self, *, dirs: Sequence[Path], justification: str, command: str, call_id: str
    ) -> GateAuthorization:
        """May ``bash`` write these resolved folders outside its write roots for one
        call (``additional_write_dirs``)?"""
        ...
