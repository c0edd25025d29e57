"""The permission gate: turns a policy verdict into "run it or not" for one call.

``ALLOW`` runs, ``DENY`` returns a message for the model, ``ASK`` consults the
approver, one prompt at a time. Headless approvers are never called: the call
fails closed with a message saying how to allow it on the next run.

The policy is decided here only (again under the prompt lock, since a session
grant may have arrived meanwhile); a caller passes the diff preview as a thunk,
built only when an approver will actually be shown it.

``authorize_write_scope`` answers the second question a ``bash`` call with
``additional_write_dirs`` raises, after the command itself was authorised: may
these folders outside the write roots become writable for it? Folders the user
named before the session (:class:`WriteGrants`) or granted for this session
pass; any other folder is asked about in every preset (``auto`` and ``yolo``
widen what runs, never where it may write), and refused when nobody can answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio

from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    Refusal,
    current_requester,
)
from reasonix_core.permission.policy import PLAN_MODE_REFUSAL, Decision, Policy, Verdict
from reasonix_core.permission.rules import RuleError
from reasonix_core.permission.write_grants import WriteGrants

__all__ = ["Authorization", "Gate", "PermissionGate", "PermissionHooks", "Preview"]

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
    # What people are told of a refusal (``message`` tells the model what to do next);
    # "": the decision's reason says it.
    human: str = ""

    @property
    def summary(self) -> str:
        """The refusal in people's words, one line ("You denied it.")."""
        if self.human:
            return self.human
        reason = self.decision.reason
        if reason == PLAN_MODE_REFUSAL:
            return "Blocked: plan mode is on; changes wait for an approved plan."
        return reason[:1].upper() + reason[1:] + ("" if reason.endswith(".") else ".")


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
        hook: tuple[str, str] | None = None,
    ) -> Authorization: ...


T = TypeVar("T")


class PermissionHooks(Protocol):
    """The session's hooks, as the gate calls them (hooks/engine.py implements it)."""

    async def permission_request(self, request: ApprovalRequest) -> tuple[str, str] | None:
        """``("allow" | "deny", reason)`` from the PermissionRequest hooks, or None."""
        ...

    async def while_asking(self, message: str, kind: str, asking: Callable[[], Awaitable[T]]) -> T:
        """``asking()``'s answer, the Notification hooks running beside it."""
        ...


