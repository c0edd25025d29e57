"""A yes/no confirmation (``/clear``, ``/compact``, a model switch that breaks the cache)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from reasonix_tui.screens.overlay import DialogBox, DockedOverlay


class ConfirmScreen(DockedOverlay[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with DialogBox(id="dialog"):
            yield Static(self.title_text, id="title", markup=False)
            with VerticalScroll(classes="body"):
                yield Static(self.body, markup=False)
            yield Static("y/Enter confirm · n/Esc cancel", classes="hint")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
