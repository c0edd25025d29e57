"""Every dialog docked at the bottom (issue 30, item 1), at 80×24 and 140×40: the
transcript in view above it, its choices and key hints on screen."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from snap_scripts import (
    approval_turn,
    fleet_approval_turn,
    long_write_turn,
    plan_approval_turn,
    subagent_approval_turn,
    write_scope_turn,
)
from snap_support import scripted, send, type_text
from test_snap_overlays import _cache_report, overlay_shown, until
from test_snap_rewind import _services as rewind_services
from textual.pilot import Pilot

from reasonix_testkit.tui import ScriptedServices, text_steps
from reasonix_tui.services import ModelProbe

SIZES = {"80x24": (80, 24), "140x40": (140, 40)}
LEAD_IN = text_steps("Sure, here is where we are: the greeting changed, the tests pass.")


def _prompt_then(prompt: str) -> Callable[[Pilot], Awaitable[None]]:
    async def run(pilot: Pilot) -> None:
        await send(pilot, prompt)
        await until(pilot, lambda: overlay_shown(pilot))
        await pilot.pause(0.3)

    return run


def _after_a_turn(
    *keys: str, command: str = "", dialog: bool = True
) -> Callable[[Pilot], Awaitable[None]]:
    async def run(pilot: Pilot) -> None:
        await send(pilot, "Where are we?")
        screen = pilot.app.session  # type: ignore[attr-defined]
        await until(pilot, lambda: not screen.busy and not screen.rendering)
        await pilot.pause(0.2)
        if command:
            await type_text(pilot, command)
            await pilot.press("escape")  # the completion menu
            await pilot.press("enter")
        for key in keys:
            await until(pilot, lambda: overlay_shown(pilot) or not command)
            await pilot.press(key)
        if not dialog:
            return
        await until(pilot, lambda: pilot.app.screen is not pilot.app.session)  # type: ignore[attr-defined]
        # The dialog is laid out and the transcript has made room above it.
        await until(pilot, lambda: pilot.app.session.query_one("#dialog-room").display)  # type: ignore[attr-defined]
        await pilot.pause(0.3)

    return run


async def _question(pilot: Pilot) -> None:
    from reasonix_core.permission.approver import Question

    await _after_a_turn(dialog=False)(pilot)
    screen = pilot.app.session  # type: ignore[attr-defined]
    questions = [Question(question="Which database?", options=("sqlite", "postgres"))]
    pilot.app.run_worker(screen.approver.ask(questions))
    await until(pilot, lambda: overlay_shown(pilot))
    await pilot.pause(0.3)


def _cache_preview():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from reasonix_core.agent.cache_preview import RebillPreview

    return RebillPreview(
        tokens=48_210,
        cost=0.0071,
        currency="USD",
        peak=True,
        off_peak_at=datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
    )


def _with_rewind() -> ScriptedServices:
    services = rewind_services()
    services.turns = [LEAD_IN]
    return services


DIALOGS: dict[str, tuple[Callable[[], ScriptedServices], Callable[[Pilot], Awaitable[None]]]] = {
    "approval_long_write": (
        lambda: scripted(turns=[long_write_turn()]),
        _prompt_then("Write the report"),
    ),
    "approval_edit": (lambda: scripted(turns=[approval_turn()]), _prompt_then("Say Hello")),
    "approval_subagent": (
        lambda: scripted(turns=[subagent_approval_turn()]),
        _prompt_then("Fix the backend with a subagent"),
    ),
    "approval_fleet": (
        lambda: scripted(turns=[fleet_approval_turn()]),
        _prompt_then("Rename greet across the app"),
    ),
    "write_scope_grant": (
        lambda: scripted(turns=[write_scope_turn()]),
        _prompt_then("Regenerate the shared bindings"),
    ),
    "plan": (lambda: scripted(turns=[plan_approval_turn()]), _prompt_then("Rename greet")),
    "question": (lambda: scripted(turns=[LEAD_IN]), _question),
    "model_picker": (
        lambda: scripted(turns=[LEAD_IN], probe=ModelProbe(models=("deepseek-flash",))),
        _after_a_turn(command="/model"),
    ),
    "model_switch_confirm": (
        lambda: scripted(turns=[LEAD_IN], preview=_cache_preview()),
        _after_a_turn(command="/model deepseek-v4-pro"),
    ),
    "clear_confirm": (lambda: scripted(turns=[LEAD_IN]), _after_a_turn(command="/clear")),
    "cache": (
        lambda: scripted(turns=[LEAD_IN], report=_cache_report()),
        _after_a_turn(command="/cache"),
    ),
    "login": (lambda: scripted(turns=[LEAD_IN]), _after_a_turn(command="/login")),
    "history_search": (lambda: scripted(turns=[LEAD_IN]), _after_a_turn("ctrl+r")),
    "rewind_picker": (_with_rewind, _after_a_turn(command="/rewind")),
    "rewind_choice": (_with_rewind, _after_a_turn("down", "enter", command="/rewind")),
}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("dialog", list(DIALOGS))
def test_docked(snap, dialog: str, size: str) -> None:
    services, run = DIALOGS[dialog]
    assert snap(services(), run, size=SIZES[size])
