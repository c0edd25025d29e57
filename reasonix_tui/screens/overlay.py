"""Base class for modal overlays: centred dialog; the composer hides under it."""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.screen import ModalScreen

T = TypeVar("T")


class Overlay(ModalScreen[T]):
    """A modal overlay. The session screen hides its composer while one is open."""

    DEFAULT_CSS = """
    Overlay {
        align: center middle;
        background: $background 60%;
        & > #dialog {
            width: 90%;
            max-width: 96;
            height: auto;
            max-height: 90%;
            padding: 1 2;
            border: round $primary;
            background: $surface;
        }
        & #title { text-style: bold; color: $text-primary; margin-bottom: 1; }
        & .hint { color: $text-muted; margin-top: 1; }
        & OptionList {
            height: auto;
            max-height: 12;
            border: none;
            background: $surface;
            &:focus { border: none; }
        }
        & Input { margin-bottom: 1; }
    }
    """

    # Opened while the composer held unsent text: the keys typed next are that text's,
    # not the dialog's ("a" of "/goal" must not allow a tool for the session). They
    # go on into the composer until it is empty, or Tab hands the keys to the dialog.
    # Only dialogs the turn opens on its own (approvals, questions, plans): a picker
    # the user opened takes the keys the user types for it.
    opens_unasked = False
    typing_through = False

    def on_mount(self) -> None:
        self.typing_through = self.opens_unasked and bool(self._composer_text())

    def _composer(self) -> object | None:
        session = getattr(self.app, "session", None)
        return getattr(session, "composer", None)

    def _composer_text(self) -> str:
        return str(getattr(self._composer(), "text", "") or "")

    async def _on_key(self, event: events.Key) -> None:
        if self.typing_through and event.key == "tab":
            self.typing_through = False
            event.stop()
            event.prevent_default()
            return
        if not self.typing_through or not self._composer_text():
            self.typing_through = False
            return
        composer = self._composer()
        if event.is_printable and event.character:
            composer.insert(event.character)  # type: ignore[union-attr]
        elif event.key == "backspace":
            composer.action_delete_left()  # type: ignore[union-attr]
        elif event.key != "enter":
            return  # arrows, Esc, Ctrl+C: the dialog's own
        # Enter while text is on its way: neither sent nor a choice.
        event.stop()
        event.prevent_default()

    def blink(self) -> bool:
        return bool(getattr(self.app, "cursor_blink", True))
