"""Key sequences Textual does not tell apart on its own.

Without the kitty keyboard protocol (which Textual asks for and most terminals
ignore), a terminal sends Alt+Enter as ESC CR; Textual drops the ESC and
reads plain Enter, so Alt+Enter sent the prompt instead of adding a line.
Registering the sequence makes it ``alt+enter``. Shift+Enter cannot be told
apart from Enter in such terminals (both send CR): it adds a line only where
the terminal speaks the kitty protocol (kitty, WezTerm, foot, Ghostty, iTerm2
with the option on); Alt+Enter and Ctrl+J work everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

ALT_ENTER = "\x1b\r"


@dataclass(frozen=True, slots=True)
class _Key:
    """Stands for a ``textual.keys.Keys`` member (the parser reads its ``value``)."""

    value: str


def register() -> None:
    """Teach Textual's input parser ESC CR = Alt+Enter (idempotent)."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    ANSI_SEQUENCES_KEYS[ALT_ENTER] = (_Key("alt+enter"),)  # type: ignore[index]
