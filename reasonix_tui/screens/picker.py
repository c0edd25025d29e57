"""Type-to-filter picker (models, sessions): dismisses with a value or None.

A picker may also be given ``more``: a coroutine run once it is open (``/model``'s
probe of the provider's ``/models``). What it returns is merged into the list and its
note replaces the muted line under it; the picker never waits for it, and closing
the picker cancels it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from reasonix_tui import format as fmt
from reasonix_tui.screens.overlay import DialogBox, DockedOverlay


@dataclass(frozen=True, slots=True)
class PickerItem:
    value: str
    label: str
    detail: str = ""


# More items and the note to show (what ``more`` found, or why it found nothing).
MoreItems = Callable[[], Awaitable[tuple[list["PickerItem"], str]]]


class PickerScreen(DockedOverlay[str | None]):
    DEFAULT_CSS = """
    PickerScreen .note { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close", show=False),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("down", "move(1)", show=False, priority=True),
    ]

    def __init__(
        self,
        title: str,
        items: list[PickerItem],
        *,
        current: str | None = None,
        empty: str = "",
        more: MoreItems | None = None,
        note: str = "",
        filtered: bool = True,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.items = items
        self.current = current
        self.empty = empty or "Nothing to pick."
        self.shown: list[PickerItem] = []
        self.more = more
        self.note = note
        # A short fixed list (``/effort``'s levels) has no filter field: ↑↓ and Enter.
        self.filtered = filtered

    def compose(self) -> ComposeResult:
        with DialogBox(id="dialog"):
            yield Static(self.title_text, id="title", markup=False)
            if self.filtered:
                yield Input(placeholder="Type to filter…", id="filter")
            yield OptionList(id="options")
            yield Static(self.empty, id="empty", markup=False)
            note = Static(self.note, id="note", markup=False, classes="note")
            note.display = bool(self.note)
            yield note
            yield Static("↑↓ move · Enter pick · Esc close", classes="hint")

    def on_mount(self) -> None:
        if self.filtered:
            field = self.query_one(Input)
            field.cursor_blink = self.blink()
            field.focus()
        else:
            self.query_one(OptionList).focus()
        self._fill("")
        if self.more is not None:
            self.run_worker(self._load_more(self.more), group="more", exit_on_error=False)

    async def _load_more(self, more: MoreItems) -> None:
        items, note = await more()
        known = {i.value for i in self.items}
        self.items = [*self.items, *(i for i in items if i.value not in known)]
        self.note = note
        line = self.query_one("#note", Static)
        line.update(note)
        line.display = bool(note)
        # The highlight stays on what it was on.
        options = self.query_one(OptionList)
        index = options.highlighted
        keep = self.shown[index].value if self.shown and index is not None else None
        self._fill(self.query_one(Input).value if self.filtered else "")
        values = [i.value for i in self.shown]
        if keep in values:
            options.highlighted = values.index(keep)

    def _fill(self, query: str) -> None:
        query = query.lower()
        self.shown = [
            i for i in self.items if query in i.label.lower() or query in i.detail.lower()
        ]
        options = self.query_one(OptionList)
        options.clear_options()
        # Labels come from providers, sessions and the model: escapes spelled out.
        safe = fmt.terminal_safe
        width = max((len(safe(i.label)) for i in self.shown), default=0) + 2
        for item in self.shown:
            mark = "● " if item.value == self.current else "  "
            label, detail = safe(item.label).ljust(width), safe(item.detail)
            options.add_option(Option(Content.assemble(mark, label, (detail, "$text-muted"))))
        options.display = bool(self.shown)
        self.query_one("#empty").display = not self.shown
        if self.shown:
            values = [i.value for i in self.shown]
            options.highlighted = values.index(self.current) if self.current in values else 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        index = self.query_one(OptionList).highlighted
        if self.shown and index is not None:
            self.dismiss(self.shown[index].value)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.shown[event.option_index].value)

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            current = options.highlighted or 0
            options.highlighted = (current + delta) % len(self.shown)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
