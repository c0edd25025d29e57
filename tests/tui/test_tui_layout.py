"""Layout at any size (issue 30, item 6): the status bar never wraps; /help and the
/ menu keep their two columns; the Shift+Tab toast covers neither the composer nor
the status bar; the welcome box lines up with the composer; a docked dialog leaves
no answer blank above it."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from tui_helpers import send, session, type_text, until

from reasonix_testkit.tui import text_steps
from reasonix_tui.screens.help import HelpScreen
from reasonix_tui.screens.overlay import DockedOverlay
from reasonix_tui.widgets.assistant_block import AnswerSegment
from reasonix_tui.widgets.blocks import UserBlock
from reasonix_tui.widgets.status_bar import StatusBar


@pytest.mark.parametrize("width", [40, 60, 80, 140])
async def test_the_status_bar_never_wraps(make_app, width) -> None:
    app, _ = make_app(model="deepseek-v4-pro-with-a-long-name", effort="high")
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        bar = session(pilot).query_one(StatusBar)
        bar.update_state(
            queued=3,
            hint="preparing write_file… and a long hint that goes on and on",
            budget_left="$1.20",
            context_tokens=123_456,
            prompt_tokens=200_000,
            cache_hit_tokens=150_000,
            last_cache_pct=97.0,
            cost=1.2345,
        )
        await pilot.pause()
        lines = bar.render().plain.split("\n")
        assert len(lines) == 2
        room = bar.content_size.width
        assert all(len(line) <= room for line in lines), lines
        assert lines[0].startswith("● ask") and lines[1].startswith("ctx ")
        if width >= 80:
            assert "deepseek-v4-pro-with-a-long-name" in lines[0]
        if width >= 140:
            assert "(avg 75%)" in lines[1] and "high" in lines[0]


# ---- /help and the / menu: two columns at any width ------------------------------


def shown_lines(widget) -> list[str]:  # type: ignore[no-untyped-def]
    """The text a widget draws, line by line (all of it, scrolled or not)."""
    width, height = widget.size
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


def description_starts(lines: list[str], names: list[str]) -> tuple[int, list[int]]:
    """The column the descriptions start at (from the first short name's line), and the
    column every other line of text starts at."""
    column = -1
    starts = []
    for line in lines:
        text = line.lstrip()
        if not text:
            continue
        start = len(line) - len(text)
        name = next((n for n in names if text.startswith(n + " ")), None)
        if name is not None and column < 0 and len(text) > len(name) + 3:
            column = start + len(name) + (len(text[len(name) :]) - len(text[len(name) :].lstrip()))
        starts.append(start)
    return column, starts


@pytest.mark.parametrize("width", [60, 80, 140])
async def test_help_descriptions_hang_under_their_column(make_app, width) -> None:
    app, _ = make_app()
    async with app.run_test(size=(width, 24)) as pilot:
        await session(pilot).handle_input("/help")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        body = app.screen.query_one("#help Static")
        lines = shown_lines(body)
        text = "\n".join(lines)
        assert "Commands" in text and "Keys" in text
        names = ["/help", "/new", "Enter", "Esc"]
        column, starts = description_starts(lines, names)
        assert column > 0
        # Every line is a heading (0), a name (2) or a description's (hanging) line.
        assert set(starts) <= {0, 2, column}, text
        assert max(len(line) for line in lines) <= body.size.width
        # The long /goal usage takes a line of its own; its description hangs under
        # the column like every other one.
        goal = next(i for i, line in enumerate(lines) if line.lstrip().startswith("/goal <"))
        assert lines[goal + 1].startswith(" " * column) and lines[goal + 1][column] != " "
        # The hint stays on screen under the scrolling list.
        hint = app.screen.query_one(".hint")
        assert app.screen.region.contains_region(hint.region), hint.region


@pytest.mark.parametrize("width", [60, 80, 140])
async def test_the_slash_menu_keeps_its_columns(make_app, width) -> None:
    app, _ = make_app()
    async with app.run_test(size=(width, 30)) as pilot:
        screen = session(pilot)
        for query in ("/", "/g", "/c"):
            screen.composer.clear()
            await type_text(pilot, query)
            await until(pilot, lambda: screen.menu.is_open and screen.menu.size.width > 0)
            await pilot.pause()
            lines = shown_lines(screen.menu)
            text = "\n".join(lines)
            names = [f"/{item.value}" for item in screen.menu.items if " " not in item.label]
            column, starts = description_starts(lines, names)
            assert column > 0, text
            assert set(starts) <= {1, column}, text  # the menu's padding, or the column
            assert max(len(line) for line in lines) <= screen.menu.size.width
            if query == "/g":
                goal = next(i for i, line in enumerate(lines) if "/goal <objective>" in line)
                assert lines[goal + 1].startswith(" " * column), text


# ---- the Shift+Tab toast --------------------------------------------------------


def toasts(pilot) -> list:  # type: ignore[no-untyped-def]
    return [t for t in pilot.app.screen.query("Toast") if t.region]


@pytest.mark.parametrize("size", [(80, 24), (140, 40), (60, 24)])
async def test_the_mode_toast_covers_neither_composer_nor_status(make_app, size) -> None:
    app, _ = make_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        screen = session(pilot)
        await pilot.press("shift+tab")
        await until(pilot, lambda: len(toasts(pilot)) == 1)
        await pilot.pause()
        covered = [screen.composer.region, screen.status.region]
        for toast in toasts(pilot):
            assert not any(toast.region.overlaps(r) for r in covered), toast.region
        # A second press replaces the toast rather than stacking another on it.
        await pilot.press("shift+tab")
        await until(
            pilot, lambda: "plan" in str(toasts(pilot)[0].render()) if toasts(pilot) else False
        )
        await pilot.pause()
        assert len(toasts(pilot)) == 1
        # Pressed twice in a row (ask, then auto): one toast, for the mode reached.
        await pilot.press("shift+tab", "shift+tab")
        await until(
            pilot, lambda: "auto:" in str(toasts(pilot)[0].render()) if toasts(pilot) else False
        )
        await pilot.pause(0.5)
        assert len(toasts(pilot)) == 1
        # With the / menu open it rises above the menu too.
        await type_text(pilot, "/")
        await until(pilot, lambda: screen.menu.is_open)
        await pilot.pause()
        await pilot.pause()
        covered.append(screen.menu.region)
        for toast in toasts(pilot):
            assert not any(toast.region.overlaps(r) for r in covered), toast.region


@pytest.mark.parametrize("wait_for_toast", [True, False])
async def test_the_mode_toast_goes_when_a_dialog_opens(make_app, wait_for_toast) -> None:
    """Shift+Tab, then /model within the toast's seconds: the toast (shown, or still
    waiting for the keys to settle) is not drawn over the picker's rows."""
    app, _ = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = session(pilot)
        await pilot.press("shift+tab")
        if wait_for_toast:
            await until(pilot, lambda: len(toasts(pilot)) == 1)
        await type_text(pilot, "/model")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await pilot.pause(0.5)  # past the toast's settle delay
        assert not toasts(pilot)
        assert not list(pilot.app._notifications)
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)
        await pilot.pause(0.3)
        assert not toasts(pilot)


