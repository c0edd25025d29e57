"""Services built after the first frame: :class:`DeferredServices`.

Building the real services (importing the core engine, pydantic and the config
schema, reading the config files) takes about as long as importing Textual, so
the launcher does not wait for it: it hands the app a ``DeferredServices``,
the app paints the session screen at once and then calls :meth:`ready`, which
runs the factory in a thread. Until then the composer works as usual:

* a prompt sent early waits in its turn for the services (the runner returned
  by :meth:`new_runner` is a stand-in that binds to the real one when ready);
* what the status bar reads first (mode, model, context window) has a
  placeholder, and :attr:`is_ready` tells the screen to say "starting…";
* any other member (``/model``, ``/resume``, Shift+Tab, …) blocks until the
  factory has finished (it needs no event loop, so this cannot deadlock);
  asynchronous members (MCP prompts and resources, :meth:`serve`) await
  :meth:`ready` instead.

Each member says which of those three it is by its body (a placeholder until
``_ready_services``, ``wait()``, or ``await _built_services()``), spelled out so the
type checker sees it implements :class:`~reasonix_tui.services.AppServices`
(tests/tui/test_tui_seams.py checks every member is there).

A failure of the factory is kept in :attr:`error`; the app exits and the
launcher reports it as it would have before the screen was taken over.

When the folder's project files would change risky settings and the folder is
not trusted (:attr:`trust_review`), nothing is built until the user answered
the trust dialog (:meth:`settle_trust`): the engine reads the config once,
with or without the project's settings.
Nothing here imports Textual.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix_core.errors import ReasonixError
from reasonix_tui.services import (
    ApiKeyInfo,
    AppServices,
    BaseServices,
    McpServerView,
    ModelProbe,
    ProviderChoice,
    SessionHandle,
    SessionSummary,
)

if TYPE_CHECKING:
    from reasonix_core.agent.cache_preview import RebillPreview
    from reasonix_core.agent.cache_report import CacheReport
    from reasonix_core.agent.turn_meta import TurnMeta
    from reasonix_core.coordinator.plans import SavedPlan
    from reasonix_core.efforts import EffortLevel
    from reasonix_core.events import Event
    from reasonix_core.messages import Message
    from reasonix_core.permission.approver import Approver
    from reasonix_core.skills import SkillCatalog
    from reasonix_core.trust import ProjectReview
    from reasonix_tui.saved_session import SavedSession
    from reasonix_tui.services import GoalView, RewindDone, RewindPreview, RewindTurn

log = logging.getLogger(__name__)

STARTING = "…"


class DeferredRunner:
    """A :class:`~reasonix_tui.services.SessionHandle` created before the services
    exist: bound to the real one when they are ready, which every session command
    waits for (``budget_left``, read by the ticker, never waits)."""

    def __init__(self, services: DeferredServices, approver: Approver) -> None:
        self.services = services
        self.approver = approver
        self.runner: SessionHandle | None = None  # the real one, bound when ready

    @property
    def session_id(self) -> str:
        return self.runner.session_id if self.runner is not None else "(new session)"

    @property
    def model(self) -> str:
        return self.runner.model if self.runner is not None else ""

    @property
    def effort(self) -> str:
        return self.runner.effort if self.runner is not None else ""

    def _now(self) -> SessionHandle:
        """The real handle, building the services now (blocking) if need be."""
        self.services.wait()  # binds the stand-in runners
        assert self.runner is not None
        return self.runner

    async def _when_ready(self) -> SessionHandle:
        await self.services.ready()
        assert self.runner is not None
        return self.runner

    async def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncGenerator[Event, None]:
        try:
            runner = await self._when_ready()
        except Exception as exc:
            from reasonix_core.events import TurnFailed

            yield TurnFailed(error=f"Reasonix could not start: {exc}", kind="config")
            return
        async with _closing(runner.run(prompt, meta)) as events:
            async for event in events:
                yield event

    def saved_messages(self) -> Sequence[Message]:
        if self is self.services.first_runner:
            # The launch's session: read without waiting for the engine (and never
            # building it while the trust dialog is still open).
            return self.services.saved_session_messages()
        return self._now().saved_messages()

    async def compact(self, focus: str = "") -> AsyncGenerator[Event, None]:
        try:
            runner = await self._when_ready()
        except Exception as exc:
            from reasonix_core.events import Notice

            yield Notice(level="error", text=f"Reasonix could not start: {exc}")
            return
        async with _closing(runner.compact(focus)) as events:
            async for event in events:
                yield event

    async def nothing_to_compact(self) -> str:
        return await (await self._when_ready()).nothing_to_compact()

    def cache_report(self) -> CacheReport | None:
        if self is self.services.first_runner and not self.services.is_ready:
            # The launch's session before the engine exists (the trust dialog may be
            # open): its gauges from its records, never building anything.
            return self.services.saved_session_report()
        return self._now().cache_report()

    def rebill_preview(self, change: str, target: str = "") -> RebillPreview | None:
        return self._now().rebill_preview(change, target)

    def idle_preview(self) -> RebillPreview | None:
        return self._now().idle_preview()

    def budget_left(self) -> str:
        if not self.services.is_ready or self.runner is None:  # never waits
            return ""
        return self.runner.budget_left()

    async def pending_plan(self) -> SavedPlan | None:
        return await (await self._when_ready()).pending_plan()

    async def execute_plan(self) -> AsyncGenerator[Event, None]:
        runner = await self._when_ready()
        async with _closing(runner.execute_plan()) as events:
            async for event in events:
                yield event

    async def reject_plan(self) -> None:
        await (await self._when_ready()).reject_plan()

    async def goal(self, action: str, objective: str = "") -> GoalView | None:
        return await (await self._when_ready()).goal(action, objective)

    async def drive_goal(self, objective: str = "") -> AsyncGenerator[Event, None]:
        runner = await self._when_ready()
        async with _closing(runner.drive_goal(objective)) as events:
            async for event in events:
                yield event

    def rewind_turns(self) -> list[RewindTurn]:
        return self._now().rewind_turns()

    def rewind_preview(self, turn: int) -> RewindPreview:
        return self._now().rewind_preview(turn)

    async def open(self) -> None:
        await (await self._when_ready()).open()

    def rewind(self, turn: int, scope: str, force: bool = False) -> RewindDone:
        return self._now().rewind(turn, scope, force)


@asynccontextmanager
async def _closing(events: AsyncIterator[Event]) -> AsyncIterator[AsyncIterator[Event]]:
    """Hold a stream and close it on the way out, also when the consumer stops early
    (a generator re-yielding another does not close it by itself when it is closed)."""
    try:
        yield events
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


class DeferredServices(BaseServices):
    """An :class:`~reasonix_tui.services.AppServices` whose real one is built later.

    ``factory`` builds the real services; it runs once, in a worker thread
    (:meth:`ready`) or, if a blocking member is needed first, in the caller's.
    It must not need a running event loop.
    """

    def __init__(
        self,
        factory: Callable[[], AppServices],
        *,
        workspace: Path,
        config_home: Path,
        permission_mode: str | None = None,
        clock: Callable[[], datetime] = datetime.now,
        trust_review: ProjectReview | None = None,
        saved: SavedSession | None = None,
    ) -> None:
        self.workspace = workspace
        # The session the launch reopens: drawn before the services are built.
        self._saved = saved
        # The stand-in for the launch's session, which draws ``saved`` (None: not yet).
        self.first_runner: DeferredRunner | None = None
        # The folder's untrusted risky settings, until the user decides (None: nothing to ask).
        self.trust_review = trust_review if trust_review and trust_review.needs_trust else None
        self.startup_notes: tuple[str, ...] = ()  # set by the launch (-c with no session)
        self._trust_settled = threading.Event()
        self._trust_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        if self.trust_review is None:
            self._trust_settled.set()
        self.config_home = config_home
        self.clock = clock
        self._factory = factory
        self._mode_hint = permission_mode
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._services: AppServices | None = None
        self.error: Exception | None = None
        self._pending: list[DeferredRunner] | None = []
        self._task: asyncio.Future[None] | None = None

    # -- building -------------------------------------------------------------

    def settle_trust(self, trust: bool) -> None:
        """The user's answer to the trust dialog; building may start after it.

        ``trust``: record the folder's trust for exactly the settings shown, so
        the engine loads them. Raises ConfigError if the trust file cannot be
        written, and keeps it in :attr:`error` for the launcher to report.
        """
        review = self.trust_review
        try:
            if trust and review is not None:
                from reasonix_core.trust import record_trust

                record_trust(review, self.config_home)
        except Exception as exc:
            self.error = exc
            raise
        finally:
            self.trust_review = None
            self._trust_settled.set()
            for loop, event in self._trust_waiters:
                loop.call_soon_threadsafe(event.set)

    async def _trust_answered(self) -> None:
        if self._trust_settled.is_set():
            return
        event = asyncio.Event()
        self._trust_waiters.append((asyncio.get_running_loop(), event))
        if not self._trust_settled.is_set():  # else settled between the two checks
            await event.wait()

    def _build(self) -> None:
        """Run the factory once (any thread); later callers wait for the first."""
        if not self._trust_settled.is_set():
            # A blocking member needed the engine while the dialog is still open: the
            # dialog cannot be answered while we block, so take the safe answer.
            self.settle_trust(False)
        with self._lock:
            if self._done.is_set():
                return
            try:
                self._services = self._factory()
            except Exception as exc:
                if not isinstance(exc, ReasonixError):
                    log.exception("starting the services failed")
                self.error = exc
            finally:
                self._done.set()

    def _bind(self) -> AppServices:
        """The built services (event-loop thread); the stand-in runners bind to them."""
        if self.error is not None:
            raise self.error
        services = self._services
        assert services is not None
        if self._pending is not None:
            pending, self._pending = self._pending, None
            for runner in pending:  # in creation order, as if built at once
                runner.runner = services.new_runner(runner.approver)
        return services

    @property
    def started(self) -> bool:
        """True once the factory has been started (or has run)."""
        return self._task is not None or self._done.is_set()

    @property
    def is_ready(self) -> bool:
        """True once :meth:`ready` (or a blocking member) has succeeded."""
        return self._pending is None

    async def ready(self) -> None:
        """Build the services in a thread (once); raise the factory's error."""
        await self._built_services()

    async def _built_services(self) -> AppServices:
        """The services, built in a thread (once) if need be."""
        if not self._done.is_set():
            await self._trust_answered()
            if self._task is None:
                self._task = asyncio.ensure_future(asyncio.to_thread(self._build))
            # A cancelled turn must not cancel the build that others wait for.
            await asyncio.shield(self._task)
        return self._bind()

    def wait(self) -> AppServices:
        """The built services, building them now (blocking) if need be."""
        self._build()
        return self._bind()

    # -- cheap members: placeholders until ready ------------------------------

    @property
    def prompt_history_path(self) -> Path | None:
        """Known without the engine (read after the first frame: it imports the core)."""
        from reasonix_tui.prompt_history import history_path

        return history_path(self.config_home, self.workspace)

    @property
    def _ready_services(self) -> AppServices | None:
        """The built services once ready, else None (the placeholders show)."""
        return self._services if self.is_ready else None

    @property
    def context_window(self) -> int:
        services = self._ready_services
        return services.context_window if services is not None else 0

    @property
    def compact_ratio(self) -> float | None:
        services = self._ready_services
        return services.compact_ratio if services is not None else None

    @property
    def notify_after(self) -> float | None:
        services = self._ready_services
        return services.notify_after if services is not None else None

    @property
    def skills(self) -> SkillCatalog | None:
        services = self._ready_services
        return services.skills if services is not None else None

    @property
    def settings_files(self) -> Sequence[str]:
        services = self._ready_services
        return services.settings_files if services is not None else ()

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        services = self._ready_services
        return services.mcp_prompts() if services is not None else []

    @property
    def permission_mode(self) -> str:
        if self.is_ready and self._services is not None:
            return self._services.permission_mode
        return self._mode_hint or STARTING

    @permission_mode.setter
    def permission_mode(self, mode: str) -> None:
        self.wait().permission_mode = mode

    def new_runner(self, approver: Approver) -> SessionHandle:
        if self._pending is None:
            return self.wait().new_runner(approver)
        runner = DeferredRunner(self, approver)
        self._pending.append(runner)
        if self.first_runner is None:
            self.first_runner = runner
        return runner

    def saved_session_messages(self) -> Sequence[Message]:
        """The transcript of the session the launch reopens (empty: a new one)."""
        return self._saved.messages if self._saved is not None else ()

    def saved_session_report(self) -> CacheReport | None:
        """The cache report of the session the launch reopens (None: a new one)."""
        return self._saved.cache_report() if self._saved is not None else None

    def saved_session_busy(self) -> int | None:
        return self._saved.busy_pid() if self._saved is not None else None

    # -- everything else waits for the services -------------------------------

    @property
    def permission_modes(self) -> Sequence[str]:
        return self.wait().permission_modes

    def resume_runner(self, session_id: str, approver: Approver) -> SessionHandle:
        return self.wait().resume_runner(session_id, approver)

    def list_sessions(self) -> list[SessionSummary]:
        return self.wait().list_sessions()

    def models(self) -> list[str]:
        return self.wait().models()

    def set_model(self, model: str) -> None:
        self.wait().set_model(model)

    def efforts(self) -> list[str]:
        return self.wait().efforts()

    def effort_choices(self) -> list[EffortLevel]:
        return self.wait().effort_choices()

    def set_effort(self, effort: str) -> None:
        self.wait().set_effort(effort)

    def needs_api_key(self) -> bool:
        return self.wait().needs_api_key()

    def save_api_key(self, key: str) -> None:
        self.wait().save_api_key(key)

    def api_key_info(self) -> ApiKeyInfo:
        return self.wait().api_key_info()

    def provider_choices(self) -> list[ProviderChoice]:
        return self.wait().provider_choices()

    def priced(self, model: str) -> bool:
        # Read by every status refresh: never builds the engine (the trust dialog may
        # be open); until it exists, no "cost unknown" is claimed.
        if not self.is_ready or self._services is None:
            return True
        return self._services.priced(model)

    def mcp_status(self) -> list[McpServerView]:
        return self.wait().mcp_status()

    def reconnect_mcp(self, name: str) -> None:
        self.wait().reconnect_mcp(name)

    def mention_refused(self, path: str) -> bool:
        return self.wait().mention_refused(path)

    # -- asynchronous members await ready() -----------------------------------

    async def serve(self) -> None:
        await (await self._built_services()).serve()

    async def wait_mcp(self) -> bool:
        waited = not self.is_ready
        return await (await self._built_services()).wait_mcp() or waited

    async def render_mcp_prompt(self, name: str, args: str) -> str:
        return await (await self._built_services()).render_mcp_prompt(name, args)

    async def expand_mcp_resources(self, text: str) -> tuple[str, list[str]]:
        return await (await self._built_services()).expand_mcp_resources(text)

    async def use_provider(self, key: str, api_key: str | None) -> None:
        await (await self._built_services()).use_provider(key, api_key)

    async def use_endpoint(self, base_url: str, api_key: str | None) -> None:
        await (await self._built_services()).use_endpoint(base_url, api_key)

    async def probe_models(self) -> ModelProbe | None:
        return await (await self._built_services()).probe_models()
