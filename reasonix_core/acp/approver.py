"""The session's :class:`Approver` over ACP: an ``ask`` decision becomes a
``session/request_permission`` request to the editor."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from reasonix_core.acp.tool_calls import tool_view
from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Question,
    QuestionAnswer,
)

log = logging.getLogger(__name__)

ALLOW_ONCE, ALLOW_ALWAYS = "allow_once", "allow_always"
REJECT_ONCE, REJECT_ALWAYS = "reject_once", "reject_always"
OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
    PermissionOption(option_id=REJECT_ALWAYS, name="Always reject", kind="reject_always"),
]


class AcpApprover:
    """Asks the editor. allow_always is the TUI's "this session" grant (the gate
    records the scope); reject_always refuses the same scope for the rest of the
    session without asking again. The editor is interactive: no fail-closed rule."""

    interactive = True

    def __init__(self, client: Client, workspace: Path) -> None:
        self.client, self.workspace = client, workspace
        # Known once the session is built (the approver is given to the build).
        self.session_id = ""
        self._rejected_scopes: set[str] = set()

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        if request.scope and request.scope in self._rejected_scopes:
            return ApprovalDecision.DENY
        view = tool_view(request.tool, _json(request.arguments), self.workspace)
        title = request.summary or view.title
        if request.requester is not None:
            title = f"[{'/'.join(request.requester.agent_path)}] {title}"
        tool_call = ToolCallUpdate(
            tool_call_id=request.call_id,
            title=title,
            kind=view.kind,  # type: ignore[arg-type]
            status="pending",
            raw_input=request.arguments,
        )
        response = await self.client.request_permission(
            session_id=self.session_id, tool_call=tool_call, options=OPTIONS
        )
        outcome = response.outcome
        chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else REJECT_ONCE
        log.info("permission %s for %s: %s", request.call_id, request.tool, chosen)
        if chosen == ALLOW_ONCE:
            return ApprovalDecision.ALLOW_ONCE
        if chosen == ALLOW_ALWAYS:
            return ApprovalDecision.ALLOW_SESSION
        if chosen == REJECT_ALWAYS and request.scope:
            self._rejected_scopes.add(request.scope)
        return ApprovalDecision.DENY

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        return None  # ACP has no multiple-choice question yet: nobody can answer


def _json(arguments: dict[str, Any]) -> str:
    import json

    return json.dumps(arguments)
