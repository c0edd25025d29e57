"""Trust dialog: before the first turn in a folder whose project files would change
risky settings (providers, permissions, sandbox, MCP servers)."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from reasonix_core.trust import ProjectReview
from reasonix_tui.screens.overlay import Overlay

TrustChoice = Literal["trust", "continue", "quit"]
CHOICES: tuple[TrustChoice, ...] = ("trust", "continue", "quit")


class TrustScreen(Overlay[TrustChoice]):
    """Dismisses with "trust", "continue" (without the project's risky settings) or "quit"."""

    DEFAULT_CSS = """
    TrustScreen {
        & > #dialog { border: round $warning; }
        & #title { color: $text-warning; }
        & #settings { height: auto; max-height: 14; color: $text-muted; }
        & OptionList { margin-top: 1; }
        & #keys { margin-top: 0; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1,t", "choose(0)", "Trust this folder", show=False),
        Binding("2,c,escape", "choose(1)", "Continue without these settings", show=False),
        Binding("3,q", "choose(2)", "Quit", show=False),
    ]

    def __init__(self, review: ProjectReview) -> None:
        super().__init__()
        self.review = review

    def compose(self) -> ComposeResult:
        review = self.review
        with Vertical(id="dialog"):
            yield Static(Content("Trust this folder?"), id="title")
            yield Static(
                Content(
                    f"{review.folder}\n"
                    "Its project files would change where your API key goes or what runs "
                    "without asking:"
                )
            )
            with VerticalScroll(id="settings"):
                # Every value is escaped by the review: nothing here can move the cursor.
                yield Static(Content("\n".join(f"• {s}" for s in review.risky)))
            yield OptionList(
                Option(Content.assemble(("1  ", "bold"), "Trust this folder")),
                Option(Content.assemble(("2  ", "bold"), "Continue without these settings")),
                Option(Content.assemble(("3  ", "bold"), "Quit")),
                id="choices",
            )
            yield Static(
                "Trusting applies them now and later; a change to any of them asks again.",
                classes="hint",
            )
            yield Static(
                "1/t trust · 2/c/Esc continue without · 3/q quit", classes="hint", id="keys"
            )

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        # Enter alone must not trust a folder: the safe choice is the highlighted one.
        choices.highlighted = 1
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(event.option_index)

    def action_choose(self, index: int) -> None:
        self.dismiss(CHOICES[index])
