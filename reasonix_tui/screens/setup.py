"""First run without an API key: choose the provider (the configured one or a
preset), give its key (masked) when it needs one, save, continue. ``/login`` is the
key step alone, for the current provider."""

from __future__ import annotations

import logging
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from reasonix_tui.screens.overlay import DialogBox, KeepsTranscriptInView
from reasonix_tui.services import ApiKeyInfo, AppServices, ProviderChoice

log = logging.getLogger(__name__)


CHOOSE = (
    "Choose the provider to talk to; local servers need no key. "
    "More later with: reasonix setup"
)
CUSTOM_LABEL = "Custom endpoint"
CUSTOM_NOTE = "your base URL"  # short: it must fit the key column at 80 columns
ASK_URL = (
    "The base URL of an OpenAI-compatible endpoint, e.g. https://llm.example.com/v1 "
    "(its models are listed from it)."
)
# Printed after Esc on the first-run list: the app quits with nothing configured.
CONFIGURE_LATER = (
    "No provider configured yet. Run reasonix again to choose one, or reasonix setup "
    "to list and add providers (docs/CONFIG.md)."
)


def intro(info: ApiKeyInfo, replacing: bool, endpoint: str = "") -> str:
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
    if endpoint:
        lines.append(f"Endpoint: {endpoint}")
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
        & #providers {
            height: auto;
            max-height: 12;
            border: none;
            background: $surface;
            &:focus { border: none; }
        }
        & #endpoint { color: $text-muted; }
        & #error { color: $text-error; height: auto; }
        & .hint { color: $text-muted; margin-top: 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", show=False, priority=True),
        Binding("ctrl+c", "quit_setup", "Quit", show=False, priority=True),
    ]

    def __init__(self, services: AppServices, *, replacing: bool = False) -> None:
        super().__init__()
        self.services = services
        # /login: replacing the key of a running session (Esc goes back, not out).
        self.replacing = replacing
        # First run: the providers to choose from (none: straight to the key).
        self.choices: list[ProviderChoice] = [] if replacing else services.provider_choices()
        # The choice whose key is being typed; None on the list (or with no choices).
        self.chosen: ProviderChoice | None = None
        # The custom endpoint's steps: "url", then "custom_key" (with ``custom_url``).
        self.step = ""
        self.custom_url = ""
        self.applying = False
        # Textual focuses this once composed: the first key typed must land in the
        # step shown (a hidden widget still counts as focusable to the default "*").
        self.AUTO_FOCUS = "#providers" if self.choices else "#key"  # pyright: ignore[reportAttributeAccessIssue]

    def compose(self) -> ComposeResult:
        with DialogBox(id="dialog"):
            yield Static("API key" if self.replacing else "Welcome to Reasonix", id="title")
            yield Static("", id="intro", markup=False)
            options = OptionList(id="providers")
            options.display = bool(self.choices)
            yield options
            endpoint = Static("", id="endpoint", markup=False)
            endpoint.display = bool(self.choices)
            yield endpoint
            field = Input(placeholder="sk-…", password=True, id="key")
            field.display = not self.choices
            yield field
            yield Static("", id="error", markup=False)
            yield Static("", id="hint", classes="hint")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = bool(getattr(self.app, "cursor_blink", True))
        options = self.query_one(OptionList)
        width = self._label_column()
        for choice in self.choices:
            label = choice.label
            if len(label) > width - 2:
                label = label[: width - 3] + "…"
            options.add_option(
                Option(Content.assemble(label.ljust(width), (choice.note, "$text-muted")))
            )
        if self.choices:
            options.add_option(
                Option(Content.assemble(CUSTOM_LABEL.ljust(width), (CUSTOM_NOTE, "$text-muted")))
            )
        if self.choices:
            self._show_choices()
        else:
            self._ask_key(None)

    def _label_column(self) -> int:
        """The width of the label column: the longest label, unless a row would then not
        fit the dialog (at 80 columns): a row that wraps puts its note on a line of its
        own, and the list no longer fits the screen. Longer labels are cut instead."""
        longest = max((len(c.label) for c in self.choices), default=0) + 2
        # The dialog (90%, at most 80 wide) less its border and padding (6), the
        # options' padding (2) and, with more options than the list shows, a scrollbar.
        room = min(self.app.size.width * 9 // 10, 80) - 8
        if len(self.choices) + 1 > 12:
            room -= 2
        note = max((len(c.note) for c in self.choices), default=0)
        return max(min(longest, room - max(note, len(CUSTOM_NOTE))), 12)

    def _show_choices(self) -> None:
        self.chosen = None
        self.step = ""
        self.query_one("#intro", Static).update(CHOOSE)
        self.query_one("#error", Static).update("")
        self.query_one(Input).display = False
        options = self.query_one(OptionList)
        options.display = True
        options.highlighted = options.highlighted or 0
        self._show_endpoint(options.highlighted)
        self.query_one("#endpoint").display = True
        options.focus()
        self.query_one("#hint", Static).update("↑↓ move · Enter choose · Esc quit")

    def _ask_key(self, choice: ProviderChoice | None) -> None:
        self.chosen = choice
        info = choice.key_info if choice is not None else None
        text = (
            intro(info, self.replacing, choice.endpoint)
            if choice is not None and info is not None
            else intro(self.services.api_key_info(), self.replacing)
        )
        # Names from the config (a trusted project's too): escapes shown, never sent.
        from reasonix_core.permission.summary import visible  # off the first frame's path

        self.query_one("#intro", Static).update(visible(text))
        self.query_one("#error", Static).update("")
        self.query_one(OptionList).display = False
        self.query_one("#endpoint").display = False
        field = self.query_one(Input)
        field.value = ""
        field.display = True
        field.focus()
        leave = "Esc back" if self.choices else ("Esc cancel" if self.replacing else "Esc quit")
        self.query_one("#hint", Static).update(f"Enter save and continue · {leave}")

    def _show_endpoint(self, index: int | None) -> None:
        if index is not None and 0 <= index < len(self.choices):
            self.query_one("#endpoint", Static).update(f"Endpoint: {self.choices[index].endpoint}")
        elif index == len(self.choices):
            self.query_one("#endpoint", Static).update("Endpoint: the base URL you give next")

    def _ask_custom(self, step: str) -> None:
        """The custom endpoint's two steps: its base URL, then its key (may be empty)."""
        self.step = step
        self.chosen = None
        if step == "url":
            text = ASK_URL
        else:
            from reasonix_core.permission.summary import visible

            text = visible(
                f"The API key for {self.custom_url}, if it needs one (Enter with none: "
                "no key). It is stored in your Reasonix .env (readable only by you)."
            )
        self.query_one("#intro", Static).update(text)
        self.query_one("#error", Static).update("")
        self.query_one(OptionList).display = False
        self.query_one("#endpoint").display = False
        field = self.query_one(Input)
        field.value = self.custom_url if step == "url" else ""
        field.password = step != "url"
        field.placeholder = "https://…/v1" if step == "url" else "sk-… (or nothing)"
        field.display = True
        field.focus()
        self.query_one("#hint", Static).update("Enter continue · Esc back")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_endpoint(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index == len(self.choices):
            self._ask_custom("url")
            return
        choice = self.choices[event.option_index]
        if choice.key_info is None:  # a local server, or its key is already set
            self._apply(choice, None)
        else:
            self._ask_key(choice)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        key = event.value.strip()
        error = self.query_one("#error", Static)
        if self.step == "url":
            from reasonix_core.permission.summary import visible
            from reasonix_core.provider.presets import custom_preset

            try:
                custom_preset(key, needs_key=False)
            except ValueError as exc:
                error.update(visible(f"{exc}"))
                return
            self.custom_url = key
            self._ask_custom("custom_key")
            return
        if self.step == "custom_key":
            self._apply_endpoint(self.custom_url, key or None)
            return
        if not key:
            leave = "Esc to go back" if self.choices else "Esc to quit"
            error.update(f"Please paste a key (or press {leave}).")
            return
        if self.chosen is not None:
            self._apply(self.chosen, key)
            return
        try:
            self.services.save_api_key(key)
        except (OSError, ValueError) as exc:
            log.warning("saving the API key failed: %s", type(exc).__name__)
            error.update(f"Could not save the key: {exc}")
            return
        self.dismiss(True)

    def _apply_endpoint(self, url: str, key: str | None) -> None:
        if self.applying:
            return
        self.applying = True
        self.query_one("#error", Static).update("")
        self.query_one("#hint", Static).update(f"Setting up {url}…")
        self.run_worker(self._use_endpoint(url, key), group="setup", exit_on_error=False)

    async def _use_endpoint(self, url: str, key: str | None) -> None:
        from reasonix_core.permission.summary import visible

        try:
            await self.services.use_endpoint(url, key)
        except (OSError, ValueError) as exc:
            log.warning("setting up a custom endpoint failed: %s", type(exc).__name__)
            self.applying = False
            self._ask_custom("url")
            self.query_one("#error", Static).update(visible(f"Could not use {url}: {exc}"))
            return
        self.dismiss(True)

    def _apply(self, choice: ProviderChoice, key: str | None) -> None:
        if self.applying:
            return
        self.applying = True
        self.query_one("#error", Static).update("")
        self.query_one("#hint", Static).update(f"Setting up {choice.label}…")
        self.run_worker(self._use(choice, key), group="setup", exit_on_error=False)

    async def _use(self, choice: ProviderChoice, key: str | None) -> None:
        try:
            await self.services.use_provider(choice.key, key)
        except (OSError, ValueError) as exc:
            log.warning("setting up %s failed: %s", choice.key, type(exc).__name__)
            self.applying = False
            if self.chosen is None:
                self._show_choices()
            else:
                self._ask_key(self.chosen)
            self.query_one("#error", Static).update(f"Could not use {choice.label}: {exc}")
            return
        self.dismiss(True)

    def action_back(self) -> None:
        if self.applying:
            return
        if self.step == "custom_key":
            self._ask_custom("url")
        elif (self.chosen is not None or self.step) and self.choices:
            self._show_choices()
        else:
            self.action_quit_setup()

    def action_quit_setup(self) -> None:
        if self.replacing:
            self.dismiss(False)
        else:
            self.app.exit(return_code=1, message=CONFIGURE_LATER)


class LoginScreen(KeepsTranscriptInView, SetupScreen):
    """``/login``: the key step over a running session, docked at the bottom like
    the other dialogs so the conversation stays in view above it (a screen whose
    background is transparent lets the one under it show)."""

    DEFAULT_CSS = """
    LoginScreen {
        align: center bottom;
        background: transparent;
        & > #dialog { width: 100%; max-width: 100%; padding: 0 1; }
        & #title { margin-bottom: 0; }
        & #intro { margin: 1 0; }
        & .hint { margin-top: 0; }
    }
    """

    def __init__(self, services: AppServices) -> None:
        super().__init__(services, replacing=True)
