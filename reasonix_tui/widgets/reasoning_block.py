"""Reasoning: shown live (tail only), then collapsed to "thought for Ns".

A click or Ctrl+O (on the latest such block) expands it."""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from reasonix_tui import format as fmt

LIVE_TAIL_CHARS = 480
FLUSH_SECONDS = 0.05
# A live reasoning this short and quick ("Ask.", "Done.") says nothing a "thought"
# line would be worth: it makes no line (its text stays in the session file). A
# resumed session's reasoning has no duration and is shown as saved.
TRIVIAL_CHARS = 20
TRIVIAL_SECONDS = 1.0


def is_trivial(text: str, seconds: float) -> bool:
    """Under TRIVIAL_CHARS characters and under TRIVIAL_SECONDS."""
    return len(text.strip()) < TRIVIAL_CHARS and seconds < TRIVIAL_SECONDS


class ReasoningBlock(Widget):
    DEFAULT_CSS = """
    ReasoningBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        & > .header { color: $text-muted; text-style: italic; }
        & > .body {
            color: $text-muted;
            text-style: italic;
            padding-left: 2;
            max-height: 6;
        }
        &.-done > .body { display: none; max-height: 100%; }
        &.-done.-expanded > .body { display: block; }
    }
    """

    def __init__(self, started: datetime) -> None:
        super().__init__()
        self.started = started
        self.seconds: float | None = None
        self.timed = True  # False for a saved session's reasoning: its duration is not kept
        self._parts: list[str] = []
        self._flush_scheduled = False

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def compose(self) -> ComposeResult:
        yield Static("thinking…", classes="header", markup=False)
        yield Static("", classes="body", markup=False)

    def append(self, fragment: str) -> None:
        self._parts.append(fragment)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(FLUSH_SECONDS, self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self.seconds is None:
            text = self.text
            tail = text[-LIVE_TAIL_CHARS:]
            if len(text) > LIVE_TAIL_CHARS:
                tail = "…" + tail.split("\n", 1)[-1] if "\n" in tail else "…" + tail
            self.query_one(".body", Static).update(Content(fmt.terminal_safe(tail.strip())))

    def finish(self, now: datetime) -> None:
        if self.seconds is not None:
            return
        self.seconds = (now - self.started).total_seconds()
        self.add_class("-done")
        self.query_one(".body", Static).update(Content(fmt.terminal_safe(self.text.strip())))
        self._set_header()

    def show_saved(self, text: str) -> None:
        """A saved session's reasoning (resume): folded at once, without a duration."""
        self._parts = [text]
        self.timed = False
        self.finish(self.started)

    def absorb(self, later: ReasoningBlock) -> None:
        """Fold a later finished reasoning of the same turn into this one (its text
        under this one's, its time added): a turn shows one "thought" line."""
        self._parts += ["\n\n", later.text.strip()]
        if self.seconds is not None and later.seconds is not None:
            self.seconds += later.seconds
        self.query_one(".body", Static).update(Content(fmt.terminal_safe(self.text.strip())))
        self._set_header()

    def _set_header(self) -> None:
        arrow = "▾" if self.has_class("-expanded") else "▸"
        took = f" for {fmt.duration(self.seconds or 0)}" if self.timed else ""
        label = f"{arrow} thought{took}"
        self.query_one(".header", Static).update(Content(label))

    @property
    def trivial(self) -> bool:
        return self.timed and self.seconds is not None and is_trivial(self.text, self.seconds)

    @property
    def expandable(self) -> bool:
        """Done and with something to show (Ctrl+O picks the latest such block)."""
        return self.seconds is not None and bool(self.text.strip())

    @property
    def expanded(self) -> bool:
        return self.has_class("-expanded")

    def toggle(self) -> None:
        if self.seconds is not None:
            self.toggle_class("-expanded")
            self._set_header()

    def on_click(self) -> None:
        self.toggle()
