"""The session's :class:`Approver` as claude-agent-sdk's ``can_use_tool``.

With ``--permission-prompt-tool stdio`` (what the SDK passes when the program
gives a ``can_use_tool`` callback) a call the policy says to ask about becomes a
``can_use_tool`` control request: the program's ``PermissionResultAllow`` runs
the call, its ``PermissionResultDeny`` refuses it and its message reaches the
model (``interrupt=True`` also ends the turn). Without it nobody is asked: the
call fails closed, as in every headless run.

``updated_permissions`` an allow carries are applied to this session only
(``addRules`` and ``setMode``; Reasonix writes no program's settings files). An
allow that changes the call's input is refused: the gate runs calls as the
model sent them. Questions (``ask``) go unanswered, as over ACP.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Question,
    QuestionAnswer,
    Refusal,
)
from reasonix_core.permission.rules import RuleError, parse_rule, split_rules
from reasonix_core.permission_modes import CLAUDE_MODES, MODE_CHOICES, PLAN_MODE
from reasonix_core.stream_session.control import ControlChannel

if TYPE_CHECKING:
    from reasonix_core.coordinator.plans import PlanVerdict, SavedPlan
    from reasonix_core.session.core import Session

log = logging.getLogger(__name__)

#: The tool name a plan's approval is asked under (the call that presents it).
PLAN_TOOL = "exit_plan_mode"


class ProgramApprover:
    def __init__(
        self, channel: ControlChannel, *, ask: bool, warn: Callable[[str], None]
    ) -> None:
        self.channel = channel
        # Only a program that passed --permission-prompt-tool stdio answers.
        self.interactive = ask
        self.warn = warn
        # Known once the session is built (the approver is given to the build).
        self.session: Session | None = None
        # Called when a denial asks to end the turn (interrupt=True).
        self.interrupt: Callable[[], None] = lambda: None

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision | Refusal:
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": request.tool,
            "input": request.arguments,
            "permission_suggestions": _suggestions(request.scope)
            if not request.write_dirs
            else [],
            "blocked_path": request.write_dirs[0] if request.write_dirs else None,
            "tool_use_id": request.call_id,
        }
        if request.summary:
            body["title"] = request.summary
        if request.justification:
            body["description"] = request.justification
        if request.requester is not None:
            body["agent_id"] = "/".join(request.requester.agent_path)
        answer = await self.channel.request(body)
        behavior = answer.get("behavior")
        if behavior == "allow":
            changed = answer.get("updatedInput")
            if changed is not None and changed != request.arguments:
                return Refusal(
                    "the program's can_use_tool changed the call's input, which Reasonix "
                    "does not run; send the call again as wanted"
                )
            self._apply(answer.get("updatedPermissions"))
            return ApprovalDecision.ALLOW_ONCE
        if behavior == "deny":
            if answer.get("interrupt") is True:
                self.interrupt()
            message = answer.get("message")
            return Refusal(message if isinstance(message, str) and message.strip() else "denied")
        raise ValueError(f"can_use_tool answer without behavior allow or deny: {behavior!r}")

    async def approve_plan(self, saved: SavedPlan) -> PlanVerdict:
        """Plan mode's plan, asked as a ``can_use_tool`` on :data:`PLAN_TOOL`: allow
        approves it, deny keeps planning (deny with interrupt rejects it)."""
        from reasonix_core.coordinator.plans import PlanVerdict

        body = {
            "subtype": "can_use_tool",
            "tool_name": PLAN_TOOL,
            "input": {"plan": saved.plan},
            "permission_suggestions": [],
            "blocked_path": None,
            "tool_use_id": f"plan-{saved.id}",
            "title": "Approve the plan",
        }
        try:
            answer = await self.channel.request(body)
        except Exception as exc:
            self.warn(f"the plan's approval could not be asked ({exc}); it waits in the session")
            return PlanVerdict.KEEP
        if answer.get("behavior") == "allow":
            return PlanVerdict.APPROVE
        return PlanVerdict.REJECT if answer.get("interrupt") is True else PlanVerdict.KEEP

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        return None  # the SDK has no multiple-choice question: nobody can answer

    def _apply(self, updates: object) -> None:
        """An allow's ``updatedPermissions``, for this session."""
        if not isinstance(updates, list) or self.session is None:
            return
        policy = self.session.policy
        for update in updates:
            kind = update.get("type") if isinstance(update, dict) else None
            if kind == "addRules" and isinstance(update, dict):
                for text in _rule_texts(update.get("rules")):
                    try:
                        rule = parse_rule(text)
                    except RuleError as exc:
                        self.warn(f"can_use_tool's rule {text!r} was not applied: {exc}")
                        continue
                    behavior = update.get("behavior")
                    if behavior == "allow":
                        policy.add_session_allow(rule)
                    elif behavior == "deny":
                        policy.deny.append(rule)
                    elif behavior == "ask":
                        policy.ask.append(rule)
            elif kind == "setMode" and isinstance(update, dict):
                mode = CLAUDE_MODES.get(str(update.get("mode")), str(update.get("mode")))
                if mode not in MODE_CHOICES:
                    self.warn(f"can_use_tool's mode {update.get('mode')!r} was not applied")
                elif mode == PLAN_MODE:
                    self.session.set_mode(policy.preset, plan=True)
                else:
                    self.session.set_mode(mode, plan=False)
            else:
                self.warn(f"can_use_tool's permission update {kind!r} is not supported; ignored")


def _suggestions(scope: str) -> list[dict[str, Any]]:
    """The gate's "for this session" rules as Claude Code's ``addRules`` update
    (a program may return them as ``updated_permissions``)."""
    rules: list[dict[str, Any]] = []
    for text in split_rules(scope):
        tool, paren, rest = text.partition("(")
        if "=" in tool:
            continue  # a literal rule has no Claude Code spelling
        rule: dict[str, Any] = {"toolName": tool}
        if paren and rest.endswith(")"):
            rule["ruleContent"] = rest[:-1]
        rules.append(rule)
    if not rules:
        return []
    return [{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}]


def _rule_texts(rules: object) -> list[str]:
    out: list[str] = []
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict) or not isinstance(rule.get("toolName"), str):
            continue
        content = rule.get("ruleContent")
        out.append(f"{rule['toolName']}({content})" if content else rule["toolName"])
    return out