# ---- the welcome box --------------------------------------------------------------


@pytest.mark.parametrize("width", [60, 80, 140, 200])
async def test_the_welcome_box_lines_up_with_the_composer(make_app, width) -> None:
    answer = "\n\n".join(f"Paragraph {n}." for n in range(30))
    app, _ = make_app([text_steps(answer)])
    async with app.run_test(size=(width, 30)) as pilot:
        screen = session(pilot)
        await pilot.pause()
        welcome = screen.query_one(".welcome").region
        composer = screen.composer.region
        assert (welcome.x, welcome.right) == (composer.x, composer.right)
        # Still so once the transcript overflows and shows its scrollbar.
        await send(pilot, "hi")
        await until(pilot, lambda: not screen.busy and not screen.rendering)
        await until(pilot, lambda: screen.transcript.max_scroll_y > 0)
        screen.transcript.scroll_home(animate=False)
        await pilot.pause()
        welcome = screen.query_one(".welcome").region
        assert (welcome.x, welcome.right) == (composer.x, composer.right)
        user = screen.query_one(UserBlock).region
        assert (user.x, user.right) == (composer.x, composer.right)


# ---- a docked dialog over a long answer -----------------------------------------


def parked_in_view(screen) -> list:  # type: ignore[no-untyped-def]
    """Answer segments drawn blank (parked) although they are in the transcript's view."""
    view = screen.transcript.region
    return [
        s for s in screen.transcript.query(AnswerSegment) if s.parked and s.region.overlaps(view)
    ]


async def test_an_answer_is_not_left_blank_above_a_docked_dialog(make_app) -> None:
    """/model at 80×24 right after an answer: the dialog's first layout can take
    nearly the whole screen (the transcript down to a row) before it settles smaller.
    The transcript's parking pass ran after the dialog's refresh, not after its own
    screen's layout, so it parked on the one-row view a segment that the settled view
    shows: blank lines until the next scroll."""
    answer = "\n\n".join(f"Paragraph {n} of the answer." for n in range(20))
    app, _ = make_app([text_steps(answer)])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = session(pilot)
        await send(pilot, "Where are we?")
        await until(pilot, lambda: not screen.busy and not screen.rendering)
        await pilot.pause()
        await pilot.press("ctrl+r")  # a docked dialog: the session screen is below it
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await pilot.pause()
        screen.make_room(23)  # the first, taller layout: one row of transcript left
        await pilot.pause(0.2)
        screen.make_room(8)  # settled
        await until(pilot, lambda: screen.transcript.region.height == 16)
        await pilot.pause(0.3)
        assert not parked_in_view(screen)
        assert screen.transcript.scroll_y == screen.transcript.max_scroll_y  # its end in view
