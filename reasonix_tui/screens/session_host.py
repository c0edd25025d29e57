"""What slash commands, the rewind flow and the transcript keys see of the session screen.

A protocol, so the modules that act on the screen never import it back: the
screen imports them, and they name only this.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from textual.notifications import SeverityLevel
    from textual.worker import Worker

    from reasonix_core.events import Event
    from reasonix_tui.approver import TuiApprover
    from reasonix_tui.commands import CommandRegistry
    from reasonix_tui.services import AppServices, SessionHandle
    from reasonix_tui.widgets.blocks import NoticeLevel
    from reasonix_tui.widgets.completion_menu import CompletionMenu
    from reasonix_tui.widgets.composer import Composer
    from reasonix_tui.widgets.status_bar import StatusBar
    from reasonix_tui.widgets.transcript import Transcript


class SessionHost(Protocol):
    services: AppServices
    registry: CommandRegistry
    approver: TuiApprover
    runner: SessionHandle
    queue: list[str]
    approval_lock: asyncio.Lock  # one dialog at a time (dialog_requests.py)

    @property
    def app(self) -> Any: ...  # textual types it as a descriptor; the App

    @property
    def transcript(self) -> Transcript: ...

    @property
    def composer(self) -> Composer: ...

    @property
    def menu(self) -> CompletionMenu: ...

    @property
    def status(self) -> StatusBar: ...

    async def notice(self, text: str, level: NoticeLevel = "info") -> None: ...

    def notify(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information"
    ) -> None: ...

    def refresh_status(self) -> None: ...

    async def welcome(self) -> None: ...

    async def warn_if_idle(self) -> None: ...

    async def start_turn(self, display: str, prompt: str) -> None: ...

    def run_events(self, events: AsyncIterator[Event]) -> None: ...

    def cancel_turn(self) -> None: ...

    async def continue_session(self, session_id: str) -> bool: ...

    def show_saved_session(self, note: str = "") -> Worker[None]: ...
