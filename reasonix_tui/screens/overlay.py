"""Base class for modal overlays: centred dialog; the composer hides under it."""

from __future__ import annotations

from typing import TypeVar

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

    def blink(self) -> bool:
        return bool(getattr(self.app, "cursor_blink", True))
