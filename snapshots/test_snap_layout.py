"""Layout at the sizes people use (issue 30, item 6), at 60×24, 80×24 and 140×40:
/help and the / menu in two columns, descriptions hanging under theirs; the Shift+Tab
toast above the composer; the welcome box as wide as the composer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from snap_support import scripted, send, type_text
from test_snap_overlays import until
from textual.pilot import Pilot

SIZES = {"60x24": (60, 24), "80x24": (80, 24), "140x40": (140, 40)}


async def _help(pilot: Pilot) -> None:
    await send(pilot, "/help")


async def _menu(pilot: Pilot) -> None:
    await type_text(pilot, "/")


async def _menu_goal(pilot: Pilot) -> None:
    await type_text(pilot, "/g")  # /goal's long usage on a line of its own


async def _mode_toast(pilot: Pilot) -> None:
    await pilot.press("shift+tab", "shift+tab")  # ask -> auto -> plan: one toast
    await until(pilot, lambda: bool(pilot.app.screen.query("Toast")))
    await pilot.pause(0.2)


async def _welcome(pilot: Pilot) -> None:
    await pilot.pause()


SCREENS: dict[str, Callable[[Pilot], Awaitable[None]]] = {
    "help": _help,
    "slash_menu": _menu,
    "slash_menu_goal": _menu_goal,
    "mode_toast": _mode_toast,
    "welcome": _welcome,
}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_layout(snap, screen: str, size: str) -> None:
    assert snap(scripted(), SCREENS[screen], size=SIZES[size])
