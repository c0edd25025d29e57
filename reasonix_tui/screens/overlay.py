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
        # Runs after the dialog's own on_mount (Textual calls the subclass first): the
        # widget it focused waits, so no filter or answer field takes the typed keys.
        self.typing_through = self.opens_unasked and bool(self._composer_text())
        if self.typing_through:
            self._held_focus = self.focused
            self.set_focus(None)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # A focus the dialog asked for lands later (Widget.focus is deferred): held too.
        if self.typing_through:
            self._held_focus = event.widget
            self.set_focus(None)

    def _composer(self) -> object | None:
        session = getattr(self.app, "session", None)
        return getattr(session, "composer", None)

    def _composer_text(self) -> str:
        return str(getattr(self._composer(), "text", "") or "")

    def _hand_over(self) -> None:
        """The keys are the dialog's from now on."""
        self.typing_through = False
        held = getattr(self, "_held_focus", None)
        if held is not None and held.is_attached:
            self.set_focus(held)
        else:
            self.focus_next()

    async def _on_key(self, event: events.Key) -> None:
        if not self.typing_through:
            return
        if event.key == "tab" or not self._composer_text():
            self._hand_over()
            event.stop()
            event.prevent_default()
            return
        composer = self._composer()
        if event.is_printable and event.character:
            composer.insert(event.character)  # type: ignore[union-attr]
        elif event.key == "backspace":
            composer.action_delete_left()  # type: ignore[union-attr]
            if not self._composer_text():
                self._hand_over()
        elif event.key != "enter":
            return  # arrows, Esc, Ctrl+C: the dialog's own
        # Enter while text is on its way: neither sent nor a choice.
        event.stop()
        event.prevent_default()

    def blink(self) -> bool:
        return bool(getattr(self.app, "cursor_blink", True))
