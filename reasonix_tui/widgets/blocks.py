"""Small transcript blocks: user turns and inline notices."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

from reasonix_tui import format as fmt

NoticeLevel = Literal["info", "warning", "error"]


class UserBlock(Static):
    DEFAULT_CSS = """
    UserBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $boost;
        color: $text;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Content(fmt.terminal_safe(text)), markup=False)
        self.text = text


class NoticeBlock(Static):
    DEFAULT_CSS = """
    NoticeBlock {
        height: auto;
        padding: 0 1;
        color: $text-muted;
        &.-warning { color: $text-warning; }
        &.-error { color: $text-error; border-left: thick $error; }
    }
    """

    def __init__(self, text: str, level: NoticeLevel = "info") -> None:
        icon = {"info": "·", "warning": "!", "error": "✗"}[level]
        shown = Content(f"{icon} {fmt.terminal_safe(text)}")  # a provider's error text too
        super().__init__(shown, classes=f"-{level}", markup=False)
        self.text = text
        self.level = level
