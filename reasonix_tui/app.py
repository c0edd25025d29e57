"""The Reasonix Textual app and the entry point the CLI calls.

``ReasonixApp(services)`` takes everything by injection (see
:mod:`reasonix_tui.services`). ``run_app`` sets up file logging and runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType

from reasonix_tui import terminal_keys
from reasonix_tui.gc_policy import HeapPolicy
from reasonix_tui.logs import setup_file_logging
from reasonix_tui.screens.session import SessionScreen
from reasonix_tui.screens.setup import SetupScreen
from reasonix_tui.services import AppServices

log = logging.getLogger(__name__)

DEFAULT_THEME = "textual-dark"
IDLE_SECONDS = 2.0  # no turn and no input for this long: a moment to compact the heap
IDLE_GROWTH = 20_000  # ... if at least this many objects were frozen since the last time
IDLE_CHECK_SECONDS = 0.5
INPUT_EVENTS = (
    events.Key,
    events.MouseDown,
    events.MouseScrollDown,
    events.MouseScrollUp,
    events.Paste,
)
SAVED_DRAW_WAIT_SECONDS = 2.0  # the engine waits at most this long for a resumed drawing
STARTUP_FAILED = 1  # the services could not be built (see DeferredServices.error)


class ReasonixApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "Reasonix"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True)
    ]

    def __init__(
        self,
        services: AppServices,
        *,
        theme: str = DEFAULT_THEME,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        terminal_keys.register()  # Alt+Enter adds a line in terminals without the kitty protocol
        self.services = services
        self.cursor_blink = cursor_blink
        self._initial_theme = theme
        # Set by run_app (tests leave it off, so that they never freeze their objects).
        self.heap: HeapPolicy | None = None
        # The session the user was in, once it has one (printed after exit: how to
        # continue it).
        self.session_id: str | None = None
        self.last_input = time.monotonic()

    def on_mount(self) -> None:
        self.theme = self._initial_theme
        if self.heap is not None:
            self.set_interval(IDLE_CHECK_SECONDS, self._compact_when_idle)
        if not self.services.is_ready:
            # Services still being built (DeferredServices): paint the session first,
            # build them once that frame is out, then check the key.
            self.push_screen(SessionScreen(self.services))
            review = self.services.trust_review
            if review is not None:  # an untrusted folder: ask before anything is built
                from reasonix_tui.screens.trust import TrustScreen

                self.push_screen(TrustScreen(review), self._after_trust)
                return
            self.call_after_refresh(self._start_services)
            return
        self._serve()
        if self.services.needs_api_key():
            self.push_screen(SetupScreen(self.services), self._after_setup)
        else:
            self.push_screen(SessionScreen(self.services))

    def _serve(self) -> None:
        # The owner task for long-lived resources; cancelled when the app exits.
        self.run_worker(
            self.services.serve(), name="services", group="services", exit_on_error=False
        )

    def _start_services(self) -> None:
        self.run_worker(
            self._await_services(), name="services-ready", group="services", exit_on_error=False
        )

    async def _await_services(self) -> None:
        session = self.session
        if session is not None:
            # A resumed session's newest blocks first: building the engine (imports,
            # config) in a thread would share the interpreter with drawing them. A
            # prompt sent meanwhile starts the build itself.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(session.saved_drawn.wait(), SAVED_DRAW_WAIT_SECONDS)
        try:
            await self.services.ready()
        except Exception:
            # The launcher reports the error once the terminal is restored.
            self.exit(return_code=STARTUP_FAILED)
            return
        if self.heap is not None:
            self.heap.freeze()  # config, schemas, tools: alive for the whole session
        self._serve()
        session = self.session
        if session is not None:
            session.refresh_status()
            self.run_worker(session.announce_skills())
            self.run_worker(session.warn_if_idle())
        if self.services.needs_api_key():
            self.push_screen(SetupScreen(self.services), self._after_late_setup)

    def _after_trust(self, choice: str | None) -> None:
        if choice not in ("trust", "continue"):
            self.exit(return_code=0)
            return
        try:
            self.services.settle_trust(choice == "trust")
        except Exception:  # the trust file could not be written (the services keep the error)
            self.exit(return_code=STARTUP_FAILED)
            return
        session = self.session
        if choice == "continue" and session is not None:
            self.run_worker(
                session.notice(
                    "This folder's project settings are not applied "
                    "(`reasonix trust` applies them).",
                    "warning",
                )
            )
        self._start_services()

    def _after_setup(self, saved: bool | None) -> None:
        if saved:
            self.push_screen(SessionScreen(self.services))
        else:
            self.exit(return_code=1)

    def _after_late_setup(self, saved: bool | None) -> None:
        if not saved:
            self.exit(return_code=1)
            return
        session = self.session  # back to it: the provider chosen may name another model
        if session is not None:
            session.refresh_status()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, INPUT_EVENTS):
            self.last_input = time.monotonic()
        await super().on_event(event)

    def _compact_when_idle(self) -> None:
        heap = self.heap
        session = self.session
        if heap is None or (session is not None and (session.busy or session.rendering)):
            return
        if time.monotonic() - self.last_input >= IDLE_SECONDS and heap.growth > IDLE_GROWTH:
            heap.compact()

    def compact_if_due(self) -> None:
        """Between two model requests: compact if the frozen heap grew past its bound
        (the stall hides in the wait for the model)."""
        if self.heap is not None and self.heap.due():
            self.heap.compact()

    @property
    def session(self) -> SessionScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, SessionScreen):
                return screen
        return None


def run_app(services: AppServices) -> int:
    """Run the full-screen app until the user quits; returns the exit code."""
    setup_file_logging(services.config_home)
    heap = HeapPolicy()
    heap.install()  # full GC passes scan only what is new (see gc_policy)
    app = ReasonixApp(services)
    app.heap = heap
    try:
        result = app.run()
    except Exception:  # never dump a traceback over the user's terminal
        log.exception("the TUI crashed")
        return 1
    if app.session_id:
        print(continue_hint(app.session_id, newest=_is_newest(services, app.session_id)))
    if app.return_code not in (None, 0):
        return app.return_code
    return result if isinstance(result, int) else 0


def continue_hint(session_id: str, *, newest: bool = True) -> str:
    """What the terminal says after the app exits: how to come back to the session.
    ``-c`` only when it opens this session (the folder's newest), else the id."""
    if not newest:
        return f"Session {session_id} saved.\nContinue it with: reasonix -r {session_id}"
    return (
        f"Session {session_id} saved.\n"
        f"Continue it with: reasonix -c   (or: reasonix -r {session_id})"
    )


def _is_newest(services: AppServices, session_id: str) -> bool:
    from reasonix_core.agent.session import newest_session_id

    try:
        newest = newest_session_id(services.config_home / "sessions", services.workspace)
    except OSError:
        return False
    return newest == session_id
