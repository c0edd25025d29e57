"""The session's :class:`Approver` over ACP: an ``ask`` decision becomes a
``session/request_permission`` request to the editor."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from reasonix_core.acp.tool_calls import tool_view
from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Question,
    QuestionAnswer,
)
from reasonix_core.permission.summary import visible

if TYPE_CHECKING:
    from reasonix_core.coordinator.plans import PlanVerdict, SavedPlan

log = logging.getLogger(__name__)

ALLOW_ONCE, ALLOW_ALWAYS = "allow_once", "allow_always"
REJECT_ONCE, REJECT_ALWAYS = "reject_once", "reject_always"
OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
    PermissionOption(option_id=REJECT_ALWAYS, name="Always reject", kind="reject_always"),
]

# The ask tool's options: ``answer-<index>`` for each answer, and a decline.
ANSWER, DECLINE = "answer-", "decline"

PLAN_APPROVE, PLAN_KEEP, PLAN_REJECT = "approve_plan", "keep_planning", "reject_plan"
PLAN_OPTIONS = [
    PermissionOption(option_id=PLAN_APPROVE, name="Approve and execute", kind="allow_once"),
    PermissionOption(option_id=PLAN_KEEP, name="Keep planning", kind="reject_once"),
    PermissionOption(option_id=PLAN_REJECT, name="Reject the plan", kind="reject_always"),
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
        # The exit_plan_mode / submit_plan call being answered (set by the turn).
        self.plan_call_id = ""
        # The ask call being answered (set by the turn).
        self.ask_call_id = ""

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        if not self.session_id:
            # Asked while the session is being built (an instruction file's import from
            # outside the project): the editor knows no session to ask about yet.
            return ApprovalDecision.DENY
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
        chosen = await self._chosen(tool_call, OPTIONS, cancelled=REJECT_ONCE)
        log.info("permission %s for %s: %s", request.call_id, request.tool, chosen)
        if chosen == ALLOW_ONCE:
            return ApprovalDecision.ALLOW_ONCE
        if chosen == ALLOW_ALWAYS:
            return ApprovalDecision.ALLOW_SESSION
        if chosen == REJECT_ALWAYS and request.scope:
            self._rejected_scopes.add(request.scope)
        return ApprovalDecision.DENY

    async def approve_plan(self, saved: SavedPlan) -> PlanVerdict:
        """Plan mode's (and the planner's) plan, approved through a permission
        request on the call that presented it: approve, keep planning, or reject."""
        from reasonix_core.coordinator.plans import PlanVerdict

        tool_call = _question_call(
            self.plan_call_id or f"plan-{saved.id}", "Approve the plan", saved.plan
        )
        chosen = await self._chosen(tool_call, PLAN_OPTIONS, cancelled=PLAN_KEEP)
        log.info("plan %s: %s", saved.id, chosen)
        if chosen == PLAN_APPROVE:
            return PlanVerdict.APPROVE
        return PlanVerdict.REJECT if chosen == PLAN_REJECT else PlanVerdict.KEEP

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        """The ``ask`` tool's questions, one permission request each on the ask
        call, its options the answers (ACP v1's only choice a client surely
        shows; a multi-select question takes one answer here). Declining, or
        cancelling, any question declines them all: [] (the model is told so)."""
        answers: list[QuestionAnswer] = []
        for n, question in enumerate(questions, 1):
            # The model's text, shown by the editor: escaped, so an ESC, a bidi
            # override or a CR cannot redraw a terminal client's dialog.
            options = [
                PermissionOption(option_id=f"{ANSWER}{i}", name=visible(option), kind="allow_once")
                for i, option in enumerate(question.options)
            ]
            asked = visible(question.question)
            options.append(PermissionOption(option_id=DECLINE, name="Decline", kind="reject_once"))
            count = f" ({n}/{len(questions)})" if len(questions) > 1 else ""
            tool_call = _question_call(
                self.ask_call_id or f"ask-{n}", f"Question{count}: {asked}", asked
            )
            chosen = await self._chosen(tool_call, options, cancelled=DECLINE)
            index = _answer_index(chosen, len(question.options))
            log.info("question %d: %s", n, chosen)
            if index is None:
                return []
            answers.append(
                QuestionAnswer(question=question.question, answers=(question.options[index],))
            )
        return answers

    async def _chosen(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption], *, cancelled: str
    ) -> str:
        """The option the editor picked for ``tool_call``; ``cancelled`` when the
        request was cancelled (the turn stopped, the editor closed the prompt)."""
        response = await self.client.request_permission(
            session_id=self.session_id, tool_call=tool_call, options=options
        )
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else cancelled


def _question_call(call_id: str, title: str, text: str) -> ToolCallUpdate:
    """A pending "think" call that shows ``text``: what the plan approval and the
    ask tool's questions put before the editor's choice."""
    from acp.helpers import text_block, tool_content

    return ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind="think",
        status="pending",
        content=[tool_content(text_block(text))],
    )


def _answer_index(option_id: str, count: int) -> int | None:
    """The chosen answer's index, None for a decline or an option not offered."""
    if not option_id.startswith(ANSWER) or not option_id[len(ANSWER) :].isdigit():
        return None
    index = int(option_id[len(ANSWER) :])
    return index if index < count else None


def _json(arguments: dict[str, Any]) -> str:
    import json

    return json.dumps(arguments)
