"""The ask tool's question dialog: options, a free-text answer, Esc declines (issue 14, item 6)."""

from __future__ import annotations

import asyncio

from tui_helpers import session, type_text, until

from reasonix_core.permission.approver import Question, QuestionAnswer
from reasonix_tui.screens.question import QuestionScreen

QUESTIONS = [Question(question="Which database?", options=("sqlite", "postgres"))]


async def ask(pilot):  # type: ignore[no-untyped-def]
    task = asyncio.ensure_future(session(pilot).approver.ask(QUESTIONS))
    await until(pilot, lambda: isinstance(pilot.app.screen, QuestionScreen))
    await until(pilot, lambda: bool(pilot.app.screen.shown))
    return task


async def test_typing_gives_a_free_text_answer(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        task = await ask(pilot)
        assert pilot.app.screen.shown  # the options stay listed while typing
        await type_text(pilot, "duckdb please")
        assert len(pilot.app.screen.shown) == 2
        await pilot.press("enter")
        await until(pilot, task.done)
        assert task.result() == [
            QuestionAnswer(question="Which database?", answers=("duckdb please",))
        ]


async def test_enter_without_text_picks_the_highlighted_option(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        task = await ask(pilot)
        await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, task.done)
        assert task.result() == [QuestionAnswer(question="Which database?", answers=("postgres",))]


async def test_escape_declines(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        task = await ask(pilot)
        await pilot.press("escape")
        await until(pilot, task.done)
        assert task.result() == []  # declined, not "nobody to ask" (None)


async def test_a_question_opening_mid_typing_leaves_the_typed_text_in_the_composer(
    make_app,
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 4: the question's answer field does not take keys typed for the
    composer; Tab hands them to the dialog."""
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await type_text(pilot, "/goal st")
        task = await ask(pilot)
        await type_text(pilot, "atus")
        await pilot.press("enter")
        assert not task.done()
        assert session(pilot).composer.text == "/goal status"
        await pilot.press("tab")
        await type_text(pilot, "duckdb")
        await pilot.press("enter")
        await until(pilot, task.done)
        assert task.result() == [QuestionAnswer(question="Which database?", answers=("duckdb",))]
        assert session(pilot).composer.text == "/goal status"
        assert "atus" not in session(pilot).composer.prompt_history
