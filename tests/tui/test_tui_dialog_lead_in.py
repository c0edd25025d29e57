"""The model's lead-in stays drawn above a docked dialog (issue 30, item 1, audit N1).

At 80×24, once the transcript overflows, a question opened right after its lead-in
("I need a decision first.") left that line blank in about half the tries, until the
dialog closed: the transcript's parking pass ran after the dialog screen's refresh,
before the session screen behind it had laid out its smaller viewport, parked the
lead-in on where it was a frame earlier, and nothing checked it again."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console
from textual.app import App
from tui_helpers import send, session, until

from reasonix_core.events import ToolCallStarted
from reasonix_core.permission.approver import Question
from reasonix_testkit.tui import Call, Step, WaitFor, reasoning_steps, text_steps
from reasonix_tui.screens.question import QuestionScreen

LEAD_IN = "I need a decision first."
TRIES = 6


def drawn(app: App) -> list[str]:
    """The terminal's lines as the app draws them now: the dialog and the session
    screen showing through behind it."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, color_system=None
    )
    compositor = app.screen._compositor  # what the terminal is sent
    console.print(compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()


def settled(app: App) -> bool:
    """The dialog is laid out and the transcript ends above it, at its end."""
    if not isinstance(app.screen, QuestionScreen):
        return False
    screen = app.session  # type: ignore[attr-defined]
    transcript = screen.transcript
    top = app.screen.query_one("#dialog").region.y
    return (
        screen.query_one("#dialog-room").display
        and 0 < transcript.region.bottom <= top
        and transcript.scroll_y == transcript.max_scroll_y
    )


def lead_in_above_dialog(app: App) -> bool:
    lines = drawn(app)
    top = app.screen.query_one("#dialog").region.y
    return any(LEAD_IN in line for line in lines[:top])


def question_turn(app_box: list[App], number: int) -> list[Step]:
    """The ask tool's turn: reasoning, the lead-in, then the question, as the engine
    streams it (the dialog opens the moment the lead-in is written)."""
    answered = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    def ask() -> None:
        async def run() -> None:
            # Three options: the dialog's height that left the lead-in's stale place
            # just outside the parking window at 80×24.
            options = ("SQLite", "Postgres", "MySQL")
            questions = [Question(question="Which database?", options=options)]
            await app_box[0].session.approver.ask(questions)  # type: ignore[attr-defined]
            answered.set()

        tasks.append(asyncio.ensure_future(run()))

    return [
        *reasoning_steps("Ask."),
        *text_steps(LEAD_IN),
        ToolCallStarted(call_id=f"ask-{number}", name="ask", arguments="{}"),
        Call(ask),
        WaitFor(answered),
        *text_steps("Done with ask."),
    ]


async def test_the_lead_in_is_drawn_above_every_question(make_app) -> None:
    app_box: list[App] = []
    echoes = [[*reasoning_steps("Echo."), *text_steps(f"You said: hello {n}")] for n in range(4)]
    questions = [question_turn(app_box, n) for n in range(TRIES)]
    app, _ = make_app([*echoes, *questions])
    app_box.append(app)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = session(pilot)
        for n in range(4):  # the transcript overflows
            await send(pilot, f"hello {n}")
            await until(pilot, lambda: not screen.busy and not screen.rendering)
        for n in range(TRIES):
            await send(pilot, f"ASKME {n}")
            await until(pilot, lambda: settled(pilot.app))
            # The frames that follow the dialog's layout (the parking passes) are done;
            # a lead-in parked by then stayed blank until the dialog closed.
            await pilot.pause(0.5)
            await until(pilot, lambda: lead_in_above_dialog(pilot.app))
            await pilot.press("escape")  # decline: the turn goes on and ends
            await until(pilot, lambda: not screen.busy and not screen.rendering)
