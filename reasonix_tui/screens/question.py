"""A question from the ``ask`` tool: pick one of its options or type an answer.

The options are listed as in any picker; what is typed is not a filter but a
free-text answer (Enter sends it; with nothing typed, Enter picks the highlighted
option). Esc declines to answer, which the tool tells the model as such.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Input, OptionList, Static

from reasonix_tui.screens.overlay import DialogBox
from reasonix_tui.screens.picker import PickerItem, PickerScreen


class QuestionScreen(PickerScreen):
    opens_unasked = True  # keys typed for the composer stay there (overlay.py)

    def __init__(self, question: str, options: list[str]) -> None:
        super().__init__(question, [PickerItem(value=o, label=o) for o in options])

    def compose(self) -> ComposeResult:
        with DialogBox(id="dialog"):
            yield Static(self.title_text, id="title", markup=False)
            yield OptionList(id="options")
            yield Static(self.empty, id="empty", markup=False)
            yield Input(placeholder="…or type your own answer", id="filter")
            yield Static("↑↓ move · Enter pick or send · Esc decline to answer", classes="hint")

    def on_input_changed(self, event: Input.Changed) -> None:
        # Typed text is an answer, not a filter: the picker's handler must not run.
        event.stop()
        event.prevent_default()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.prevent_default()  # the picker's handler is called here, not after
        text = event.value.strip()
        if text:
            self.dismiss(text)
            return
        super().on_input_submitted(event)
