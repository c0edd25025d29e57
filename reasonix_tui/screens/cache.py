"""The ``/cache`` view (also opened by clicking the status bar's cache figure), and
the words for what an action will re-bill from the prompt cache."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from reasonix_tui import format as fmt
from reasonix_tui.screens.overlay import DialogBox, DockedOverlay

if TYPE_CHECKING:
    from reasonix_core.agent.cache_preview import RebillPreview
    from reasonix_core.agent.cache_report import CacheReport

EMPTY = "No billed requests in this session yet: the cache account starts with the first."


def rebill_text(preview: RebillPreview) -> str:
    """'about N cached tokens are billed again, about $C now (peak price; off-peak
    from 10:00 UTC)'."""
    if not preview.priced:
        return f"about {preview.tokens:,} cached tokens are billed again, cost unknown"
    price = ""
    if preview.peak is True:
        price = " (peak price"
        if preview.off_peak_at is not None:
            price += f"; off-peak from {preview.off_peak_at:%H:%M} UTC"
        price += ")"
    elif preview.peak is False:
        price = " (off-peak price)"
    return (
        f"about {preview.tokens:,} cached tokens are billed again, "
        f"about {fmt.cost(preview.cost, preview.currency)} now{price}"
    )


def idle_text(preview: RebillPreview) -> str:
    idle = fmt.duration(preview.idle.total_seconds()) if preview.idle else "long"
    return (
        f"This session was idle for {idle}, longer than the provider keeps its prompt "
        f"cache: the first request will miss; {rebill_text(preview)}."
    )


class CacheScreen(DockedOverlay[None]):
    BODY_SHARE = 0.6

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "close", "Close", show=False)
    ]

    def __init__(self, report: CacheReport | None) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        from reasonix_core.agent.cache_report import render_text

        report = self.report
        text = render_text(report) if report is not None and report.requests else EMPTY
        with DialogBox(id="dialog"):
            yield Static("Prompt cache", id="title")
            with VerticalScroll(id="cache", classes="body"):
                yield Static(text.rstrip("\n"), markup=False)
            yield Static("Esc close · reasonix cache --json for scripts", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)
