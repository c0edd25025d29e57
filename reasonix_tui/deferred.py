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

Members are not forwarded one by one: each says which of those three it is
(``_Blocking``, ``_UntilReady``, ``_AfterReady``), and one descriptor resolves it on
the built services by its own name, which is a declared
:class:`~reasonix_tui.services.AppServices` member (tests/tui/test_tui_seams.py checks).

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
from typing import TYPE_CHECKING, Any

from reasonix_core.errors import ReasonixError
from reasonix_tui.services import AppServices, BaseServices, SessionHandle

if TYPE_CHECKING:
    from reasonix_core.agent.cache_preview import RebillPreview
    from reasonix_core.agent.cache_report import CacheReport
    from reasonix_core.agent.turn_meta import TurnMeta
    from reasonix_core.coordinator.plans import SavedPlan
    from reasonix_core.events import Event
    from reasonix_core.messages import Message
    from reasonix_core.permission.approver import Approver
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

    def cache_report(self) -> CacheReport | None:
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


class _Delegated:
    """A member of :class:`DeferredServices` served by the built services.

    The one place a member is resolved on them: by the descriptor's own
    attribute name, which is a declared ``AppServices`` member.
    """

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def member(self, services: AppServices) -> Any:
        return getattr(services, self.name)


class _Blocking(_Delegated):
    """Needs the services: builds them now (in the caller's thread) if need be."""

    def __get__(self, deferred: DeferredServices | None, owner: type | None = None) -> Any:
        if deferred is None:
            return self
        return self.member(deferred.wait())


class _UntilReady(_Delegated):
    """Read by the first frame: ``placeholder`` until the services are ready."""

    def __init__(self, placeholder: Any) -> None:
        self.placeholder = placeholder

    def __get__(self, deferred: DeferredServices | None, owner: type | None = None) -> Any:
        if deferred is None:
            return self
        services = deferred._services
        if not deferred.is_ready or services is None:
            return self.placeholder
        return self.member(services)


class _AfterReady(_Delegated):
    """An async method: awaits :meth:`DeferredServices.ready`, then the real one."""

    def __get__(self, deferred: DeferredServices | None, owner: type | None = None) -> Any:
        if deferred is None:
            return self

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self.member(await deferred._built_services())(*args, **kwargs)

        return call


def _no_prompts() -> list[tuple[str, str, str]]:
    return []


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

    context_window = _UntilReady(0)
    compact_ratio = _UntilReady(None)
    notify_after = _UntilReady(None)
    mcp_prompts = _UntilReady(_no_prompts)
    skills = _UntilReady(None)

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

    # -- everything else waits for the services -------------------------------

    permission_modes = _Blocking()
    resume_runner = _Blocking()
    list_sessions = _Blocking()
    models = _Blocking()
    set_model = _Blocking()
    efforts = _Blocking()
    set_effort = _Blocking()
    needs_api_key = _Blocking()
    save_api_key = _Blocking()
    api_key_info = _Blocking()
    provider_choices = _Blocking()
    priced = _Blocking()
    mcp_status = _Blocking()
    reconnect_mcp = _Blocking()
    mention_refused = _Blocking()

    serve = _AfterReady()
    render_mcp_prompt = _AfterReady()
    expand_mcp_resources = _AfterReady()
    use_provider = _AfterReady()
    probe_models = _AfterReady()
