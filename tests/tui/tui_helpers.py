from __future__ import annotations

import time
from collections.abc import Callable

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from reasonix_tui.screens.session import SessionScreen


async def type_text(pilot: Pilot, text: str) -> None:
    for char in text:
        await pilot.press("space" if char == " " else char)


async def send(pilot: Pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def settle(pilot: Pilot) -> None:
    """Let the turn worker finish, then let the screen catch up."""
    for _ in range(3):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            await pilot.pause()
    await pilot.pause()
    await pilot.pause()


def session(pilot: Pilot) -> SessionScreen:
    screen = pilot.app.session  # type: ignore[attr-defined]
    assert isinstance(screen, SessionScreen)
    return screen


async def until(pilot: Pilot, predicate: Callable[[], bool], within: float = 60.0) -> None:
    """Pause until ``predicate()`` holds (layout-driven state: no event to wait on)."""
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await pilot.pause(0.02)
