"""The prompt cache in the TUI: /cache, the status bar's cache figure, confirmations
that price a cache break before /model, /effort and /compact, and the idle warning
of a resumed session; the real services' previews over a real recorded session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reasonix_core.agent.cache_preview import RebillPreview
from reasonix_core.agent.session import read_request_records
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_testkit import Reply
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.cache import EMPTY, CacheScreen
from reasonix_tui.screens.confirm import ConfirmScreen
from reasonix_tui.widgets.blocks import NoticeBlock
from reasonix_tui.widgets.status_bar import StatusBar
from tests.core.agent_helpers import run_turn, runtime
from tests.tui.tui_helpers import send, session

PEAK = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)  # a Tuesday, 02:00 UTC
PREVIEW = RebillPreview(
    tokens=48_210, cost=0.0071, currency="USD", peak=True, off_peak_at=PEAK.replace(hour=4)
)


def notices(pilot) -> list[str]:
    return [n.text for n in session(pilot).query(NoticeBlock)]


async def test_a_model_switch_that_breaks_the_cache_asks_first(make_app) -> None:
    app, services = make_app(preview=PREVIEW)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model deepseek-v4-pro")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "48,210 cached tokens" in app.screen.body and "off-peak from 04:00 UTC" in (
            app.screen.body
        )
        await pilot.press("n")
        await pilot.pause()
        assert services.model == "deepseek-flash"  # declined: nothing switched
        await send(pilot, "/model deepseek-v4-pro")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert services.model == "deepseek-v4-pro"
    assert services.previews == [("model", "deepseek-v4-pro")] * 2


async def test_effort_and_compact_confirm_too_and_nothing_cached_asks_nothing(make_app) -> None:
    app, services = make_app(preview=PREVIEW)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/effort max")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert services.effort == "max"
        await send(pilot, "/effort max")  # no change: no question
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        await send(pilot, "/compact")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        assert services.compactions == 1
    app, services = make_app()  # no preview: nothing cached yet
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model deepseek-v4-pro")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert services.model == "deepseek-v4-pro"


async def test_an_idle_resumed_session_is_warned_about(make_app) -> None:
    idle = RebillPreview(
        tokens=9_842, cost=0.0014, currency="USD", peak=False, idle=timedelta(hours=3)
    )
    app, _ = make_app(idle=idle)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        warned = [t for t in notices(pilot) if "idle for 3h00m" in t]
        assert warned and "9,842 cached tokens" in warned[0] and "off-peak price" in warned[0]


async def test_the_status_bar_cache_figure_opens_the_cache_view(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        bar = session(pilot).query_one(StatusBar)
        await pilot.click(StatusBar, offset=(2, 1))  # "ctx ...": not the cache figure
        await pilot.pause()
        assert not isinstance(app.screen, CacheScreen)
        start, end = bar._cache_span
        assert end > start
        await pilot.click(StatusBar, offset=(1 + start + 1, 1))  # padding 1, then the figure
        await pilot.pause()
        assert isinstance(app.screen, CacheScreen)
        assert app.screen.report is None
        assert EMPTY in str(app.screen.query_one("#cache Static").render())


@pytest.mark.usefixtures("configured")
async def test_the_real_services_price_a_recorded_session(workspace: Path, home: Path, server):
    server.enqueue(Reply(content="a"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "hello there")
        path = rt.agent.session.path
    prompt = read_request_records(path)[0]["prompt_tokens"]

    fresh = EngineServices(workspace, home=home, clock=lambda: PEAK)
    assert fresh.new_runner(FailClosedApprover()).rebill_preview("model") is None

    services = EngineServices(workspace, home=home, continue_last=True, clock=lambda: PEAK)
    runner = services.new_runner(FailClosedApprover())
    switch = runner.rebill_preview("model", "fixture/deepseek-v4-pro")
    assert switch is not None and switch.tokens == prompt
    assert switch.peak is True and switch.off_peak_at == PEAK.replace(hour=4)
    assert switch.cost == pytest.approx(prompt * (1.32 - 0.044) / 1e6)
    compact = runner.rebill_preview("compact")
    assert compact is not None and 0 < compact.tokens < prompt  # the system prompt stays
    report = runner.cache_report()
    assert report is not None and [r.request for r in report.requests] == [1]
    assert runner.idle_preview() is None  # the record is "later" than 02:00

    later = datetime.now(UTC) + timedelta(hours=2)
    idle = EngineServices(workspace, home=home, continue_last=True, clock=lambda: later)
    missed = idle.new_runner(FailClosedApprover()).idle_preview()
    assert missed is not None and missed.tokens == prompt
    assert missed.idle is not None and missed.idle > timedelta(hours=1)


async def test_an_unexplained_break_is_a_warning_in_the_transcript(make_app) -> None:
    from reasonix_core.events import CacheBroken, PrefixChanged
    from reasonix_testkit.tui import text_steps
    from tests.tui.tui_helpers import settle

    unexplained = CacheBroken(request=2, reason="unexplained", first_diff_byte=9, rebilled_tokens=7)
    named = CacheBroken(request=3, reason="model", first_diff_byte=0, rebilled_tokens=5)
    turns = [
        [unexplained, *text_steps("one")],
        [PrefixChanged(reason="model"), named, *text_steps("two")],
        [PrefixChanged(reason="tools"), *text_steps("three")],
    ]
    app, _ = make_app(turns=turns)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "first")
        await settle(pilot)
        await send(pilot, "second")
        await settle(pilot)
        await send(pilot, "third")
        await settle(pilot)
        texts = notices(pilot)
    assert [t for t in texts if "no named reason" in t] == [
        "The prompt cache broke for no named reason: 7 cached tokens billed again "
        "(/cache shows where)."
    ]
    # The user chose the model (and was told the cost): no notice; a change they did
    # not choose is said in plain words, once.
    assert not any("prefix" in t or "model" in t for t in texts), texts
    assert texts.count("The tool list changed: the next request starts a new cache.") == 1


@pytest.mark.usefixtures("configured")
async def test_the_real_services_read_a_running_session_live(workspace: Path, home: Path, server):
    import anyio

    server.enqueue(Reply(content="a"), Reply(content="b"))
    services = EngineServices(workspace, home=home, clock=lambda: PEAK)
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        assert runner.rebill_preview("model", "deepseek-v4-pro") is None  # nothing yet
        [e async for e in runner.run("hello")]
        first = runner.rebill_preview("effort")
        [e async for e in runner.run("again")]
        second = runner.rebill_preview("effort")
        report = runner.cache_report()
        tg.cancel_scope.cancel()
    assert first is not None and second is not None and second.tokens > first.tokens
    assert report is not None and [r.request for r in report.requests] == [1, 2]
    assert report.requests[1].cache_hit_tokens > 0 and not report.by_reason


@pytest.mark.usefixtures("configured")
async def test_the_tui_continues_with_the_model_and_effort_the_session_last_used(
    workspace: Path, home: Path, server
):
    """`reasonix -c` in the TUI used to go back to the configured default model,
    breaking the session's cache on its first request."""
    import anyio

    from reasonix_core import events as ev

    server.enqueue(Reply(content="a"), Reply(content="b"))
    async with runtime(workspace) as rt:
        rt.agent.set_model("deepseek-v4-pro")
        rt.agent.set_effort("max")
        await run_turn(rt, "first")
    services = EngineServices(workspace, home=home, continue_last=True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        events = [e async for e in runner.run("second")]
        tg.cancel_scope.cancel()
    assert (runner.model, runner.effort) == ("deepseek-v4-pro", "max")
    assert (services.model, services.effort) == ("deepseek-v4-pro", "max")
    assert not [e for e in events if isinstance(e, ev.PrefixChanged | ev.CacheBroken)]


@pytest.mark.usefixtures("configured")
async def test_a_switch_to_an_unpriced_model_says_cost_unknown(workspace: Path, home: Path, server):
    """Issue 30 item 8: a model without prices says "cost unknown", never "$0.0000"."""
    from reasonix_tui.screens.cache import rebill_text

    server.enqueue(Reply(content="a"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "hello there")
    services = EngineServices(workspace, home=home, continue_last=True, clock=lambda: PEAK)
    runner = services.new_runner(FailClosedApprover())
    switch = runner.rebill_preview("model", "fixture/mystery-model")
    assert switch is not None and switch.priced is False
    text = rebill_text(switch)
    assert "cost unknown" in text and "$" not in text
    priced = runner.rebill_preview("model", "fixture/deepseek-v4-pro")
    assert priced is not None and priced.priced and "$" in rebill_text(priced)


async def test_the_cache_view_fits_80_columns(make_app) -> None:
    """Issue 30: at 80 columns no line of /cache wraps (the header's "break" did)."""
    from reasonix_core.agent.cache_report import build_report

    turn = {"source": "turn", "completion_tokens": 120}
    records = [
        {
            **turn,
            "request": 1,
            "model": "deepseek-flash",
            "prompt_tokens": 8104,
            "cache_miss_tokens": 8104,
            "cost": 0.001234,
        },
        {
            **turn,
            "request": 2,
            "model": "mystery-model",
            "prompt_tokens": 8304,
            "cache_miss_tokens": 8304,
            "cost": 0.0,
            "break": {"reason": "model", "rebilled_tokens": 8104, "first_diff_byte": 0},
        },
        {
            **turn,
            "request": 3,
            "model": "deepseek-flash",
            "prompt_tokens": 8504,
            "cache_hit_tokens": 8104,
            "cache_miss_tokens": 400,
            "cost": 0.000434,
        },
    ]
    report = build_report("0123456789abcdef", records)
    app, _ = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(CacheScreen(report))
        await pilot.pause()
        body = app.screen.query_one("#cache Static")
        text = str(body.render())
        width = body.content_region.width
        assert width > 0
        longest = max(len(line) for line in text.splitlines())
        assert longest <= width, (longest, width)
