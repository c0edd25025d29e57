"""Keyboard scrolling, following the output, Alt+Enter (issue 14, items 2-4)."""

from __future__ import annotations

import asyncio

from textual._xterm_parser import XTermParser
from tui_helpers import send, session, settle, type_text, until

from reasonix_testkit.tui import WaitFor, text_steps
from reasonix_tui.widgets.transcript import NewOutputMarker

LONG_ANSWER = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(60))


async def fill(pilot, screen, notes: int = 80) -> None:  # type: ignore[no-untyped-def]
    for n in range(notes):
        await screen.notice(f"note {n}")
    transcript = screen.transcript
    await until(pilot, lambda: transcript.max_scroll_y > 0)
    await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)


async def test_page_and_line_keys_scroll_while_the_composer_keeps_focus(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await fill(pilot, screen)
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        # Until the page scroll has landed (not mid-way), so the next steps count from it.
        await until(
            pilot,
            lambda: transcript.scroll_y < bottom
            and transcript.scroll_y == transcript.scroll_target_y,
        )
        assert screen.composer.has_focus
        paged = transcript.scroll_y
        await pilot.press("ctrl+up")
        await until(pilot, lambda: transcript.scroll_y == paged - 1)
        await pilot.press("shift+up")  # the composer is empty: a line up
        await until(pilot, lambda: transcript.scroll_y == paged - 2)
        await pilot.press("home")
        await until(pilot, lambda: transcript.scroll_y == 0)
        await pilot.press("pagedown")
        await until(pilot, lambda: transcript.scroll_y > 0)
        await pilot.press("end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert screen.composer.has_focus


async def test_home_and_end_edit_the_prompt_when_it_has_text(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await fill(pilot, screen)
        await type_text(pilot, "abc")
        await pilot.press("home")
        await pilot.pause()
        assert screen.composer.cursor_location == (0, 0)
        assert transcript.scroll_y == transcript.max_scroll_y  # still at the bottom
        await pilot.press("ctrl+home")  # always the transcript
        await until(pilot, lambda: transcript.scroll_y == 0)
        assert screen.composer.text == "abc"
        await pilot.press("ctrl+end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)


async def test_sending_jumps_to_the_bottom(make_app) -> None:
    app, _ = make_app([text_steps("done")])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await fill(pilot, screen)
        await pilot.press("ctrl+home")
        await until(pilot, lambda: transcript.scroll_y == 0)
        await send(pilot, "next question")
        await settle(pilot)
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert transcript.scroll_y > 0


async def test_output_below_a_scrolled_up_view_shows_a_marker(make_app) -> None:
    more = asyncio.Event()
    app, _ = make_app([[*text_steps("start "), WaitFor(more), *text_steps(LONG_ANSWER, 200)]])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        marker = screen.query_one(NewOutputMarker)
        await fill(pilot, screen)
        await send(pilot, "stream please")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert not marker.has_class("-shown")
        await pilot.press("pageup")  # the user reads above while it streams
        await until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y)
        where = transcript.scroll_y
        more.set()
        await settle(pilot)
        await until(pilot, lambda: marker.has_class("-shown"))
        assert transcript.scroll_y == where  # not dragged down
        assert "new output" in str(marker.render())
        await pilot.press("ctrl+end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert not marker.has_class("-shown")


async def test_a_followed_stream_shows_no_marker(make_app) -> None:
    app, _ = make_app([text_steps(LONG_ANSWER, 200)])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await fill(pilot, screen)
        await send(pilot, "stream please")
        await settle(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert not screen.query_one(NewOutputMarker).has_class("-shown")


async def test_alt_enter_from_a_terminal_adds_a_line(make_app) -> None:
    app, _ = make_app()  # the app teaches the parser ESC CR
    assert [e.key for e in XTermParser().feed("\x1b\r")] == ["alt+enter"]
    assert [e.key for e in XTermParser().feed("\r")] == ["enter"]
    async with app.run_test(size=(100, 32)) as pilot:
        await type_text(pilot, "one")
        await pilot.press("alt+enter")
        await type_text(pilot, "two")
        composer = session(pilot).composer
        assert composer.text == "one\ntwo"
        assert not session(pilot).busy
