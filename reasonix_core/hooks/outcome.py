"""What a hook's exit code and output mean, in Claude Code's contract.

* exit 0: go on. Plain stdout of ``SessionStart`` and ``UserPromptSubmit`` is
  context for the model (in the user turn); stdout that is a JSON object is read
  for the fields below instead.
* exit 2: block. stderr is the reason (the model's tool result for
  ``PreToolUse``, what the user sees for ``UserPromptSubmit``, why the model must go
  on for ``Stop`` / ``SubagentStop``).
* anything else (or a timeout, or a hook that cannot start): a warning to the
  user, and the run goes on.

JSON fields: ``decision`` (``block`` / ``approve``) with ``reason``; ``continue``
(false: stop) with ``stopReason``; ``suppressOutput``; ``systemMessage`` (shown to
the user); ``hookSpecificOutput`` with ``permissionDecision`` (allow / deny / ask),
``permissionDecisionReason``, ``additionalContext``, ``updatedInput`` (PreToolUse:
the input to run instead), and for ``PermissionRequest``
``decision.behavior`` (allow / deny) with ``message``.

Several hooks on one event combine to the most restrictive answer: any block
blocks, deny beats ask beats allow; hooks that rewrite one input differently block it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reasonix_core.hooks.runner import HookRun

__all__ = ["CONTEXT_LIMIT", "HookOutcome", "HookResult", "combine", "interpret"]

Permission = Literal["allow", "deny", "ask"]
_RANK: dict[str, int] = {"allow": 1, "ask": 2, "deny": 3}
#: Characters of context all hooks of one event may add to a user turn.
CONTEXT_LIMIT = 10_000
_CONFLICT = "PreToolUse hooks answered different updatedInput; the call is refused"
#: Events whose plain stdout (exit 0) is context for the model.
_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})


@dataclass(frozen=True, slots=True)
class HookResult:
    """One run, interpreted."""

    run: HookRun
    blocked: bool = False
    reason: str = ""
    context: str = ""
    permission: Permission | None = None
    permission_reason: str = ""
    stop: bool = False
    stop_reason: str = ""
    system_message: str = ""
    warning: str = ""
    # PreToolUse's hookSpecificOutput.updatedInput (Claude Code's keys), or None.
    updated_input: dict[str, Any] | None = None

    @property
    def outcome(self) -> str:
        if self.run.timed_out:
            return "timeout"
        if self.run.error or self.warning:
            return "error"
        if self.blocked or self.permission == "deny" or self.stop:
            return "blocked"
        return "ok"


def interpret(run: HookRun, event: str) -> HookResult:
    """Read one run's exit code and output."""
    name = run.spec.command if len(run.spec.command) <= 60 else run.spec.command[:59] + "…"
    if run.error:
        return HookResult(run, warning=f"{event} hook `{name}` {run.error}")
    if run.timed_out:
        return HookResult(
            run, warning=f"{event} hook `{name}` timed out after {run.spec.timeout:g} s; killed"
        )
    stderr = run.stderr.strip()
    if run.exit_code == 2:
        return HookResult(run, blocked=True, reason=stderr or f"blocked by {event} hook `{name}`")
    if run.exit_code != 0:
        detail = f": {stderr.splitlines()[-1][:200]}" if stderr else ""
        return HookResult(
            run, warning=f"{event} hook `{name}` failed (exit {run.exit_code}){detail}"
        )
    data = _json_object(run.stdout)
    if data is None:
        context = run.stdout.strip() if event in _CONTEXT_EVENTS else ""
        return HookResult(run, context=context)
    return _from_json(run, event, data)


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None  # type: ignore[return-value]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _from_json(run: HookRun, event: str, data: dict[str, Any]) -> HookResult:
    specific_raw = data.get("hookSpecificOutput")
    specific: dict[str, Any] = specific_raw if isinstance(specific_raw, dict) else {}  # type: ignore[assignment]
    decision = data.get("decision")
    reason = _text(data.get("reason"))
    permission: Permission | None = None
    permission_reason = ""
    wanted = specific.get("permissionDecision")
    if wanted in _RANK:
        permission = wanted
        permission_reason = _text(specific.get("permissionDecisionReason"))
    behaviour = specific.get("decision")
    if isinstance(behaviour, dict) and behaviour.get("behavior") in ("allow", "deny"):  # type: ignore[union-attr]
        permission = behaviour["behavior"]  # type: ignore[index]
        permission_reason = _text(behaviour.get("message"))  # type: ignore[union-attr]
    if decision == "approve" and permission is None:  # Claude Code's older PreToolUse spelling
        permission = "allow"
        permission_reason = reason
    blocked = decision == "block"
    if permission == "deny" and event == "PreToolUse":
        blocked = True
        reason = permission_reason or reason or "denied by a PreToolUse hook"
    stop = data.get("continue") is False
    updated = specific.get("updatedInput")
    return HookResult(
        run,
        blocked=blocked,
        reason=reason or ("blocked by a hook" if blocked else ""),
        context=_text(specific.get("additionalContext")).strip(),
        permission=permission,
        permission_reason=permission_reason,
        stop=stop,
        stop_reason=_text(data.get("stopReason")),
        system_message=_text(data.get("systemMessage")),
        updated_input=updated if event == "PreToolUse" and isinstance(updated, dict) else None,  # type: ignore[arg-type]
    )


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """Every matching hook of one event, combined."""

    results: tuple[HookResult, ...] = ()
    blocked: bool = False
    reason: str = ""
    context: str = ""
    permission: Permission | None = None
    permission_reason: str = ""
    stop: bool = False
    stop_reason: str = ""
    # What the user is told (warnings, systemMessages), one line each.
    messages: tuple[str, ...] = field(default_factory=tuple[str, ...])
    # The tool input the PreToolUse hooks want run instead (Claude Code's keys).
    updated_input: dict[str, Any] | None = None

    @property
    def ran(self) -> bool:
        return bool(self.results)


def combine(results: Sequence[HookResult]) -> HookOutcome:
    """The most restrictive answer of ``results``; context and reasons joined."""
    if not results:
        return HookOutcome()
    permission: Permission | None = None
    permission_reason = ""
    for r in results:
        if r.permission is not None and (
            permission is None or _RANK[r.permission] > _RANK[permission]
        ):
            permission, permission_reason = r.permission, r.permission_reason
    context = "\n\n".join(r.context for r in results if r.context)
    if len(context) > CONTEXT_LIMIT:
        context = context[:CONTEXT_LIMIT] + "\n[hook output truncated]"
    messages = [r.warning for r in results if r.warning]
    messages += [r.system_message.strip()[:500] for r in results if r.system_message.strip()]
    blocked = any(r.blocked for r in results)
    reason = "\n".join(r.reason for r in results if r.blocked and r.reason)
    updates = [r.updated_input for r in results if r.updated_input is not None]
    updated = updates[0] if updates else None
    if any(u != updated for u in updates):  # no hook's rewrite silently wins another's
        blocked, updated = True, None
        reason = "\n".join(filter(None, [reason, _CONFLICT]))
    return HookOutcome(
        results=tuple(results),
        blocked=blocked,
        reason=reason[:CONTEXT_LIMIT],
        context=context,
        permission=permission,
        permission_reason=permission_reason,
        stop=any(r.stop for r in results),
        stop_reason="\n".join(r.stop_reason for r in results if r.stop and r.stop_reason),
        messages=tuple(messages),
        updated_input=updated,
    )
