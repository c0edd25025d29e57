"""Input-owned completion menu (slash commands and ``@`` paths) above the composer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.content import Content
from textual.visual import Visual
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from reasonix_tui.widgets.columns import Columns, Row

MenuKind = Literal["slash", "mention"]


@dataclass(frozen=True, slots=True)
class MenuItem:
    value: str  # what gets inserted ("help", "src/")
    label: str  # what is shown ("/help", "src/")
    detail: str = ""
    descend: bool = False  # a directory: completing keeps the menu open


def _prompts(kind: MenuKind, items: list[MenuItem]) -> list[Visual | Content]:
    if kind == "slash":
        # Laid out at the menu's width: one name column, descriptions wrapped under
        # their own column, a long name (a command's argument hint) on its own line.
        column = Columns(
            [
                Row(Content.styled(i.label, "bold"), Content.styled(i.detail, "$text-muted"))
                for i in items
            ]
        )
        return [column.single(index) for index in range(len(items))]
    width = max((len(i.label) for i in items), default=0) + 2
    return [
        Content.assemble((item.label.ljust(width), ""), (item.detail, "$text-muted"))
        for item in items
    ]


class CompletionMenu(OptionList):
    DEFAULT_CSS = """
    CompletionMenu {
        height: auto;
        max-height: 10;
        border: none;
        padding: 0 1;
        background: $surface;
        display: none;
        &.-open { display: block; }
        & > .option-list--option-highlighted { background: $primary 40%; }
    }
    """

    can_focus = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.kind: MenuKind | None = None
        self.items: list[MenuItem] = []

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self, kind: MenuKind, items: list[MenuItem]) -> None:
        self.kind = kind
        self.items = items
        self.clear_options()
        self.add_options([Option(prompt) for prompt in _prompts(kind, items)])
        self.highlighted = 0 if items else None
        self.set_class(bool(items), "-open")

    def close(self) -> None:
        self.kind = None
        self.items = []
        self.remove_class("-open")

    def move(self, delta: int) -> None:
        if not self.items:
            return
        current = self.highlighted or 0
        self.highlighted = (current + delta) % len(self.items)

    @property
    def selected(self) -> MenuItem | None:
        if self.highlighted is None or not self.items:
            return None
        return self.items[self.highlighted]
