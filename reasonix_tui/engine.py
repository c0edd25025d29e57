"""The real :class:`~reasonix_tui.services.AppServices`: the TUI over the core engine.

Runtimes own resources that live in task groups (the provider's HTTP client,
background shell jobs), so they are opened and closed by one long-lived owner
task, :meth:`EngineServices.serve`, which the app runs as a worker for its
whole life. Runners are thin proxies that wait for their runtime to be ready.
Nothing here imports textual.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.cache_ledger import Baseline, CacheLedger, rebill_cost
from reasonix_core.agent.cache_preview import RebillPreview, idle_preview, rebill_preview
from reasonix_core.agent.cache_report import CacheReport, session_report
from reasonix_core.agent.session import list_sessions, open_session, read_request_records
from reasonix_core.agent.session_lock import SessionBusy
from reasonix_core.checkpoint.report import change_line
from reasonix_core.config import (
    load_config,
    read_api_key,
    reasonix_home,
    resolve_model,
    save_api_key,
)
from reasonix_core.config.schema import ProviderConfig
from reasonix_core.efforts import (
    AUTO,
    EffortLevel,
    UnknownEffort,
    accepted_efforts,
    check_effort,
    effort_levels,
)
from reasonix_core.errors import ConfigError, ReasonixError, SessionError
from reasonix_core.messages import Message
from reasonix_core.permission.approver import Approver
from reasonix_core.permission_modes import MODE_CYCLE, PLAN_MODE
from reasonix_core.session.build import build_session
from reasonix_core.session.core import Session
from reasonix_core.session.hook_turns import SessionEndReason
from reasonix_core.session.policy import build_policy
from reasonix_core.session.prices import has_price, make_price_fn
from reasonix_core.session.settings import RunSettings
from reasonix_core.skills import SkillCatalog, load_catalog
from reasonix_tui.provider_choices import FALLBACK_KEY_VARIABLE, key_info, provider_choices
from reasonix_tui.services import (
    ApiKeyInfo,
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

if TYPE_CHECKING:  # /plan and /goal import the coordinator and goal modules on first use
    from reasonix_core.coordinator.plans import SavedPlan
    from reasonix_core.coordinator.routes import TurnMeta
    from reasonix_core.permission.policy import Policy
    from reasonix_core.provider.presets import ProviderPreset

log = logging.getLogger(__name__)


@dataclass(eq=False)
class EngineRunner:
    """A Runner whose Agent is opened by the services' owner task on first use."""

    services: EngineServices
    approver: Approver
    resume_id: str | None = None
    continue_last: bool = False  # reopen the newest session (resume_id once known)
    runtime: Session | None = None
    error: BaseException | None = None
    starting: bool = False
    # Plan mode as last put into the runtime (at a turn's start): a runtime out of
    # plan mode after that means the user approved the model's plan.
    plan_applied: bool = False
    # The session's start notices were shown (with its first turn).
    start_noticed: bool = False
    ready: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    # Why the app closed the session (SessionEnd's reason), set with ``closed``.
    end_reason: SessionEndReason = "other"

    @property
    def session_id(self) -> str:
        if self.runtime is not None:
            return self.runtime.session_id
        return self.resume_id or "(new session)"

    @property
    def model(self) -> str:
        return self.runtime.model if self.runtime else self.services.model

    @property
    def effort(self) -> str:
        return self.runtime.effort if self.runtime else self.services.effort

    async def run(
        self, prompt: str, meta: TurnMeta | None = None
    ) -> AsyncGenerator[ev.Event, None]:
        try:
            runtime = await self.services.acquire(self)
        except ReasonixError as exc:
            yield ev.TurnFailed(error=str(exc), kind="config")
            return
        if not self.start_noticed:
            self.start_noticed = True  # once per session (Session.notices)
            for text in runtime.notices:
                yield ev.Notice(level="warning", text=text)
        async with aclosing(runtime.prompt(prompt, meta)) as events:
            async for event in events:
                yield event

    # -- what the screen asks of this session (SessionHandle) --------------------

    def saved_messages(self) -> Sequence[Message]:
        if self.resume_id is None and not self.continue_last:
            return ()
        home, workspace = self.services.config_home, self.services.workspace
        try:
            # None: the newest session, the one ``continue_last`` reopens.
            loaded = open_session(home / "sessions", workspace, self.resume_id)
        except SessionError as exc:  # the session's own start reports it on the first turn
            log.warning("cannot draw the saved session: %s", exc)
            return ()
        if self.resume_id is None and self.runtime is None:
            self.resume_id = loaded.header.id  # /status names it before the first turn
        return loaded.messages

    async def compact(self, focus: str = "") -> AsyncGenerator[ev.Event, None]:
        """Manual ``/compact``: prune and fold the history now (retries even
        after an automatic failure); the next request starts from the checkpoint."""
        try:
            runtime = await self.services.acquire(self)
        except ReasonixError as exc:
            yield ev.Notice(level="error", text=str(exc))
            return
        async with aclosing(runtime.compact(focus)) as events:
            async for event in events:
                yield event

    async def nothing_to_compact(self) -> str:
        runtime = await self.services.acquire(self)
        return runtime.nothing_to_compact()

    # /rewind: the session's checkpoints (Session.rewind_*).

    def rewind_turns(self) -> list[RewindTurn]:
        """Raises ValueError with the reason when the checkpoints cannot be read."""
        try:
            if self.runtime is not None:
                summaries = self.runtime.rewind_turns()
            else:  # resumed, nothing sent yet: the saved session's turns
                from reasonix_core.session.rewind import rewind_turns

                state = self._cache_state()
                if state is None:
                    return []
                summaries = rewind_turns(state[0], self.services.workspace)
        except ReasonixError as exc:
            raise ValueError(str(exc)) from None
        return [
            RewindTurn(
                number=t.number,
                head=t.head,
                time=t.time.replace("T", " ")[:19],
                files=tuple(change_line(c) for c in t.changes),
            )
            for t in summaries
        ]

    def rewind_preview(self, turn: int) -> RewindPreview:
        try:
            if self.runtime is not None:
                found = self.runtime.rewind_preview(turn)
            else:
                from reasonix_core.session.rewind import rewind_preview

                state = self._cache_state()
                if state is None:
                    return RewindPreview(diff="", note="no turn has run in this session yet")
                found = rewind_preview(state[0], self.services.workspace, turn)
        except ReasonixError as exc:
            return RewindPreview(diff="", note=str(exc))
        return RewindPreview(diff=found.diff, conflicts=found.conflicts, note=found.note)

    async def open(self) -> None:
        await self.services.acquire(self)

    def rewind(self, turn: int, scope: str, force: bool = False) -> RewindDone:
        if self.runtime is None:
            raise ValueError("no turn has run in this session yet")
        try:
            done = self.runtime.rewind(turn, scope, force)
        except ReasonixError as exc:
            raise ValueError(str(exc)) from None
        return RewindDone(message=done.message, resume_id=done.resume_id)

    # The prompt cache: the session's account, and what an action would re-bill.

    def _cache_state(self) -> tuple[Path, Baseline | None] | None:
        """The session file and its chain's last request (live when the session is
        open, else from its request records)."""
        if self.runtime is not None:
            agent = self.runtime.agent
            return agent.session.path, agent.ledger.baseline
        if self.resume_id is None and not self.continue_last:
            return None  # a new session: nothing recorded yet
        sessions = list_sessions(self.services.config_home / "sessions", self.services.workspace)
        wanted = self.resume_id
        path = next((s.path for s in sessions if wanted is None or s.id == wanted), None)
        if path is None:
            return None
        return path, CacheLedger(path, records=read_request_records(path)).baseline

    def _rebill(self) -> functools.partial[tuple[float, str]]:
        return functools.partial(rebill_cost, make_price_fn(self.services.config))

    def _utc_now(self) -> datetime:
        """Prices follow a UTC schedule; the services' clock may be naive local time."""
        return self.services.clock().astimezone(UTC)

    def cache_report(self) -> CacheReport | None:
        state = self._cache_state()
        if state is None:
            return None
        path, _ = state
        return session_report(path)

    def rebill_preview(self, change: str, target: str = "") -> RebillPreview | None:
        state = self._cache_state()
        if state is None:
            return None
        model = target.split("/", 1)[-1] if change == "model" and target else self.model
        return rebill_preview(
            state[1],
            model=model,
            when=self._utc_now(),
            rebill=self._rebill(),
            keep_system=change == "compact",
            priced=has_price(self.services.config, model),
        )

    def idle_preview(self) -> RebillPreview | None:
        state = self._cache_state()
        if state is None:
            return None
        return idle_preview(
            state[1],
            model=self.model,
            when=self._utc_now(),
            rebill=self._rebill(),
            priced=has_price(self.services.config, self.model),
        )

    def budget_left(self) -> str:
        budget = self.runtime.agent.options.budget if self.runtime is not None else None
        return budget.left() if budget is not None else ""

    # -- /plan and /goal (Session.*_plan, Session.*_goal) ----------------------

    async def pending_plan(self) -> SavedPlan | None:
        runtime = await self.services.acquire(self)
        return await anyio.to_thread.run_sync(runtime.waiting_plan)

    async def execute_plan(self) -> AsyncGenerator[ev.Event, None]:
        """The executor's turn over the pending plan: the same path as ``reasonix run -c
        --approve-plan`` (the approval is the user's answer in the dialog)."""
        # The user approved a plan: plan mode ends, as an approved exit_plan_mode ends it.
        self.services.plan_approved()
        try:
            runtime = await self.services.acquire(self)
        except ReasonixError as exc:
            yield ev.TurnFailed(error=str(exc), kind="config")
            return
        from reasonix_core.session.plans import NoPlanWaiting

        try:
            turn = runtime.approve_plan()
        except NoPlanWaiting:
            yield ev.Notice(level="warning", text="No plan is waiting for approval.")
            return
        async with aclosing(turn) as events:
            async for event in events:
                yield event

    async def reject_plan(self) -> None:
        runtime = await self.services.acquire(self)
        await anyio.to_thread.run_sync(runtime.reject_plan)

    async def goal(self, action: str, objective: str = "") -> GoalView | None:
        """``/goal ACTION``; GoalError (a ValueError) with the reason when it cannot apply."""
        try:
            runtime = await self.services.acquire(self)
        except ReasonixError as exc:  # the session could not start: /goal says why
            raise ValueError(str(exc)) from None
        goal = runtime.change_goal(action, objective)
        if goal is None:
            return None
        return GoalView(
            objective=goal.objective,
            status=goal.status.value,
            rounds=goal.rounds,
            tokens=goal.tokens,
            cost=goal.cost,
            armed=runtime.goals.armed,
        )

    async def drive_goal(self, objective: str = "") -> AsyncGenerator[ev.Event, None]:
        """The session's goal rounds, bounded by ``[agent] max_goal_rounds`` /
        ``goal_token_budget``. Cancelling it (Esc) disarms the goal: it stays active,
        and ``/goal resume`` drives it again."""
        try:
            runtime = await self.services.acquire(self)
        except ReasonixError as exc:
            yield ev.TurnFailed(error=str(exc), kind="config")
            return
        driver = runtime.goal_driver()
        async with aclosing(runtime.drive_goal(driver, objective)) as events:
            async for event in events:
                yield event
        if driver.stop is not None:
            stop = driver.stop.value
            yield ev.Notice(level="info", text=_GOAL_STOP_TEXT.get(stop, stop))


