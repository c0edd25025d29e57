"""/status shows the effective compaction threshold when the services know it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from tui_helpers import send, session, settle

from reasonix_testkit.tui import ScriptedServices
from reasonix_tui.app import ReasonixApp
from reasonix_tui.widgets.blocks import NoticeBlock


@dataclass
class RatioServices(ScriptedServices):
    compact_ratio: float = 0.7


async def test_status_shows_the_effective_compact_ratio(tmp_path: Path) -> None:
    services = RatioServices(
        workspace=tmp_path, config_home=tmp_path / "home", context_window=100_000
    )
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/status")
        await settle(pilot)
        texts = [str(b.render()) for b in session(pilot).query(NoticeBlock)]
    assert any("compacts at 70% (70k)" in t or "compacts at 70% (70.0k)" in t for t in texts), texts


async def test_status_bar_shows_the_task_budget_left(tmp_path: Path) -> None:
    # Issue 19 item 1: with a task budget set, the bar says what is left of it.
    from reasonix_core.agent.budget import BudgetLimits, BudgetMeter
    from reasonix_core.usage import Usage

    meter = BudgetMeter(BudgetLimits(cost=0.5, tokens=20_000), clock=lambda: 0.0)
    meter.charge(Usage(prompt_tokens=8_000, completion_tokens=2_000), 0.2)
    services = ScriptedServices(
        workspace=tmp_path, config_home=tmp_path / "home", context_window=100_000
    )
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(120, 32)) as pilot:
        screen = session(pilot)
        status = screen.status
        assert "budget" not in str(status.render())  # no budget: nothing shown
        services.budget = meter.left()  # what the engine's services report
        screen._tick()
        await pilot.pause()
        assert "budget $0.30 · 10k tok left" in str(status.render())


async def test_status_bar_shows_the_goal_and_its_state(tmp_path: Path) -> None:
    from reasonix_tui.services import GoalView

    services = ScriptedServices(workspace=tmp_path, config_home=tmp_path / "home")
    app = ReasonixApp(services, cursor_blink=False)
    goal = GoalView(
        objective="Make the parser tests pass without changing the public API at all",
        status="active",
        rounds=2,
        tokens=12_400,
        cost=0.0123,
        armed=True,
    )
    async with app.run_test(size=(120, 32)) as pilot:
        status = session(pilot).status
        status.update_state(mode="plan", goal=goal)
        await pilot.pause()
        line = str(status.render()).splitlines()[0]
        assert line.startswith("● plan")
        assert "goal: Make the parser" in line and "…" in line  # cut to fit the line
        assert "· round 2 · 12.4k tok · $0.0123 · armed" in line
        assert line.rstrip().endswith("deepseek-flash · high")
        status.update_state(goal=replace(goal, status="paused"))
        await pilot.pause()
        assert "$0.0123 · paused" in str(status.render())
        status.update_state(goal=replace(goal, armed=False))
        await pilot.pause()
        assert "· not driven" in str(status.render())


async def test_status_bar_marks_estimated_usage(tmp_path: Path) -> None:
    # Issue 29 item 13: a provider that reported no usage: the figures are ours, marked "~".
    from reasonix_core.events import UsageReported
    from reasonix_core.usage import Usage
    from reasonix_testkit.tui import text_steps

    reported = Usage(prompt_tokens=9_000, cache_miss_tokens=9_000, completion_tokens=500)
    estimated = Usage(
        prompt_tokens=9_000, cache_miss_tokens=9_000, completion_tokens=500, estimated=True
    )
    services = ScriptedServices(
        workspace=tmp_path,
        config_home=tmp_path / "home",
        context_window=100_000,
        turns=[
            [*text_steps("counted"), UsageReported(usage=reported, model="m", cost=0.01)],
            [*text_steps("guessed"), UsageReported(usage=estimated, model="m", cost=0.01)],
        ],
    )
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(120, 32)) as pilot:
        status = session(pilot).status
        await send(pilot, "first")
        await settle(pilot)
        line = str(status.render()).splitlines()[1]
        assert "ctx 9.5k/100k" in line and "~" not in line
        await send(pilot, "second")
        await settle(pilot)
        line = str(status.render()).splitlines()[1]
        assert "ctx ~9.5k/100k" in line and "~$0.02" in line


async def test_a_model_without_prices_says_cost_unknown_before_any_request(make_app) -> None:
    """Issue 30, item 8: never a made-up $0.0000 for a model without prices."""
    from tui_helpers import session

    app, _ = make_app(model="local-model", unpriced_models={"local-model"})
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        rendered = str(session(pilot).status.render())
        assert "cost unknown" in rendered
        assert "$0.0000" not in rendered
