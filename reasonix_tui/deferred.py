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
  factory has finished (it needs no event loop, so this cannot deadlock).

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
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonix_core.errors import ReasonixError
from reasonix_tui.services import AppServices, McpServerView, SessionSummary

if TYPE_CHECKING:
    from reasonix_core.events import Event
    from reasonix_core.permission.approver import Approver
    from reasonix_core.trust import ProjectReview

log = logging.getLogger(__name__)

STARTING = "…"


class DeferredRunner:
    """A :class:`~reasonix_core.agent.runner.Runner` created before the services exist."""

    def __init__(self, services: DeferredServices, approver: Approver) -> None:
        self.services = services
        self.approver = approver
        self.runner: Any = None  # the real Runner, bound when the services are ready

    @property
    def session_id(self) -> str:
        return self.runner.session_id if self.runner is not None else "(new session)"

    @property
    def model(self) -> str:
        return self.runner.model if self.runner is not None else ""

    @property
    def effort(self) -> str:
        return self.runner.effort if self.runner is not None else ""

    async def run(self, prompt: str) -> AsyncIterator[Event]:
        try:
            await self.services.ready()
        except Exception as exc:
            from reasonix_core.events import TurnFailed

            yield TurnFailed(error=f"Reasonix could not start: {exc}", kind="config")
            return
        events = self.runner.run(prompt)
        try:
            async for event in events:
                yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()


class DeferredServices:
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
    ) -> None:
        self.workspace = workspace
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
        self._built = threading.Event()
        self._services: AppServices | None = None
        self.error: Exception | None = None
        self._pending: list[DeferredRunner] | None = []
        self._task: asyncio.Future[None] | None = None

    # -- building -------------------------------------------------------------

    def settle_trust(self, trust: bool) -> None:
        """The user's answer to the trust dialog; building may start after it.

        ``trust``: record the folder's trust for exactly the settings shown, so
        the engine loads them. Raises ConfigError if the trust file cannot be written.
        """
        review = self.trust_review
        try:
            if trust and review is not None:
                from reasonix_core.trust import record_trust

                record_trust(review, self.config_home)
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
            if self._built.is_set():
                return
            try:
                self._services = self._factory()
            except Exception as exc:
                if not isinstance(exc, ReasonixError):
                    log.exception("starting the services failed")
                self.error = exc
            finally:
                self._built.set()

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
        return self._task is not None or self._built.is_set()

    @property
    def is_ready(self) -> bool:
        """True once :meth:`ready` (or a blocking member) has succeeded."""
        return self._pending is None

    async def ready(self) -> AppServices:
        """Build the services in a thread (once) and return them; raise the factory's error."""
        if not self._built.is_set():
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

    async def serve(self) -> None:
        serve = getattr(await self.ready(), "serve", None)
        if serve is not None:
            await serve()

    # -- cheap members: placeholders until ready ------------------------------

    @property
    def context_window(self) -> int:
        return self._services.context_window if self.is_ready and self._services else 0

    @property
    def permission_mode(self) -> str:
        if self.is_ready and self._services is not None:
            return self._services.permission_mode
        return self._mode_hint or STARTING

    @permission_mode.setter
    def permission_mode(self, mode: str) -> None:
        self.wait().permission_mode = mode

    @property
    def permission_modes(self) -> Sequence[str]:
        return self.wait().permission_modes

    @property
    def compact_ratio(self) -> float | None:
        if not self.is_ready:
            return None
        return getattr(self._services, "compact_ratio", None)

    def new_runner(self, approver: Approver) -> Any:
        if self._pending is None:
            return self.wait().new_runner(approver)
        runner = DeferredRunner(self, approver)
        self._pending.append(runner)
        return runner

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        if not self.is_ready:
            return []
        prompts = getattr(self._services, "mcp_prompts", None)
        return prompts() if prompts is not None else []

    # -- everything else waits for the services -------------------------------

    def resume_runner(self, session_id: str, approver: Approver) -> Any:
        return self.wait().resume_runner(session_id, approver)

    def list_sessions(self) -> list[SessionSummary]:
        return self.wait().list_sessions()

    def models(self) -> list[str]:
        return self.wait().models()

    def set_model(self, model: str) -> None:
        self.wait().set_model(model)

    def efforts(self) -> list[str]:
        return self.wait().efforts()

    def set_effort(self, effort: str) -> None:
        self.wait().set_effort(effort)

    def needs_api_key(self) -> bool:
        return self.wait().needs_api_key()

    def save_api_key(self, key: str) -> None:
        self.wait().save_api_key(key)

    def mcp_status(self) -> list[McpServerView]:
        return self.wait().mcp_status()

    def reconnect_mcp(self, name: str) -> None:
        self.wait().reconnect_mcp(name)

    async def render_mcp_prompt(self, name: str, args: str) -> str:
        services: Any = await self.ready()
        return await services.render_mcp_prompt(name, args)

    async def expand_mcp_resources(self, text: str) -> tuple[str, list[str]]:
        expand = getattr(await self.ready(), "expand_mcp_resources", None)
        if expand is None:
            return text, []
        return await expand(text)

    async def compact(self, runner: object) -> AsyncIterator[Event]:
        try:
            services = await self.ready()
        except Exception as exc:
            from reasonix_core.events import Notice

            yield Notice(level="error", text=f"Reasonix could not start: {exc}")
            return
        if isinstance(runner, DeferredRunner):
            runner = runner.runner
        events = services.compact(runner)  # type: ignore[arg-type]
        try:
            async for event in events:
                yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
