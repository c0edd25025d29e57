"""Messages that said the wrong thing (issue 14, item 9)."""

from __future__ import annotations

from tui_helpers import send, session, settle, until

from reasonix_core.events import (
    CompactionFinished,
    CompactionStarted,
    Notice,
    TurnFailed,
    TurnFinished,
)
from reasonix_testkit.tui import text_steps
from reasonix_tui.screens.confirm import ConfirmScreen
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.widgets.blocks import NoticeBlock


def notices(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in session(pilot).query(NoticeBlock)]


async def test_a_provider_error_names_its_status_once(make_app) -> None:
    app, _ = make_app([[TurnFailed(error="HTTP 400: bad request body", status=400)]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        assert "Turn failed: HTTP 400: bad request body" in notices(pilot)


async def test_an_output_limit_stop_shows_one_notice(make_app) -> None:
    cut = "the answer was cut at the output token limit"
    app, _ = make_app(
        [
            [
                *text_steps("partial"),
                Notice(level="warning", text=cut),
                TurnFinished(stop_reason="length"),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        assert [t for t in notices(pilot) if "limit" in t] == [cut]


async def test_nothing_to_compact_is_not_a_failure(make_app) -> None:
    app, _ = make_app(
        [
            [
                CompactionStarted(reason="manual"),
                Notice(level="warning", text="nothing to compact: the history is too short"),
                CompactionFinished(reason="manual", ok=False),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        shown = notices(pilot)
        assert "nothing to compact: the history is too short" in shown
        assert not any("failed" in t.lower() for t in shown)


async def test_the_gauge_shows_the_size_after_a_compaction(make_app) -> None:
    app, _ = make_app(
        [
            [
                CompactionStarted(reason="manual"),
                CompactionFinished(reason="manual", tokens_after=1234),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        session(pilot).status.update_state(context_tokens=90_000)
        await send(pilot, "go")
        await settle(pilot)
        assert session(pilot).status.state.context_tokens == 1234


async def test_the_model_picker_marks_the_current_model(make_app) -> None:
    app, _ = make_app(
        model="deepseek-flash", model_names=["fixture/deepseek-flash", "fixture/deepseek-v4-pro"]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        assert pilot.app.screen.current == "fixture/deepseek-flash"
        await pilot.press("enter")  # the highlighted one: the current model
        await until(pilot, lambda: "Already using deepseek-flash." in notices(pilot))
        assert not any("cache restarts" in t for t in notices(pilot))


async def test_shift_tab_says_what_the_mode_does(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("shift+tab")
        hint = session(pilot).status.state.hint
        assert hint.startswith("auto: ") and "without asking" in hint


async def test_clear_says_the_session_stays_saved(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/clear")
        await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
        body = pilot.app.screen.body
        assert "stays saved" in body and "not saved" not in body


async def test_compact_passes_its_words_to_the_summary(make_app) -> None:
    app, services = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/compact keep the table")
        await settle(pilot)
        assert services.compaction_focus == ["keep the table"]
