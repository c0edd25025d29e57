"""``/model`` opens at once with the configured models, merges what the provider's
``/models`` lists (marked discovered) when the probe returns, and says why in a muted
line when it cannot (issue 19, item 10). A model with no known price shows its cost
as unknown."""

from __future__ import annotations

import asyncio

from textual.widgets import OptionList, Static
from tui_helpers import send, session, settle, type_text, until

from reasonix_core.events import UsageReported
from reasonix_core.usage import Usage
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.services import ModelProbe
from reasonix_tui.widgets.blocks import NoticeBlock

LISTED = ("deepseek-flash", "deepseek-v4-pro", "deepseek-v4-flash-exp")


def _options(picker: PickerScreen) -> list[str]:
    options = picker.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def _note(picker: PickerScreen) -> str:
    line = picker.query_one("#note", Static)
    return str(line.render()) if line.display else ""


async def test_the_picker_opens_at_once_and_merges_the_probe(make_app) -> None:
    gate = asyncio.Event()
    app, services = make_app(probe=ModelProbe(models=LISTED), probe_gate=gate)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        # Open before the provider answered: the configured list, and a muted line.
        assert [o.split()[-1] for o in _options(picker)] == ["deepseek-flash", "deepseek-v4-pro"]
        assert _note(picker) == "Asking the provider for its models…"
        gate.set()
        await until(pilot, lambda: "listed by the provider" in _note(picker))
        assert _note(picker) == "3 listed by the provider; 1 not in your config, marked discovered"
        options = _options(picker)
        assert len(options) == 3 and "deepseek-v4-flash-exp" in options[2]
        assert options[2].rstrip().endswith("discovered") and "discovered" not in options[0]
        await type_text(pilot, "exp")
        await pilot.press("enter")
        await until(pilot, lambda: services.model == "deepseek-v4-flash-exp")
        assert session(pilot).status.state.model == "deepseek-v4-flash-exp"


async def test_a_failed_probe_is_a_muted_line_and_the_list_still_works(make_app) -> None:
    app, services = make_app(probe=ModelProbe(error="HTTP 401"))
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        await until(pilot, lambda: _note(picker) == "couldn't list models: HTTP 401")
        assert len(_options(picker)) == 2
        await pilot.press("down", "enter")
        await until(pilot, lambda: services.model == "deepseek-v4-pro")


async def test_a_probe_that_raises_never_crashes_the_app(make_app) -> None:
    app, services = make_app()

    async def broken() -> ModelProbe:
        raise RuntimeError("boom")

    services.probe_models = broken  # type: ignore[method-assign]
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        await until(pilot, lambda: _note(picker) == "couldn't list models: RuntimeError")
        assert app.is_running and len(_options(picker)) == 2


async def test_closing_the_picker_before_the_probe_answers(make_app) -> None:
    gate = asyncio.Event()
    app, services = make_app(probe=ModelProbe(models=LISTED), probe_gate=gate)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is session(pilot))
        gate.set()
        await settle(pilot)
        assert app.is_running and services.model == "deepseek-flash"


async def test_a_model_without_a_price_shows_its_cost_as_unknown(make_app) -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=100, cache_hit_tokens=0)
    priced = UsageReported(usage=usage, model="deepseek-flash", cost=0.25)
    unpriced = UsageReported(usage=usage, model="deepseek-v4-flash-exp", cost=0.0)
    app, services = make_app(
        [[unpriced], [priced]],
        probe=ModelProbe(models=LISTED),
        unpriced_models={"deepseek-v4-flash-exp"},
    )
    async with app.run_test(size=(120, 32)) as pilot:
        await send(pilot, "/model deepseek-v4-flash-exp")
        await until(pilot, lambda: services.model == "deepseek-v4-flash-exp")
        screen = session(pilot)
        await until(pilot, lambda: "no price is known" in screen.query(NoticeBlock).last().text)
        await send(pilot, "hi")
        await settle(pilot)
        assert screen.status.state.unpriced
        assert "· cost unknown" in str(screen.status.render())
        await send(pilot, "again")
        await settle(pilot)
        assert "· $0.2500+?" in str(screen.status.render())


async def test_picking_the_discovered_model_in_use_again_changes_nothing(make_app) -> None:
    # As the engine names them: "provider/model" in the picker, the bare id in use.
    app, services = make_app(
        model_names=["fx/deepseek-flash", "fx/deepseek-v4-pro"],
        probe=ModelProbe(models=tuple(f"fx/{m}" for m in LISTED)),
    )
    switched: list[str] = []

    def set_model(name: str) -> None:
        switched.append(name)
        services.model = name.partition("/")[2]

    services.set_model = set_model  # type: ignore[method-assign]
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/model fx/deepseek-v4-flash-exp")
        await until(pilot, lambda: services.model == "deepseek-v4-flash-exp")
        screen = session(pilot)
        await until(pilot, lambda: "Model switched" in screen.query(NoticeBlock).last().text)
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        await until(pilot, lambda: "listed by the provider" in _note(picker))
        await type_text(pilot, "exp")
        await pilot.press("enter")
        await until(pilot, lambda: "Already using" in screen.query(NoticeBlock).last().text)
        assert screen.query(NoticeBlock).last().text == "Already using deepseek-v4-flash-exp."
        assert switched == ["fx/deepseek-v4-flash-exp"]
