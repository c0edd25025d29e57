"""The permission gate: turns a policy verdict into "run it or not" for one call.

``ALLOW`` runs, ``DENY`` returns a message for the model, ``ASK`` consults the
approver, one prompt at a time. Headless approvers are never called: the call
fails closed with a message saying how to allow it on the next run.

The policy is decided here only (again under the prompt lock, since a session
grant may have arrived meanwhile); a caller passes the diff preview as a thunk,
built only when an approver will actually be shown it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    current_requester,
)
from reasonix_core.permission.policy import Decision, Policy, Verdict
from reasonix_core.permission.rules import RuleError

__all__ = ["Authorization", "Gate", "PermissionGate", "Preview"]

# A preview text, or a function that builds it when it is needed.
Preview = str | Callable[[], str]


@dataclass(frozen=True, slots=True)
class Authorization:
    """The gate's answer for one call: the decision and whether it may run."""

    allowed: bool
    decision: Decision
    # Text returned to the model as the tool result when not allowed.
    message: str = ""
    # True when a human (or scripted approver) was asked for this call.
    asked: bool = False
    # Refused because the call was sure to fail (``precheck``): an error, not a denial.
    precondition_failed: bool = False


class Gate(Protocol):
    """What the agent needs from a gate: one decision per tool call."""

    async def authorize(
        self,
        *,
        tool: str,
        read_only: bool,
        args: Mapping[str, Any] | None,
        call_id: str,
        summary: str = "",
        preview: Preview = "",
        precheck: Callable[[], str] | None = None,
    ) -> Authorization: ...


class PermissionGate:
    """Authorise tool calls against a :class:`Policy`, asking ``approver`` on ASK."""

    def __init__(self, policy: Policy, approver: Approver | None) -> None:
        self.policy = policy
        self.approver = approver
        self._lock = anyio.Lock()

    async def authorize(
        self,
        *,
        tool: str,
        read_only: bool,
        args: Mapping[str, Any] | None,
        call_id: str,
        summary: str = "",
        preview: Preview = "",
        precheck: Callable[[], str] | None = None,
    ) -> Authorization:
        """``precheck``: why the call is sure to fail, or "" — asked only when a person
        would be asked, so that nobody approves a call the tool would then refuse."""
        args = dict(args) if isinstance(args, Mapping) else {}
        decision = self.policy.decide(tool, read_only, args)
        if decision.verdict is not Verdict.ASK:
            return self._settled(tool, decision)

        approver = self.approver
        if approver is None or not approver.interactive:
            return self._headless(tool, decision, self.policy.scope_for(tool, args))

        async with self._lock:
            # A session grant made while we waited may now cover this call.
            decision = self.policy.decide(tool, read_only, args)
            if decision.verdict is not Verdict.ASK:
                return self._settled(tool, decision)
            failure = precheck() if precheck is not None else ""
            if failure:
                return Authorization(
                    allowed=False,
                    decision=Decision(Verdict.DENY, None, "the call would fail"),
                    message=failure,
                    precondition_failed=True,
                )
            scopes = self.policy.scope_rules(tool, args)
            scope = " ".join(scopes)
            request = ApprovalRequest(
                tool=tool,
                arguments=args,
                call_id=call_id,
                read_only=read_only,
                scope=scope,
                summary=summary,
                preview=preview() if callable(preview) else preview,
                # A subagent's call says so (the runner marks the child's task).
                requester=current_requester.get(),
            )
            try:
                answer = await approver.decide(request)
            except Exception as exc:  # a broken approver must not run the call
                return Authorization(
                    allowed=False,
                    decision=Decision(Verdict.DENY, None, f"approval failed: {exc}"),
                    message=(
                        f"Permission for {tool} could not be obtained ({exc}). "
                        "The call was not executed."
                    ),
                    asked=True,
                )
            if answer is ApprovalDecision.ALLOW_ONCE:
                return Authorization(
                    allowed=True,
                    decision=Decision(Verdict.ALLOW, None, "allowed once by the user"),
                    asked=True,
                )
            if answer is ApprovalDecision.ALLOW_SESSION:
                for rule in scopes:
                    try:
                        self.policy.add_session_allow(rule)
                    except RuleError:
                        pass  # the call itself is still allowed once
                return Authorization(
                    allowed=True,
                    decision=Decision(
                        Verdict.ALLOW, scope, f"allowed for this session by the user: {scope}"
                    ),
                    asked=True,
                )
            return Authorization(
                allowed=False,
                decision=Decision(Verdict.DENY, None, "denied by the user"),
                message=(
                    f"The user denied this {tool} call; it was not executed. "
                    "Do not retry it unchanged; choose another approach or ask the user."
                ),
                asked=True,
            )

    @staticmethod
    def _settled(tool: str, decision: Decision) -> Authorization:
        if decision.verdict is Verdict.ALLOW:
            return Authorization(allowed=True, decision=decision)
        return Authorization(
            allowed=False,
            decision=decision,
            message=(
                f"Permission denied for {tool}: {decision.reason}. "
                "Do not retry this call; choose another approach or ask the user."
            ),
        )

    def _headless(self, tool: str, decision: Decision, scope: str) -> Authorization:
        if decision.hint is not None:
            why = decision.reason
            how = decision.hint
        elif decision.rule is None:
            why = f"permission mode {self.policy.mode}"
            how = f'--allowed-tools "{scope}" or -y/--auto'
        else:
            why = f"rule {decision.rule} requires approval"
            how = f'--allowed-tools "{scope}"'
        return Authorization(
            allowed=False,
            decision=decision,
            message=(
                f"No user is available to approve {tool} (headless run, {why}). "
                f"The call was not executed. Rerun with {how} to allow it."
            ),
        )
