"""Issue 30 item 5, at 80×24 and 140×40: a large paste collapsed to its chip in the
composer and in the transcript, and the ``/effort`` picker (one name per level)."""

from __future__ import annotations

import pytest
from snap_support import scripted, type_text
from test_snap_docked import LEAD_IN, _after_a_turn
from test_snap_overlays import until
from textual import events
from textual.pilot import Pilot

from reasonix_core.efforts import effort_levels
from reasonix_testkit.tui import ScriptedServices, text_steps

SIZES = {"80x24": (80, 24), "140x40": (140, 40)}
LOG = "\n".join(f"2026-12-08 01:{n // 60:02d}:{n % 60:02d} worker-3 retry {n}" for n in range(400))


async def _paste(pilot: Pilot, text: str) -> None:
    composer = pilot.app.session.composer  # type: ignore[attr-defined]
    pilot.app.post_message(events.Paste(text))
    await until(pilot, lambda: "[Pasted text" in composer.text)


async def _paste_in_composer(pilot: Pilot) -> None:
    await type_text(pilot, "Why does the worker keep retrying? ")
    await _paste(pilot, LOG)
    await type_text(pilot, " (from last night)")
    await pilot.pause(0.2)


async def _paste_sent(pilot: Pilot) -> None:
    await _paste_in_composer(pilot)
    await pilot.press("enter")
    screen = pilot.app.session  # type: ignore[attr-defined]
    await until(pilot, lambda: not screen.busy and not screen.rendering)
    await pilot.pause(0.2)


def _effort_services() -> ScriptedServices:
    menu = list(effort_levels("openai", "deepseek"))
    names = [name for level in menu for name in (level.name, *level.aliases)]
    return scripted(turns=[LEAD_IN], effort="high", effort_levels=names, effort_menu=menu)


def _answer() -> ScriptedServices:
    return scripted(turns=[text_steps("The retries start when the queue lease expires.")])


@pytest.mark.parametrize("size", list(SIZES))
def test_paste_collapsed_in_the_composer(snap, size: str) -> None:
    assert snap(scripted(), _paste_in_composer, size=SIZES[size])


@pytest.mark.parametrize("size", list(SIZES))
def test_paste_collapsed_in_the_transcript(snap, size: str) -> None:
    assert snap(_answer(), _paste_sent, size=SIZES[size])


@pytest.mark.parametrize("size", list(SIZES))
def test_effort_picker(snap, size: str) -> None:
    assert snap(_effort_services(), _after_a_turn(command="/effort"), size=SIZES[size])
