"""First run without an API key: ask for it (masked), save it, continue."""

from __future__ import annotations

import logging
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static

from reasonix_tui.services import AppServices

log = logging.getLogger(__name__)

INTRO = (
    "Reasonix needs a DeepSeek API key to talk to the model.\n"
    "Create one at https://platform.deepseek.com/api_keys and paste it below.\n"
    "It is stored in {path} (readable only by you)."
)


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

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services

    def compose(self) -> ComposeResult:
        path = self.services.config_home / ".env"
        with Vertical(id="dialog"):
            yield Static("Welcome to Reasonix", id="title")
            yield Static(INTRO.format(path=path), id="intro", markup=False)
            yield Input(placeholder="sk-…", password=True, id="key")
            yield Static("", id="error", markup=False)
            yield Static("Enter save and continue · Esc quit", classes="hint")

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
        self.app.exit(return_code=1)
