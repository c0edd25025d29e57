"""First run without an API key: ask for it (masked), save it, continue."""

from __future__ import annotations

import logging
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static

from reasonix_tui.services import ApiKeyInfo, AppServices

log = logging.getLogger(__name__)


def intro(info: ApiKeyInfo, replacing: bool) -> str:
    """What the key is for and where it goes, naming the provider and the variable."""
    first = (
        f"Paste a new API key for {info.provider} ({info.variable}) to replace the current one."
        if replacing
        else f"Reasonix needs an API key for {info.provider} ({info.variable}) to talk to "
        "the model."
    )
    lines = [first]
    if info.signup_url:
        lines.append(f"Create one at {info.signup_url} and paste it below.")
    lines.append(f"It is stored in {info.stored_in} (readable only by you).")
    if info.from_environment:
        lines.append(
            f"{info.variable} is also set in your environment, which wins at the next start."
        )
    return "\n".join(lines)


class SetupScreen(Screen[bool]):
    DEFAULT_CSS = """
    SetupScreen {
        align: center middle;
        & > #dialog {
            width: 90%;
            max-width: 80;
            height: auto;
            padding: 1 2;
            border: round $primary;
            background: $surface;
        }
        & #title { text-style: bold; color: $text-primary; margin-bottom: 1; }
        & #intro { margin-bottom: 1; }
        & #error { color: $text-error; height: auto; }
        & .hint { color: $text-muted; margin-top: 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c,escape", "quit_setup", "Quit", show=False, priority=True)
    ]

    def __init__(self, services: AppServices, *, replacing: bool = False) -> None:
        super().__init__()
        self.services = services
        # /login: replacing the key of a running session (Esc goes back, not out).
        self.replacing = replacing

    def compose(self) -> ComposeResult:
        info = self.services.api_key_info()
        with Vertical(id="dialog"):
            yield Static("API key" if self.replacing else "Welcome to Reasonix", id="title")
            yield Static(intro(info, self.replacing), id="intro", markup=False)
            yield Input(placeholder="sk-…", password=True, id="key")
            yield Static("", id="error", markup=False)
            leave = "Esc cancel" if self.replacing else "Esc quit"
            yield Static(f"Enter save and continue · {leave}", classes="hint")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = bool(getattr(self.app, "cursor_blink", True))
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        key = event.value.strip()
        error = self.query_one("#error", Static)
        if not key:
            error.update("Please paste a key (or press Esc to quit).")
            return
        try:
            self.services.save_api_key(key)
        except (OSError, ValueError) as exc:
            log.warning("saving the API key failed: %s", type(exc).__name__)
            error.update(f"Could not save the key: {exc}")
            return
        self.dismiss(True)

    def action_quit_setup(self) -> None:
        if self.replacing:
            self.dismiss(False)
        else:
            self.app.exit(return_code=1)
