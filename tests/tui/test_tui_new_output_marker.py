"""The "↓ new output below" line (issue 30 item 7) shows only when output arrived at
the end while the user reads above: not when a dialog opens or closes (the view
resizes), not when a block above is expanded, not after the conversation is replaced
(a rewind, /resume, /new)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tui_helpers import send, session, settle, until

from reasonix_testkit.tui import ScriptedServices, text_steps, tool_steps
from reasonix_tui.app import ReasonixApp
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.services import SessionSummary
from reasonix_tui.widgets.tool_block import ToolBlock
from reasonix_tui.widgets.transcript import NewOutputMarker

LONG = "\n".join(f"line {i}" for i in range(40))


def answer(n: int) -> list:
    return [
        *tool_steps(f"c{n}", "bash", {"command": "ls"}, LONG),
        *text_steps("\n\n".join(f"para {i} of answer {n}" for i in range(30))),
    ]


def app_with(tmp_path: Path, turns: int) -> tuple[ReasonixApp, ScriptedServices]:
    services = ScriptedServices(
        turns=[answer(n) for n in range(turns)],
        workspace=tmp_path / "ws",
        config_home=tmp_path / "home",
        sessions=[SessionSummary(session_id="old-1", title="q", updated=datetime(2025, 1, 1))],
    )
    return ReasonixApp(services, cursor_blink=False), services


async def frames(pilot, count: int = 6) -> None:  # type: ignore[no-untyped-def]
    for _ in range(count):
        await pilot.pause(0.03)


async def test_a_dialog_opening_and_closing_is_not_new_output(tmp_path: Path) -> None:
    app, _ = app_with(tmp_path, 2)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        marker = screen.query_one(NewOutputMarker)
        for n in range(2):
            await send(pilot, f"question {n}")
            await settle(pilot)
        for _ in range(3):
            await pilot.press("pageup")
        await frames(pilot)
        assert transcript.reading_above and not transcript.unseen
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await frames(pilot)
        assert not transcript.unseen
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PickerScreen))
        await frames(pilot)
        assert transcript.reading_above
        assert not transcript.unseen and not marker.has_class("-shown")
        await screen.notice("something new")  # real output at the end still says so
        await until(pilot, lambda: transcript.unseen and marker.has_class("-shown"))


async def test_expanding_a_card_above_is_not_new_output(tmp_path: Path) -> None:
    app, _ = app_with(tmp_path, 1)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await send(pilot, "question")
        await settle(pilot)
        card = screen.query_one(ToolBlock)
        transcript.scroll_to_widget(card, animate=False, top=True)
        transcript.release_anchor()
        await frames(pilot)
        assert transcript.reading_above and not transcript.unseen
        await pilot.click(ToolBlock)
        await until(pilot, lambda: card.expanded)
        await frames(pilot)
        assert transcript.reading_above and not transcript.unseen


async def test_a_replaced_conversation_has_nothing_below(tmp_path: Path) -> None:
    """A chat rewind (or /resume) goes on in another session: the marker the old
    conversation had is gone."""
    app, _ = app_with(tmp_path, 2)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        for n in range(2):
            await send(pilot, f"question {n}")
            await settle(pilot)
        for _ in range(3):
            await pilot.press("pageup")
        await screen.notice("output below")
        await until(pilot, lambda: transcript.unseen)
        assert await screen.continue_session("old-1")
        await frames(pilot)
        assert not transcript.unseen and not transcript.reading_above
        assert not screen.query_one(NewOutputMarker).has_class("-shown")
