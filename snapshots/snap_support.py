"""Helpers shared by the snapshot modules (kept out of conftest to avoid name clashes)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from reasonix_testkit.tui import ScriptedServices
from reasonix_tui.app import ReasonixApp

SIZE = (100, 32)
THEME = "textual-dark"
# A fixed absolute path so the welcome line and @ menu never depend on the checkout.
WORKSPACE = Path("/tmp/reasonix-snapshots/demo-project")


def scripted(**kwargs: object) -> ScriptedServices:
    kwargs.setdefault("workspace", WORKSPACE)
    kwargs.setdefault("config_home", Path("/nonexistent/.reasonix"))
    return ScriptedServices(**kwargs)  # type: ignore[arg-type]


def build_app(services: ScriptedServices) -> ReasonixApp:
    app = ReasonixApp(services, theme=THEME, cursor_blink=False)
    app.animation_level = "none"
    return app


async def type_text(pilot: Pilot, text: str) -> None:
    for char in text:
        await pilot.press("space" if char == " " else char)


async def send(pilot: Pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
