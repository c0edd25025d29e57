"""The session's hooks: which match an event, running them, and what they said.

One :class:`Hooks` per session (built in ``session/build.py``, shared with its
subagents through ``SessionEnv.hooks``). :meth:`Hooks.fire` runs every hook
configured for an event whose matcher takes the subject (a tool's name in either
spelling, a SessionStart source, a PreCompact trigger), all at once in one task
group, each bounded by its timeout, and combines their answers
(:mod:`reasonix_core.hooks.outcome`). A failing or hanging hook never fails the
session: it becomes a warning.

Each run is reported as an :class:`~reasonix_core.events.HookRan` event's fields,
queued until a phase with an event sink sends them (:meth:`take_reports`), and
counted (``runs``, ``blocks``) for ``/hooks`` and the metrics.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from reasonix_core.hooks.names import hook_tool
from reasonix_core.hooks.outcome import HookOutcome, HookResult, combine, interpret
from reasonix_core.hooks.runner import HookRun, hook_env, run_hook
from reasonix_core.hooks.spec import HookSpec

if TYPE_CHECKING:
    from reasonix_core.permission.approver import ApprovalRequest

__all__ = ["HookReport", "Hooks"]

_SHOWN_COMMAND = 60


T = TypeVar("T")

@dataclass(frozen=True, slots=True)
class HookReport:
    """One run, for the event stream (``events.HookRan``'s fields)."""

    hook_event: str
    command: str
    source: str
    outcome: str
    exit_code: int | None
    message: str

    def fields(self) -> dict[str, Any]:
        return {
            "hook_event": self.hook_event,
            "command": self.command,
            "source": self.source,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "message": self.message,
        }


class Hooks:
    """The configured hooks of one session and what they ran."""

    def __init__(
        self,
        hooks: Sequence[HookSpec],
        *,
        workspace: Path,
        secret_env: frozenset[str] = frozenset(),
        session_id: str = "",
        transcript_path: Path | None = None,
        permission_mode: Callable[[], str] = lambda: "default",
    ) -> None:
        self._hooks = tuple(hooks)
        self.workspace = workspace
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.permission_mode = permission_mode
        self._env = hook_env(workspace, secret_env)
        self._reports: list[HookReport] = []
        self._context: list[str] = []
        self.runs = 0
        self.blocks = 0
        # Why the session ends, as SessionEnd is told (session/hook_turns.py owns the
        # reasons); a surface changes it until the session closes.
        self.end_reason = "other"

    @property
    def configured(self) -> tuple[HookSpec, ...]:
        return self._hooks

    def has(self, event: str) -> bool:
        return any(h.event == event for h in self._hooks)

    def matching(self, event: str, subject: Sequence[str] = ()) -> list[HookSpec]:
        """The hooks of ``event`` whose matcher takes ``subject`` (a tool's spellings;
        empty: events without a subject, where every hook of the event runs)."""
        hooks = [h for h in self._hooks if h.event == event]
        if not subject:
            return hooks
        return [h for h in hooks if h.matches(subject)]

    async def fire(
        self,
        event: str,
        fields: Mapping[str, Any] | None = None,
        *,
        subject: Sequence[str] = (),
        session_id: str | None = None,
    ) -> HookOutcome:
        """Run the matching hooks of ``event`` with Claude Code's input on stdin."""
        hooks = self.matching(event, subject)
        if not hooks:
            return HookOutcome()
        payload = {
            "session_id": session_id if session_id is not None else self.session_id,
            "transcript_path": str(self.transcript_path or ""),
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "permission_mode": self.permission_mode(),
            **(fields or {}),
        }
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", "replace")
        runs: list[HookRun | None] = [None] * len(hooks)

        async def one(index: int, spec: HookSpec) -> None:
            runs[index] = await run_hook(spec, data, self._env, self.workspace)

        async with anyio.create_task_group() as tg:
            for i, spec in enumerate(hooks):
                tg.start_soon(one, i, spec)
        results = [interpret(r, event) for r in runs if r is not None]
        outcome = combine(results)
        self._note(event, results)
        return outcome

    def _note(self, event: str, results: Sequence[HookResult]) -> None:
        for r in results:
            self.runs += 1
            outcome = r.outcome
            if outcome == "blocked":
                self.blocks += 1
            command = r.run.spec.command.replace("\n", " ")
            if len(command) > _SHOWN_COMMAND:
                command = command[: _SHOWN_COMMAND - 1] + "…"
            message = r.warning or r.system_message.strip()[:500]
            if not message and r.updated_input is not None:
                message = "changed the tool's input (updatedInput)"
            if not message and outcome == "blocked":
                message = (r.reason or r.stop_reason or r.permission_reason)[:500]
            self._reports.append(
                HookReport(event, command, r.run.spec.source, outcome, r.run.exit_code, message)
            )

    def take_reports(self) -> list[HookReport]:
        """The runs not yet sent as events (each is taken once)."""
        reports, self._reports = self._reports, []
        return reports

    # -- the permission gate's (permission/gate.py PermissionHooks) -------------

    def tool_fields(self, tool: str, args: Mapping[str, Any], call_id: str = "") -> dict[str, Any]:
        """A tool call as Claude Code's hooks read it."""
        name, tool_input, _ = hook_tool(tool, args)
        fields: dict[str, Any] = {"tool_name": name, "tool_input": tool_input}
        if call_id:
            fields["tool_use_id"] = call_id
        return fields

    async def permission_request(self, request: ApprovalRequest) -> tuple[str, str] | None:
        if not self.has("PermissionRequest"):
            return None
        outcome = await self.fire(
            "PermissionRequest",
            self.tool_fields(request.tool, request.arguments, request.call_id),
            subject=hook_tool(request.tool, request.arguments)[2],
        )
        if outcome.blocked:
            return "deny", outcome.reason
        if outcome.permission in ("allow", "deny"):
            return outcome.permission, outcome.permission_reason
        return None

    async def notify(self, message: str, kind: str = "permission_prompt") -> None:
        if self.has("Notification"):
            await self.fire(
                "Notification", {"message": message, "notification_type": kind}, subject=(kind,)
            )

    async def while_asking(self, message: str, kind: str, asking: Callable[[], Awaitable[T]]) -> T:
        """``asking()``'s answer, with the Notification hooks running beside it (the
        user's input is needed; a hook that hangs is killed at its timeout, so the
        answer never waits on it longer than that). What ``asking`` raises is raised."""
        if not self.has("Notification"):
            return await asking()
        answer: list[T] = []
        failure: list[Exception] = []

        async def ask() -> None:
            try:
                answer.append(await asking())
            except Exception as exc:  # raised below, as the asker raised it
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(self.notify, message, kind)
            tg.start_soon(ask)
        if failure:
            raise failure[0]
        return answer[0]

    # -- context for the next user turn ----------------------------------------

    def add_context(self, text: str) -> None:
        """Hook output for the model, carried in the next user turn."""
        if text.strip():
            self._context.append(text.strip())

    def take_context(self) -> str:
        """The pending hook context as one block ("" when none); taken once."""
        if not self._context:
            return ""
        body = "\n\n".join(self._context)
        self._context = []
        return f"<hook-context>\n{body}\n</hook-context>"
