"""The built session (:class:`Session`): what every surface holds and drives.

Built whole by :func:`reasonix_core.session.build.build_session` (start: a new
session; continue / resume: ``RunSettings.continue_last`` / ``resume_id``; fork:
:meth:`Session.rewind` with the ``fork`` scope, then resume the fork). Nothing in
it is set afterwards. Every member is typed: the heavier modules (the MCP host,
the coordinator, the checkpoint recorder) are named for the type checker only, so
holding a session imports none of them.

The methods are the one interface every surface drives - the TUI, ``reasonix
run``, an editor over ACP, the browser: a turn (:meth:`prompt`) is an async
stream of events; cancelling the task that consumes it cancels the turn and
leaves the transcript valid; permission questions go to the surface's
:class:`~reasonix_core.permission.approver.Approver`, given at the start.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from reasonix_core import events as ev
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.runner import Runner
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.config import Config, ResolvedModel
from reasonix_core.errors import ConfigError
from reasonix_core.permission.policy import Policy
from reasonix_core.skills import SkillCatalog

if TYPE_CHECKING:
    from reasonix_core.checkpoint.recorder import Checkpointer
    from reasonix_core.checkpoint.rewind import TurnSummary
    from reasonix_core.command.expander import Expanded
    from reasonix_core.coordinator.coordinator import Coordinator
    from reasonix_core.coordinator.plan_mode import PlanMode
    from reasonix_core.coordinator.plans import SavedPlan
    from reasonix_core.goal.driver import GoalDriver
    from reasonix_core.goal.state import Goal, GoalBook
    from reasonix_core.hooks.engine import Hooks
    from reasonix_core.mcp.host import McpHost
    from reasonix_core.session.hook_turns import SessionEndReason
    from reasonix_core.session.rewind import RewindPreview, Rewound


@dataclass(frozen=True, kw_only=True)
class Session:
    """A built session: the agent, what it was built from, and its modes."""

    agent: Agent
    config: Config
    resolved: ResolvedModel
    home: Path
    policy: Policy
    workspace: Path
    # The session's plan mode (docs/MODES.md#plan-mode).
    plan_mode: PlanMode
    # The session's goal (goal/state.py): in its records; armed only when told.
    goals: GoalBook
    # The MCP host, or None when no server is declared.
    mcp: McpHost | None = None
    # The session's skills (docs/SKILLS.md): run_skill and ``/<skill>`` read them.
    skills: SkillCatalog = field(default_factory=SkillCatalog)
    # The planner + executor Coordinator when [agent] planner_model is set.
    coordinator: Coordinator | None = None
    # The workspace snapshots around the agent's turns (docs/REWIND.md); None when
    # [checkpoints] enabled = false.
    checkpoints: Checkpointer | None = None
    # What the start has to tell the user once: retired settings read and ignored or
    # removed (config/retired.py), an instruction import refused or a file cut at its
    # cap (agent/instructions.py); every surface shows them before the first turn.
    notices: tuple[str, ...] = ()
    # The configured hooks (docs/HOOKS.md); None when none applies.
    hooks: Hooks | None = None

    @property
    def runner(self) -> Runner:
        """What a surface drives: the Coordinator, else the agent."""
        return self.coordinator if self.coordinator is not None else self.agent

    # -- identity ------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    @property
    def model(self) -> str:
        return self.agent.model

    @property
    def effort(self) -> str:
        return self.agent.effort

    # -- turns -----------------------------------------------------------------

    def prompt(self, text: str, meta: TurnMeta | None = None) -> AsyncGenerator[ev.Event, None]:
        """One user turn, as events; it ends with TurnFinished or TurnFailed unless
        cancelled (cancel the consuming task: the transcript stays valid).
        With hooks, UserPromptSubmit runs before it (unless ``meta`` says it is
        host-made) and Stop after it (session/hook_turns.py)."""
        if self.hooks is None:
            return self.runner.run(text, meta)
        from reasonix_core.session.hook_turns import hooked_turn

        return hooked_turn(self.hooks, self.runner, self.agent, text, meta)

    def ending(self, reason: SessionEndReason) -> None:
        """Why the session will end, as its SessionEnd hooks are told when it closes
        (one of session/hook_turns.py SESSION_END_REASONS; ValueError otherwise)."""
        from reasonix_core.session.hook_turns import end_reason

        checked = end_reason(reason)
        if self.hooks is not None:
            self.hooks.end_reason = checked

    async def expand(self, text: str) -> Expanded:
        """``/command args``, ``@path`` and ``@server:uri`` in ``text``, expanded."""
        from reasonix_core.session.expand import ExpansionSources, expand_prompt

        sources = ExpansionSources(
            workspace=self.workspace, home=self.home, skills=self.skills, mcp=self.mcp,
            policy=self.policy,
        )  # fmt: skip
        return await expand_prompt(sources, text)

    def compact(self, focus: str = "") -> AsyncGenerator[ev.Event, None]:
        """Prune and fold the history now; the next request starts from the checkpoint."""
        # An async generator (Agent.compact), closed at once when its consumer stops.
        return cast("AsyncGenerator[ev.Event, None]", self.agent.compact(focus))

    def nothing_to_compact(self) -> str:
        """The one line ``/compact`` gives instead of compacting (and instead of
        offering to break the prompt cache) when it would change nothing, else ""."""
        return self.agent.nothing_to_compact()

    # -- modes -----------------------------------------------------------------

    def set_mode(self, preset: str, *, plan: bool) -> None:
        """The permission preset and plan mode for the next turn (plan mode sits on
        top of the preset: docs/MODES.md#plan-mode)."""
        if self.policy.preset != preset:
            self.policy.preset = preset
        if plan and not self.plan_mode.active:
            self.plan_mode.enter()
        elif not plan and self.plan_mode.active:
            self.plan_mode.leave()

    def set_model(self, resolved: ResolvedModel) -> None:
        """Switch the model for the next request; ConfigError for another provider's
        (a session keeps its provider: start a new session to switch)."""
        if resolved.provider.name != self.resolved.provider.name:
            raise ConfigError(
                f"{resolved.ref} is served by another provider; start a /new session to switch"
            )
        self.agent.set_model(resolved.model, resolved.provider.context_window_for(resolved.model))

    def set_effort(self, effort: str) -> None:
        """The reasoning effort for the next request (checked by the caller against
        the provider's accepted efforts)."""
        self.agent.set_effort(effort)

    # -- plan approval ---------------------------------------------------------

    def waiting_plan(self) -> SavedPlan | None:
        from reasonix_core.session.plans import waiting_plan

        return waiting_plan(self.agent)

    def approve_plan(self) -> AsyncGenerator[ev.Event, None]:
        """The executor's turn over the waiting plan; NoPlanWaiting when none waits."""
        from reasonix_core.session.plans import approve_plan

        execution = approve_plan(self.agent)
        if self.hooks is None:
            return execution
        from reasonix_core.session.hook_turns import hooked_plan

        return hooked_plan(self.hooks, self.runner, self.agent, execution)

    def reject_plan(self) -> None:
        from reasonix_core.session.plans import reject_plan

        reject_plan(self.agent)

    # -- goal ------------------------------------------------------------------

    def change_goal(self, action: str, objective: str = "") -> Goal | None:
        """``start`` / ``status`` / ``pause`` / ``resume`` / ``clear`` (GoalError)."""
        from reasonix_core.session.goals import change_goal

        return change_goal(self.goals, action, objective)

    def goal_driver(
        self, max_rounds: int | None = None, token_budget: int | None = None
    ) -> GoalDriver:
        """A driver for the session's goal, within these bounds (else ``[agent]``'s)."""
        from reasonix_core.goal.driver import GoalDriver
        from reasonix_core.session.goals import goal_bounds

        return GoalDriver(self.goals, goal_bounds(self.config.agent, max_rounds, token_budget))

    def drive_goal(self, driver: GoalDriver, objective: str = "") -> AsyncGenerator[ev.Event, None]:
        """Rounds until the goal settles or a bound is reached (``driver.stop``)."""
        from reasonix_core.session.goals import drive_goal

        if self.hooks is None:
            return drive_goal(self.runner, driver, objective)
        from reasonix_core.session.hook_turns import HookedRunner

        # Each round with its hooks: Stop after every round, UserPromptSubmit for
        # the objective only (the later rounds are host-made).
        return drive_goal(HookedRunner(self.hooks, self.runner, self.agent), driver, objective)

    # -- recovery (retired) ----------------------------------------------------

    def recovery(self) -> dict[str, object]:
        """The calls whose outcome is unknown, as read-only facts (``retired=True``)."""
        from reasonix_core.session.recovery import recovery_query

        return recovery_query(self.agent.session.path)

    def resolve_recovery(self, call_id: str, action: str) -> None:
        """Always ToolRecoveryRetired (``tool_recovery_retired``): nothing is replayed."""
        from reasonix_core.session.recovery import recovery_action

        recovery_action(self.agent.session.path, call_id, action)

    # -- rewind ----------------------------------------------------------------

    def rewind_turns(self) -> list[TurnSummary]:
        from reasonix_core.session.rewind import rewind_turns

        return rewind_turns(self.agent.session.path, self.workspace)

    def rewind_preview(self, turn: int) -> RewindPreview:
        from reasonix_core.session.rewind import rewind_preview

        return rewind_preview(self.agent.session.path, self.workspace, turn)

    def rewind(self, turn: int, scope: str, force: bool = False) -> Rewound:
        """Rewind to ``turn`` (code, chat, both) or ``fork`` it into a new session."""
        from reasonix_core.session.rewind import rewind_session

        return rewind_session(
            self.agent, self.workspace, self.home, self.checkpoints, turn, scope, force
        )