class EngineServices(BaseServices):
    """The TUI's services over the core engine (config, runtimes, MCP host)."""

    def __init__(
        self,
        workspace: Path,
        *,
        model: str | None = None,
        effort: str | None = None,
        permission_mode: str | None = None,
        continue_last: bool = False,
        resume_id: str | None = None,
        home: Path | None = None,
        clock: Callable[[], datetime] = datetime.now,
        add_dirs: Sequence[Path] = (),
        settings_files: Sequence[str] = (),
    ) -> None:
        self.workspace = workspace.resolve()
        self.add_dirs = list(add_dirs)  # --add-dir: extra readable folders
        self._settings_files = tuple(settings_files)  # --settings (docs/HOOKS.md)
        self.config_home = home or reasonix_home()
        from reasonix_tui.prompt_history import history_path

        self._history_path = history_path(self.config_home, self.workspace)
        loaded = load_config(self.workspace, home=self.config_home)  # ConfigError -> exit 2
        self.config = loaded.config
        # What ``@path`` references never attach: what tools may not read
        # (protected paths and ``Read`` deny rules), decided by the same policy.
        self._mention_policy, default_mode = self._settings_policy()
        permission_mode = permission_mode or default_mode
        self._resolved = resolve_model(self.config, model)
        self.model = self._resolved.model
        # What each provider's /models listed (the /model probe): pickable this session.
        self._discovered: dict[str, tuple[str, ...]] = {}
        # Asked for (--model / --effort, /model / /effort): a continued session
        # otherwise keeps the model and effort it last used (its prompt cache).
        self._model_chosen = model is not None
        self._effort_chosen = effort is not None
        # The same check the builder makes (reasonix_core/efforts.py): a level the
        # selected provider does not accept is a ConfigError here (exit 2).
        self.effort = check_effort(
            effort or self.config.agent.effort, self.efforts(), self._resolved.provider.name
        )
        # The preset in force; plan mode sits on top of it (docs/MODES.md#plan-mode).
        self._plan, self._preset = _starting_mode(permission_mode, self.config.permissions.preset)
        self._modes = MODE_CYCLE if self._preset in MODE_CYCLE else (*MODE_CYCLE, self._preset)
        self.clock = clock
        self._first_resume = resume_id
        self._first_continue = continue_last
        self._opened = 0  # sessions opened: a later fresh one is a /new or /clear
        self._tg: anyio.abc.TaskGroup | None = None
        self._tg_ready = anyio.Event()
        self._active: EngineRunner | None = None
        # MCP servers start with the app (in serve()), in the background, and are
        # shared by every session; the first prompt never waits for them.
        from reasonix_core.mcp import make_host

        mcp_workspace = Path(self.config.sandbox.workspace_root or self.workspace).resolve()
        self._mcp = make_host(self.config, mcp_workspace, self.config_home)
        # Discovered once for the app: the / menu lists them and every session
        # starts from this snapshot (its index is frozen for the session).
        self._skills = load_catalog(mcp_workspace, self.config_home)

    @property
    def permission_mode(self) -> str:
        """What the status bar shows: ``plan`` while plan mode is on, else the preset."""
        self._sync_plan()
        return PLAN_MODE if self._plan else self._preset

    @permission_mode.setter
    def permission_mode(self, mode: str) -> None:
        # Takes effect at the next turn's start (acquire), as a preset change does.
        self._sync_plan()
        if mode == PLAN_MODE:
            self._plan = True
        else:
            self._preset, self._plan = mode, False

    def _sync_plan(self) -> None:
        """An approved ``exit_plan_mode`` (or ``/plan``) turned plan mode off in the
        runtime: the user's choice follows it."""
        runner = self._active
        runtime = runner.runtime if runner is not None else None
        if runtime is None or runner is None or not (runner.plan_applied and self._plan):
            return
        if not runtime.policy.plan_mode:
            self._plan = runner.plan_applied = False

    @property
    def skills(self) -> SkillCatalog:
        return self._skills

    @property
    def permission_modes(self) -> tuple[str, ...]:
        return self._modes

    @property
    def prompt_history_path(self) -> Path:
        return self._history_path

    @property
    def context_window(self) -> int:
        return self._resolved.provider.context_window_for(self._resolved.model)

    @property
    def notify_after(self) -> float | None:
        tui = self.config.tui
        return tui.notify_after_seconds if tui.notify else None

    @property
    def compact_ratio(self) -> float:
        """The effective ``agent.compact_ratio`` (project config beats user config)."""
        return self.config.agent.compact_ratio

    # -- lifetime ---------------------------------------------------------

    async def serve(self) -> None:
        """Own every runtime for the app's lifetime; cancelled when the app exits."""
        try:
            async with self._mcp, anyio.create_task_group() as tg:
                self._tg = tg
                self._tg_ready.set()
                await anyio.sleep_forever()
        finally:
            self._tg = None

    async def acquire(self, runner: EngineRunner) -> Session:
        if isinstance(runner.error, SessionBusy):
            # Another process held the session; it may have quit since: try again.
            runner.error, runner.starting, runner.ready = None, False, anyio.Event()
        if runner.runtime is None and runner.error is None:
            if not runner.starting:
                runner.starting = True
                await self._tg_ready.wait()
                assert self._tg is not None
                self._tg.start_soon(self._hold, runner)
            await runner.ready.wait()
        if runner.error is not None:
            if isinstance(runner.error, ReasonixError):
                raise runner.error
            raise ConfigError(f"could not start the session: {runner.error}")
        assert runner.runtime is not None
        self._apply_mode(runner)
        return runner.runtime

    @property
    def settings_files(self) -> Sequence[str]:
        return self._settings_files

    def _settings_policy(self) -> tuple[Policy, str | None]:
        """The policy ``@path`` references answer to, with the settings.json files'
        rules (docs/HOOKS.md), and the mode their ``defaultMode`` starts in."""
        from reasonix_core.hooks.settings import load_settings
        from reasonix_core.session.policy import claude_mode_name

        claude = load_settings(self.workspace, self.config_home, extra=self._settings_files)
        policy = build_policy(
            self.config,
            RunSettings(workspace=self.workspace),
            self.workspace,
            self.config_home,
            claude=claude,
        )
        mode = claude.default_mode
        return policy, claude_mode_name(mode[0]) if mode is not None else None

    async def _hold(self, runner: EngineRunner) -> None:
        continue_last = runner.continue_last and runner.resume_id is None
        continued = continue_last or runner.resume_id is not None
        effort = None if self.effort == "auto" else self.effort
        settings = RunSettings(
            workspace=self.workspace,
            model=self._resolved.ref if self._model_chosen or not continued else None,
            effort=effort if self._effort_chosen or not continued else None,
            permission_mode=self._preset,
            resume_id=runner.resume_id,
            continue_last=continue_last,
            home=self.config_home,
            add_dirs=self.add_dirs,
            discovered_models=dict(self._discovered),
            settings_files=list(self._settings_files),
            session_source="clear" if self._opened and not continued else "",
            # Unless the app switches to another session first, it ends when the
            # user quits the app.
            session_end_reason="prompt_input_exit",
        )
        self._opened += 1
        try:
            async with build_session(
                settings,
                approver=runner.approver,
                mcp_host=self._mcp,
                skills=self._skills,
                # The plan-approval dialog (TuiApprover); None: plans wait in the session.
                plan_approver=getattr(runner.approver, "approve_plan", None),
            ) as runtime:
                if continued:  # what the session continues with is what /model and /effort see
                    self._resolved = runtime.resolved
                    self.model = runtime.resolved.model
                    self.effort = runtime.agent.effort
                runner.runtime = runtime
                runner.ready.set()
                await runner.closed.wait()
                runtime.ending(runner.end_reason)
        except Exception as exc:  # surfaced to the UI as a failed turn
            log.exception("opening the session failed")
            runner.error = exc
        finally:
            runner.ready.set()

    def _switch(self, runner: EngineRunner, end_reason: SessionEndReason) -> EngineRunner:
        """``runner`` is the app's session now; the one before ends (``end_reason``:
        SessionEnd's reason)."""
        self._sync_plan()  # a new session starts in the mode the user sees
        if self._active is not None:
            self._active.end_reason = end_reason
            self._active.closed.set()
        self._active = runner
        return runner

    def _apply_mode(self, runner: EngineRunner) -> None:
        runtime = runner.runtime
        assert runtime is not None
        self._sync_plan()
        runtime.set_mode(self._preset, plan=self._plan)
        runner.plan_applied = self._plan

    def plan_approved(self) -> None:
        """The user approved a plan (``/plan``): plan mode ends for the next turn."""
        self._plan = False

    # -- AppServices --------------------------------------------------------

    def new_runner(self, approver: Approver) -> EngineRunner:
        resume, self._first_resume = self._first_resume, None
        again, self._first_continue = self._first_continue, False
        # A fresh session replaces the open one only on /new or /clear.
        return self._switch(
            EngineRunner(self, approver, resume_id=resume, continue_last=again), "clear"
        )

    def resume_runner(self, session_id: str, approver: Approver) -> EngineRunner:
        if not any(
            s.id == session_id for s in list_sessions(self.config_home / "sessions", self.workspace)
        ):
            raise KeyError(session_id)
        return self._switch(EngineRunner(self, approver, resume_id=session_id), "other")

    def list_sessions(self) -> list[SessionSummary]:
        return [
            SessionSummary(
                session_id=s.id,
                title=s.title,
                updated=datetime.fromtimestamp(s.modified),
                turns=s.prompts,
            )
            for s in list_sessions(self.config_home / "sessions", self.workspace)
        ]

    def models(self) -> list[str]:
        return [f"{p.name}/{m}" for p in self.config.providers for m in p.all_models()]

    async def probe_models(self) -> ModelProbe:
        """The current provider's ``/models`` (reasonix_core/provider/discovery.py)."""
        from reasonix_core.provider.discovery import discover_models

        provider = self._resolved.provider
        try:
            api_key = read_api_key(provider, self.config_home)
        except ConfigError:
            return ModelProbe(error=f"no API key for {provider.name}")
        listing = await discover_models(provider, api_key or None)
        if listing.source != "endpoint":
            return ModelProbe(error=listing.why)
        self._discovered[provider.name] = listing.models
        return ModelProbe(models=tuple(f"{provider.name}/{m}" for m in listing.models))

    def priced(self, model: str) -> bool:
        return has_price(self.config, model)

    def set_model(self, model: str) -> None:
        try:
            resolved = resolve_model(self.config, model, self._discovered)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        active = self._active.runtime if self._active else None
        if active is not None:
            try:
                active.set_model(resolved)
            except ConfigError as exc:  # another provider's model
                raise ValueError(str(exc)) from None
        self._resolved = resolved
        self.model = resolved.model
        self._model_chosen = True

    def efforts(self) -> list[str]:
        # What the provider's efforts() will say, known before it is built.
        provider = self._resolved.provider
        return list(accepted_efforts(provider.kind, provider.effective_reasoning_protocol()) or ())

    def effort_choices(self) -> list[EffortLevel]:
        provider = self._resolved.provider
        return list(effort_levels(provider.kind, provider.effective_reasoning_protocol()))

    def set_effort(self, effort: str) -> None:
        # UnknownEffort is a ValueError: /effort shows its message.
        effort = check_effort(effort, self.efforts(), self._resolved.provider.name)
        self.effort = effort
        self._effort_chosen = True
        if self._active is not None and self._active.runtime is not None:
            self._active.runtime.set_effort(effort)

    def needs_api_key(self) -> bool:
        try:
            read_api_key(self._resolved.provider, self.config_home)
        except ConfigError:
            return True
        return False

    def save_api_key(self, key: str) -> None:
        self._store_key(self._resolved.provider, key)

    def _store_key(self, provider: ProviderConfig, key: str) -> None:
        name = provider.api_key_env or FALLBACK_KEY_VARIABLE
        save_api_key(name, key.strip(), self.config_home)
        if os.environ.get(name):
            # The environment wins over the file: the key just typed must win in this
            # process (sessions opened from now on read it).
            os.environ[name] = key.strip()

    def api_key_info(self) -> ApiKeyInfo:
        return key_info(self._resolved.provider, self.config_home)

    def provider_choices(self) -> list[ProviderChoice]:
        return provider_choices(self.config, self._resolved.provider, self.config_home)

    async def use_provider(self, key: str, api_key: str | None) -> None:
        from reasonix_core.provider.presets import preset, preset_provider

        current = self._resolved.provider
        if key == current.name:
            if api_key:
                self._store_key(current, api_key)
            return
        try:
            entry = preset(key)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        await self._install(entry, self.config.provider(key) or preset_provider(entry), api_key)

    async def use_endpoint(self, base_url: str, api_key: str | None) -> None:
        from reasonix_core.provider.presets import custom_preset, preset_provider

        entry = custom_preset(base_url, needs_key=bool(api_key))
        if self.config.provider(entry.key) is not None:
            raise ValueError(
                f"a provider named {entry.key!r} is already configured; edit it in "
                f"{self.config_home / 'config.toml'}"
            )
        await self._install(entry, preset_provider(entry), api_key)

    async def _install(
        self, entry: ProviderPreset, provider: ProviderConfig, api_key: str | None
    ) -> None:
        """Write ``entry`` into the user's config (its models listed by the endpoint
        when it names none), store its key, and use it from now on."""
        from reasonix_core.provider.discovery import discover_models
        from reasonix_core.provider.presets import install_preset

        key = entry.key
        models: tuple[str, ...] = ()
        if not provider.all_models():
            # A local server's preset lists no models: the server says which it has.
            listing = await discover_models(provider, api_key)
            if listing.source != "endpoint":
                raise ValueError(
                    f"couldn't list the models at {provider.base_url} ({listing.why}): "
                    "is the server running?"
                )
            models = listing.models
        try:
            if api_key:
                self._store_key(provider, api_key)
            install_preset(self.config_home, entry, models, make_default=True, config=self.config)
            # Read back as every later session will: the file is the one truth.
            self.config = load_config(self.workspace, home=self.config_home).config
            self._resolved = resolve_model(self.config, key)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        self.model = self._resolved.model
        self._model_chosen = True
        try:
            self.effort = check_effort(self.effort, self.efforts(), key)
        except UnknownEffort:
            self.effort = AUTO

    def mcp_status(self) -> list[McpServerView]:
        states = {"pending": "connecting", "starting": "connecting"}
        return [
            McpServerView(
                name=s.name,
                transport=s.transport,
                state=states.get(s.phase, s.phase),
                tools=s.tools,
                prompts=s.prompts,
                resources=s.resources,
                reconnects=s.reconnects,
                error_class=s.error_class,
            )
            for s in self._mcp.status()
        ]

    def reconnect_mcp(self, name: str) -> None:
        self._mcp.reconnect(name)

    # MCP prompts as slash commands, resources as @ references.

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        """(command name without "/", description, argument hint) of ready servers."""
        return [(p.full_name, p.description, p.argument_hint) for p in self._mcp.prompts()]

    async def wait_mcp(self) -> bool:
        from reasonix_core.mcp.status import WAITABLE

        starting = any(s.phase in WAITABLE for s in self._mcp.status())
        if starting:
            await self._mcp.wait_ready()
        return starting

    async def render_mcp_prompt(self, name: str, args: str) -> str:
        return await self._mcp.render_prompt(name, args)

    def mention_refused(self, path: str) -> bool:
        return self._mention_policy.read_denied("read_file", path)

    async def expand_mcp_resources(self, text: str) -> tuple[str, list[str]]:
        return await self._mcp.expand_resource_references(text)


def _starting_mode(asked: str | None, configured: str) -> tuple[bool, str]:
    """Plan mode and the preset under it: ``--permission-mode plan`` starts in plan
    mode over the config's preset; another mode replaces the preset."""
    if asked == PLAN_MODE:
        return True, configured
    return False, asked or configured


_GOAL_STOP_TEXT = {
    "complete": "The goal is complete.",
    "blocked": "The goal is blocked (the model says it cannot go on).",
    "bound": "The goal reached its round or token bound; /goal resume drives it again.",
    "stopped": "The goal is paused or cleared; nothing more is driven.",
    "failed": "A goal round failed; the goal stays active (/goal resume).",
}
