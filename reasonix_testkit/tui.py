"""Scripted services for TUI tests, snapshots and benchmarks (test kit, not installed).

A script is a list of turns; each turn is a list of steps replayed by
:class:`ScriptedRunner` when the user sends a prompt. A step is a core
:class:`~reasonix_core.events.Event` (emitted as is, ``seq`` renumbered),
:class:`Pause` (sleep), :class:`Hold` (block until the turn is cancelled, for
mid-stream snapshots), :class:`WaitFor` (a gate the test opens), :class:`Call` (a side effect, e.g. writing a file) or
:class:`Approval` (ask the approver, then replay ``allowed`` or ``denied``).
``TurnStarted`` / ``TurnFinished`` are added when the turn does not emit them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reasonix_core.efforts import EffortLevel
from reasonix_core.events import (
    Event,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)
from reasonix_core.messages import Message
from reasonix_core.permission.approver import ApprovalDecision, ApprovalRequest, Approver
from reasonix_core.permission_modes import MODE_CYCLE
from reasonix_tui.services import (
    BaseServices,
    GoalView,
    McpServerView,
    ModelProbe,
    ProviderChoice,
    RewindDone,
    RewindPreview,
    RewindTurn,
    SessionSummary,
)

FROZEN_NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


def preset_choices(home: Path) -> list[ProviderChoice]:
    """What the first-run setup screen lists over the built-in DeepSeek provider: the
    real preset table (key state from the environment: tests clear it)."""
    from reasonix_core.config.schema import Config
    from reasonix_tui.provider_choices import provider_choices

    config = Config()
    return provider_choices(config, config.providers[0], home)


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Hold:
    """Wait until the turn is cancelled (keeps the UI in its busy state)."""


@dataclass(frozen=True)
class WaitFor:
    """Wait until the test sets ``event`` (a gate for mid-turn assertions)."""

    event: asyncio.Event


@dataclass(frozen=True)
class Call:
    fn: Callable[[], Any]


@dataclass(frozen=True)
class Approval:
    request: ApprovalRequest
    allowed: Sequence[Step] = ()
    denied: Sequence[Step] = ()


@dataclass(frozen=True)
class PlanApproval:
    """Ask the approver's plan-approval boundary (the Coordinator's), then replay
    the branch of its verdict."""

    plan: str
    approved: Sequence[Step] = ()
    kept: Sequence[Step] = ()
    rejected: Sequence[Step] = ()


Step = Event | Pause | Hold | WaitFor | Call | Approval | PlanApproval


def text_steps(text: str, chunk: int = 12) -> list[Step]:
    return [TextDelta(text=text[i : i + chunk]) for i in range(0, len(text), chunk)]


def reasoning_steps(text: str, chunk: int = 16) -> list[Step]:
    return [ReasoningDelta(text=text[i : i + chunk]) for i in range(0, len(text), chunk)]


def tool_steps(
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    result: str,
    *,
    outcome: str = "ok",
    summary: str = "",
    for_model: bool = False,
) -> list[Step]:
    """A tool call and its result; ``summary`` / ``for_model`` as the core sends them
    (``ToolCallFinished``: what people see in place of the result)."""
    args = json.dumps(arguments)
    return [
        ToolCallStarted(call_id=call_id, name=name, arguments=args),
        ToolCallFinished(
            call_id=call_id,
            name=name,
            result=result,
            is_error=outcome == "error",
            outcome=outcome,
            summary=summary,
            for_model=for_model,
        ),
    ]


class ScriptedRunner:
    """A :class:`~reasonix_core.agent.runner.Runner` that replays scripted turns."""

    def __init__(
        self,
        services: ScriptedServices,
        approver: Approver,
        session_id: str,
        *,
        event_delay: float = 0.0,
    ) -> None:
        self._services = services
        self.approver = approver
        self._session_id = session_id
        self.event_delay = event_delay
        self.prompts: list[str] = []
        self.metas: list[Any] = []  # the TurnMeta of each turn (None: an ordinary one)
        self.decisions: list[ApprovalDecision] = []
        self.plan_verdicts: list[Any] = []
        self.allowed_scopes: set[str] = set()
        self.cancelled = 0
        self._seq = 0

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def model(self) -> str:
        return self._services.model

    @property
    def effort(self) -> str:
        return self._services.effort

    async def run(self, prompt: str, meta: Any = None) -> AsyncIterator[Event]:
        self.prompts.append(prompt)
        self.metas.append(meta)
        turn = self._services.next_turn(prompt)
        try:
            if not turn or not isinstance(turn[0], TurnStarted):
                yield self._number(TurnStarted(session_id=self._session_id, prompt=prompt))
            finished = False
            async for event in self._replay(turn):
                finished = finished or isinstance(event, TurnFinished | TurnFailed)
                yield event
            if not finished:
                yield self._number(TurnFinished(stop_reason="stop", steps=1))
        except asyncio.CancelledError:
            self.cancelled += 1
            raise

    async def _replay(self, steps: Sequence[Step]) -> AsyncIterator[Event]:
        for step in steps:
            if isinstance(step, Pause):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Hold):
                await asyncio.Event().wait()
            elif isinstance(step, WaitFor):
                await step.event.wait()
            elif isinstance(step, Call):
                step.fn()
            elif isinstance(step, Approval):
                branch = await self._approve(step)
                async for event in self._replay(branch):
                    yield event
            elif isinstance(step, PlanApproval):
                async for event in self._replay(await self._approve_plan(step)):
                    yield event
            else:
                if self.event_delay:
                    await asyncio.sleep(self.event_delay)
                yield self._number(step)

    async def _approve(self, step: Approval) -> Sequence[Step]:
        if step.request.scope and step.request.scope in self.allowed_scopes:
            return step.allowed
        decision = await self.approver.decide(step.request)
        self.decisions.append(decision)
        if decision is ApprovalDecision.ALLOW_SESSION and step.request.scope:
            self.allowed_scopes.add(step.request.scope)
        return step.denied if decision is ApprovalDecision.DENY else step.allowed

    async def _approve_plan(self, step: PlanApproval) -> Sequence[Step]:
        from reasonix_core.coordinator.plans import PlanVerdict, SavedPlan

        saved = SavedPlan(id="plan-1", route="plan_for_approval", plan=step.plan, request="")
        verdict = await self.approver.approve_plan(saved)  # type: ignore[attr-defined]
        self.plan_verdicts.append(verdict)
        if verdict is PlanVerdict.APPROVE:
            return step.approved
        return step.kept if verdict is PlanVerdict.KEEP else step.rejected

    def _number(self, event: Event) -> Event:
        self._seq += 1
        return dataclasses.replace(event, seq=self._seq)

    # -- the session's commands (SessionHandle), answered from the services' script --

    def saved_messages(self) -> Sequence[Message]:
        return list(self._services.saved.get(self._session_id, ()))

    def budget_left(self) -> str:
        return self._services.budget

    async def goal(self, action: str, objective: str = "") -> GoalView | None:
        return self._services.goal_view

    async def drive_goal(self, objective: str = "") -> AsyncIterator[Event]:
        raise ValueError("goals are not available in this session")
        yield  # an async generator, as the real one

    async def pending_plan(self) -> Any:
        return None

    async def execute_plan(self) -> AsyncIterator[Event]:
        raise ValueError("no plan is waiting for approval in this session")
        yield  # an async generator, as the real one

    async def reject_plan(self) -> None:
        return None

    def cache_report(self) -> Any:
        return self._services.report

    def rebill_preview(self, change: str, target: str = "") -> Any:
        self._services.previews.append((change, target))
        return self._services.preview

    def idle_preview(self) -> Any:
        return self._services.idle

    async def nothing_to_compact(self) -> str:
        return self._services.nothing_to_compact

    async def compact(self, focus: str = "") -> AsyncIterator[Event]:
        self._services.compactions += 1
        self._services.compaction_focus.append(focus)
        yield Notice(text="Nothing to compact yet.")

    def rewind_turns(self) -> list[RewindTurn]:
        return list(self._services.rewind_history)

    def rewind_preview(self, turn: int) -> RewindPreview:
        previews = self._services.rewind_previews
        return previews.get(turn, RewindPreview(diff="", note="no file changes"))

    async def open(self) -> None:
        pass

    def rewind(self, turn: int, scope: str, force: bool = False) -> RewindDone:
        self._services.rewinds.append((turn, scope))
        return RewindDone(message=f"rewound {scope} to turn {turn}")


@dataclass
class ScriptedServices(BaseServices):
    """An :class:`~reasonix_tui.services.AppServices` driven by a script."""

    turns: list[list[Step]] = field(default_factory=list)
    workspace: Path = Path("/home/user/demo-project")
    config_home: Path = Path("/nonexistent/.reasonix")
    context_window: int = 128_000
    permission_mode: str = "ask"
    permission_modes: Sequence[str] = MODE_CYCLE
    model: str = "deepseek-flash"
    effort: str = "high"
    model_names: list[str] = field(default_factory=lambda: ["deepseek-flash", "deepseek-v4-pro"])
    effort_levels: list[str] = field(default_factory=lambda: ["low", "medium", "high", "max"])
    # What /effort's picker lists (default: each of effort_levels, no aliases).
    effort_menu: list[EffortLevel] | None = None
    sessions: list[SessionSummary] = field(default_factory=list)
    servers: list[McpServerView] = field(default_factory=list)
    api_key_missing: bool = False
    event_delay: float = 0.0
    now: datetime = FROZEN_NOW
    saved_keys: list[str] = field(default_factory=list)
    runners: list[ScriptedRunner] = field(default_factory=list)
    reconnected: list[str] = field(default_factory=list)
    compactions: int = 0
    compaction_focus: list[str] = field(default_factory=list)
    nothing_to_compact: str = ""  # /compact's line when it would change nothing
    # Saved transcripts by session id (drawn on resume), and the session the first
    # runner reopens, as ``reasonix -c`` does.
    saved: dict[str, list[Message]] = field(default_factory=dict)
    prompt_history_path: Path | None = None
    notify_after: float | None = None
    continue_session: str | None = None
    # A reasonix_core.skills.SkillCatalog for /<skill> tests; None: no skills.
    skills: Any = None
    budget: str = ""  # what budget_left reports (the task budget's remainder)
    goal_view: GoalView | None = None  # what /goal status reports
    # The prompt cache: /cache's account, what a change would re-bill, an idle miss.
    report: Any = None
    preview: Any = None
    idle: Any = None
    previews: list[tuple[str, str]] = field(default_factory=list)
    # /rewind: the turns shown, the previews by turn, and the rewinds asked for.
    rewind_history: list[RewindTurn] = field(default_factory=list)
    rewind_previews: dict[int, RewindPreview] = field(default_factory=dict)
    rewinds: list[tuple[int, str]] = field(default_factory=list)
    # The first-run setup screen: the providers offered, the choices made
    # (key, api_key), and the reason a choice is refused (by key).
    choices: list[ProviderChoice] = field(default_factory=list)
    providers_used: list[tuple[str, str | None]] = field(default_factory=list)
    provider_errors: dict[str, str] = field(default_factory=dict)
    # /model's probe of the provider's /models: its answer (None: nothing to ask),
    # and a gate it waits for first (a test opens it once the picker is up).
    probe: ModelProbe | None = None
    probe_gate: asyncio.Event | None = None
    # Models with no known price (their cost shows as unknown).
    unpriced_models: set[str] = field(default_factory=set)

    def clock(self) -> datetime:
        return self.now

    def next_turn(self, prompt: str) -> list[Step]:
        if self.turns:
            return self.turns.pop(0)
        return text_steps(f"(no scripted reply for: {prompt})")

    def new_runner(self, approver: Approver) -> ScriptedRunner:
        session_id, self.continue_session = self.continue_session, None
        runner = ScriptedRunner(
            self,
            approver,
            session_id or f"s{len(self.runners) + 1:04d}",
            event_delay=self.event_delay,
        )
        self.runners.append(runner)
        return runner

    def resume_runner(self, session_id: str, approver: Approver) -> ScriptedRunner:
        if not any(s.session_id == session_id for s in self.sessions):
            raise KeyError(session_id)
        runner = ScriptedRunner(self, approver, session_id, event_delay=self.event_delay)
        self.runners.append(runner)
        return runner

    def list_sessions(self) -> list[SessionSummary]:
        return list(self.sessions)

    def models(self) -> list[str]:
        return list(self.model_names)

    def priced(self, model: str) -> bool:
        return model not in self.unpriced_models

    async def probe_models(self) -> ModelProbe | None:
        if self.probe_gate is not None:
            await self.probe_gate.wait()
        return self.probe

    def set_model(self, model: str) -> None:
        discovered = self.probe.models if self.probe is not None else ()
        if model not in self.model_names and model not in discovered:
            raise ValueError(f"unknown model {model!r}")
        self.model = model

    def efforts(self) -> list[str]:
        return list(self.effort_levels)

    def effort_choices(self) -> list[EffortLevel]:
        if self.effort_menu is not None:
            return list(self.effort_menu)
        return [EffortLevel(level) for level in self.effort_levels]

    def set_effort(self, effort: str) -> None:
        if effort not in self.effort_levels:
            raise ValueError(f"effort must be one of {', '.join(self.effort_levels)}")
        self.effort = effort

    def needs_api_key(self) -> bool:
        return self.api_key_missing

    def save_api_key(self, key: str) -> None:
        self.saved_keys.append(key)
        self.api_key_missing = False

    def provider_choices(self) -> list[ProviderChoice]:
        return list(self.choices)

    async def use_provider(self, key: str, api_key: str | None) -> None:
        if key in self.provider_errors:
            raise ValueError(self.provider_errors[key])
        self.providers_used.append((key, api_key))

    async def use_endpoint(self, base_url: str, api_key: str | None) -> None:
        from reasonix_core.provider.presets import custom_preset

        custom_preset(base_url, needs_key=bool(api_key))  # the core's checks
        self.providers_used.append((base_url, api_key))
        self.api_key_missing = False

    def mcp_status(self) -> list[McpServerView]:
        return list(self.servers)

    def reconnect_mcp(self, name: str) -> None:
        self.reconnected.append(name)
