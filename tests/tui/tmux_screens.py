"""Reading a tmux pane's screen for the tmux tests: poll until a condition holds (a
generous deadline, returning as soon as it does), and split the screen at a dialog."""

from __future__ import annotations

import time
from collections.abc import Callable

from tmux_session import TmuxPane


def wait_until(
    pane: TmuxPane, holds: Callable[[str], bool], what: str, timeout: float = 60.0
) -> str:
    """The first screen ``holds`` accepts; fails with ``what`` and the last screen."""
    deadline = time.monotonic() + timeout
    screen = pane.screen()
    while not holds(screen):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}; last screen:\n{screen}")
        time.sleep(0.2)
        screen = pane.screen()
    return screen


def above(screen: str, marker: str) -> str:
    """The screen's lines above the first line holding ``marker`` ("" without one)."""
    lines = screen.splitlines()
    top = next((i for i, line in enumerate(lines) if marker in line), None)
    return "\n".join(lines[:top]) if top is not None else ""


def docked_in_view(lead_in: str, title: str, *pinned: str) -> Callable[[str], bool]:
    """A screen showing the dialog titled ``title`` with ``lead_in`` (the transcript)
    drawn above it and every ``pinned`` text (choices, key hints) on screen."""

    def holds(screen: str) -> bool:
        return lead_in in above(screen, title) and all(text in screen for text in pinned)

    return holds
