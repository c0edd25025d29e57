"""What the TUI needs from the rest of Reasonix, as one small injected protocol.

``ReasonixApp(services)`` receives an :class:`AppServices`; it never builds
agents, reads config or touches the network itself. The real implementation
lives beside the CLI; tests and snapshots use
:class:`reasonix_testkit.tui.ScriptedServices`. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # types only: the first frame needs none of the core
    from reasonix_core.agent.runner import Runner
    from reasonix_core.events import Event
    from reasonix_core.permission.approver import Approver


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    """One saved session as shown by the ``/resume`` picker."""

    session_id: str
    title: str
    updated: datetime
    turns: int = 0
    model: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerView:
    """One MCP server as shown by the ``/mcp`` status screen (already redacted)."""

    name: str
    transport: str  # "stdio", "http", "sse"
    state: str  # "connecting", "ready", "failed", "disabled"
    tools: int = 0
    prompts: int = 0
    resources: int = 0
    reconnects: int = 0
    error_class: str = ""  # e.g. "TimeoutError"; never the raw message


class AppServices(Protocol):
    """Dependencies of the TUI. Every member is cheap unless said otherwise.

    Optional extra member, looked up with ``getattr``: ``async def serve() -> None``.
    When present the app runs it as a worker for its whole life (an owner task
    for long-lived resources) and cancels it on exit.

    Optional: ``async def ready()`` and ``is_ready: bool`` (services still being
    built, :class:`~reasonix_tui.deferred.DeferredServices`). When present the app
    shows the session screen at once, awaits ``ready()`` once that frame is out,
    then starts ``serve()`` and checks :meth:`needs_api_key`; if ``ready()``
    raises, the app exits with code 1 and the launcher reports the error. While
    ``is_ready`` is false the status bar says "starting…".
    """

    workspace: Path
    """Project root: ``@`` completion, custom commands and the title use it."""

    config_home: Path
    """``~/.reasonix`` (or ``$REASONIX_HOME``): user commands and logs live under it."""

    context_window: int
    """Token window of the current model, for the status bar's context gauge."""

    permission_mode: str
    """Current permission mode, read and assigned by the UI (Shift+Tab)."""

    permission_modes: Sequence[str]
    """The Shift+Tab cycle, in order, e.g. ``("ask", "auto", "yolo")``."""

    clock: Callable[[], datetime]
    """Wall clock for elapsed times; frozen in tests and snapshots."""

    def new_runner(self, approver: Approver) -> Runner:
        """Start a fresh session whose tool approvals go to ``approver``."""
        ...

    def resume_runner(self, session_id: str, approver: Approver) -> Runner:
        """Reopen a saved session (raise ``KeyError`` if it is gone)."""
        ...

    def list_sessions(self) -> list[SessionSummary]:
        """Saved sessions, newest first."""
        ...

    def models(self) -> list[str]:
        """Model names offered by the ``/model`` picker."""
        ...

    def set_model(self, model: str) -> None:
        """Switch model for the current and future runners (``ValueError`` if unknown)."""
        ...

    def efforts(self) -> list[str]:
        """Reasoning-effort levels the current model accepts (may be empty)."""
        ...

    def set_effort(self, effort: str) -> None:
        """Set reasoning effort (``ValueError`` if not one of :meth:`efforts`)."""
        ...

    def needs_api_key(self) -> bool:
        """True on first run: the setup screen is shown before the session."""
        ...

    def save_api_key(self, key: str) -> None:
        """Persist the key (``<config_home>/.env``, mode 0600); raise ``OSError`` on failure."""
        ...

    def mcp_status(self) -> list[McpServerView]:
        """Current MCP servers for ``/mcp`` (empty when none are configured)."""
        ...

    def reconnect_mcp(self, name: str) -> None:
        """Ask the MCP host to reconnect one server (returns at once)."""
        ...

    def compact(self, runner: Runner) -> AsyncIterator[Event]:
        """Fold the runner's history now; events go through the turn dispatcher."""
        ...