class PermissionGate:
    """Authorise tool calls against a :class:`Policy`, asking ``approver`` on ASK."""

    def __init__(
        self,
        policy: Policy,
        approver: Approver | None,
        write_grants: WriteGrants | None = None,
        hooks: PermissionHooks | None = None,
    ) -> None:
        self.policy = policy
        self.approver = approver
        self.write_grants = write_grants if write_grants is not None else WriteGrants()
        self.hooks = hooks
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
        hook: tuple[str, str] | None = None,
    ) -> Authorization:
        """``precheck``: why the call is sure to fail, or "" — asked only when a person
        would be asked, so that nobody approves a call the tool would then refuse.
        ``hook``: a PreToolUse hook's ``(permissionDecision, reason)`` (:meth:`_decide`,
        :meth:`_hook_allows`)."""
        args = dict(args) if isinstance(args, Mapping) else {}
        decision = self._decide(tool, read_only, args, hook)
        if decision.verdict is not Verdict.ASK:
            return self._settled(tool, decision)

        approver = self.approver
        if approver is None or not approver.interactive:
            return self._headless(tool, decision, self.policy.scope_for(tool, args))
        by_hook = self._hook_allows(decision, hook)
        if by_hook is not None:
            return Authorization(allowed=True, decision=by_hook)

        async with self._lock:
            # A session grant made while we waited may now cover this call.
            decision = self._decide(tool, read_only, args, hook)
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
            request = ApprovalRequest(
                tool=tool,
                arguments=args,
                call_id=call_id,
                read_only=read_only,
                scope=" ".join(scopes),
                summary=summary,
                preview=preview() if callable(preview) else preview,
                # A subagent's call says so (the runner marks the child's task).
                requester=current_requester.get(),
            )
            answered = await self._permission_hooks(request)
            if answered is not None:
                return answered
            return await self._ask(approver, request, scopes)

    def _decide(
        self, tool: str, read_only: bool, args: Mapping[str, Any], hook: tuple[str, str] | None
    ) -> Decision:
        """The policy's decision, tightened by a PreToolUse hook's "ask": an allowed
        call becomes a question (refused where nobody can answer). A hook tightens,
        never loosens (docs/HOOKS.md#a-hook-can-tighten-never-loosen)."""
        decision = self.policy.decide(tool, read_only, args)
        if hook is not None and hook[0] == "ask" and decision.verdict is Verdict.ALLOW:
            why = f": {hook[1]}" if hook[1] else ""
            return Decision(
                Verdict.ASK,
                None,
                f"a PreToolUse hook asks for approval{why}",
                hint="a PreToolUse hook that does not ask (no flag overrides a hook)",
            )
        return decision

    @staticmethod
    def _hook_allows(decision: Decision, hook: tuple[str, str] | None) -> Decision | None:
        """A PreToolUse "allow" skips a question a person would have been asked, for
        the main agent only; it never beats a deny rule (those are settled before)
        and is no approval on a fail-closed surface: headless (settled before) or a
        subagent's call (seed 000 §3.6)."""
        if hook is None or hook[0] != "allow" or current_requester.get() is not None:
            return None
        why = f": {hook[1]}" if hook[1] else ""
        return Decision(Verdict.ALLOW, None, f"allowed by a PreToolUse hook{why}")

    async def _permission_hooks(self, request: ApprovalRequest) -> Authorization | None:
        """What the PermissionRequest hooks answer before the user is asked; they
        may deny anywhere and allow only the main agent's calls."""
        hooks = self.hooks
        if hooks is None:
            return None
        answer = await hooks.permission_request(request)
        if answer is None:
            return None
        behaviour, reason = answer
        why = f": {reason}" if reason else ""
        if behaviour == "deny":
            return Authorization(
                allowed=False,
                decision=Decision(Verdict.DENY, None, f"denied by a PermissionRequest hook{why}"),
                message=(
                    f"Permission denied for {request.tool} by a PermissionRequest hook{why}. "
                    "Do not retry this call; choose another approach or ask the user."
                ),
            )
        if behaviour == "allow" and request.requester is None:
            return Authorization(
                allowed=True,
                decision=Decision(Verdict.ALLOW, None, f"allowed by a PermissionRequest hook{why}"),
            )
        return None

    async def _ask(
        self, approver: Approver, request: ApprovalRequest, scopes: Sequence[str]
    ) -> Authorization:
        """Ask ``approver`` about one call; "for this session" grants ``scopes``."""
        tool, scope = request.tool, request.scope
        try:
            answer = await self._decide_notified(approver, request)
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
        why = f" ({answer.message.strip()})" if isinstance(answer, Refusal) else ""
        return Authorization(
            allowed=False,
            decision=Decision(Verdict.DENY, None, "denied by the user"),
            message=(
                f"The user denied this {tool} call{why}; it was not executed. "
                "Do not retry it unchanged; choose another approach or ask the user."
            ),
            asked=True,
            human=f"You denied it{why}.",
        )

    async def authorize_write_scope(
        self, *, dirs: Sequence[Path], justification: str, command: str, call_id: str
    ) -> Authorization:
        """May ``bash`` write the physical folders ``dirs`` (outside its write roots,
        already judged grantable by the tool) for this one call?"""
        denied = self._write_denied_by_rule(dirs)
        if denied is not None:
            return denied
        grants = self.write_grants
        shown = ", ".join(str(d) for d in dirs)
        covered = Authorization(
            allowed=True, decision=Decision(Verdict.ALLOW, None, f"write access granted: {shown}")
        )
        missing = grants.uncovered(dirs)
        if not missing:
            return covered
        approver = self.approver
        if approver is None or not approver.interactive:
            return self._headless_write_scope(missing)
        async with self._lock:
            missing = grants.uncovered(dirs)  # a session grant may have arrived meanwhile
            if not missing:
                return covered
            listed = ", ".join(str(d) for d in missing)
            request = ApprovalRequest(
                tool="bash",
                arguments={"command": command},
                call_id=call_id,
                read_only=False,
                scope=listed,
                summary=f"Write outside the workspace: {listed}",
                write_dirs=tuple(str(d) for d in missing),
                justification=justification,
                requester=current_requester.get(),
            )
            return await self._ask_write_scope(approver, request, grants, missing)

    def _write_denied_by_rule(self, dirs: Sequence[Path]) -> Authorization | None:
        """A deny rule on writes there (``Edit(/srv/**)``) holds for bash's writes too."""
        for path in dirs:
            verdict = self.policy.decide("write_file", False, {"path": str(path)})
            if verdict.verdict is Verdict.DENY and verdict.rule is not None:
                return Authorization(
                    allowed=False,
                    decision=verdict,
                    message=(
                        f"Write access to {path} is denied by rule {verdict.rule}; the "
                        "command was not executed. Do not ask for this folder again."
                    ),
                )
        return None

    @staticmethod
    def _headless_write_scope(missing: Sequence[Path]) -> Authorization:
        flags = " ".join(f"--add-dir {d}" for d in missing)
        return Authorization(
            allowed=False,
            decision=Decision(Verdict.DENY, None, "write scope not granted (headless)"),
            message=(
                "No user is available to grant bash write access to "
                f"{', '.join(str(d) for d in missing)} (headless run); the command was "
                f"not executed. The user must rerun with {flags} or list the folder in "
                "[permissions] additional_directories of their config; do the work "
                "inside the workspace or report that the folder is needed."
            ),
        )

    async def _ask_write_scope(
        self,
        approver: Approver,
        request: ApprovalRequest,
        grants: WriteGrants,
        missing: Sequence[Path],
    ) -> Authorization:
        """Ask ``approver`` for write access to ``missing``; a broken approver denies."""
        listed = request.scope
        try:
            answer = await self._decide_notified(approver, request)
        except Exception as exc:  # a broken approver must not widen the sandbox
            answer, failure = ApprovalDecision.DENY, f"approval failed: {exc}"
        else:
            failure = answer.message.strip() if isinstance(answer, Refusal) else ""
        if answer is ApprovalDecision.ALLOW_SESSION:
            grants.grant_session(missing)
            return Authorization(
                allowed=True,
                decision=Decision(
                    Verdict.ALLOW, listed, f"write access granted for this session: {listed}"
                ),
                asked=True,
            )
        if answer is ApprovalDecision.ALLOW_ONCE:
            return Authorization(
                allowed=True,
                decision=Decision(Verdict.ALLOW, None, f"write access granted once: {listed}"),
                asked=True,
            )
        why = f" ({failure})" if failure else ""
        return Authorization(
            allowed=False,
            decision=Decision(Verdict.DENY, None, "write access denied by the user"),
            message=(
                f"The user denied bash write access to {listed}{why}; the command was not "
                "executed. Do not ask for these folders again; work inside the workspace "
                "or ask the user."
            ),
            asked=True,
            human=f"You denied write access to {listed}{why}; the command was not run.",
        )

    async def _decide_notified(
        self, approver: Approver, request: ApprovalRequest
    ) -> ApprovalDecision | Refusal:
        """Ask ``approver``, running the Notification hooks beside the question
        (a hook that hangs is killed at its timeout; the answer does not wait on it
        longer than that)."""
        if self.hooks is None:
            return await approver.decide(request)
        return await self.hooks.while_asking(
            f"Reasonix needs your permission to use {request.tool}",
            "permission_prompt",
            lambda: approver.decide(request),
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
