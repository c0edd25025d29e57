"""Modal overlays: the composer is hidden exactly while one is open."""

from __future__ import annotations

from datetime import datetime

import pytest
from textual.screen import ModalScreen
from tui_helpers import send, session, settle, type_text

from reasonix_testkit.tui import text_steps
from reasonix_tui.screens.confirm import ConfirmScreen
from reasonix_tui.screens.help import HelpScreen
from reasonix_tui.screens.mcp_status import McpStatusScreen
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.screens.session import SessionScreen
from reasonix_tui.screens.setup import SetupScreen
from reasonix_tui.services import McpServerView, SessionSummary
from reasonix_tui.widgets.blocks import UserBlock


def composer_hidden_iff_modal(app) -> None:
    screen = app.session
    modal_open = isinstance(app.screen, ModalScreen)
    assert screen.composer.display is (not modal_open)
    if not modal_open:
        assert screen.composer.region.height > 0


@pytest.mark.parametrize(
    ("command", "overlay"),
    [
        ("/help", HelpScreen),
        ("/mcp", McpStatusScreen),
        ("/clear", ConfirmScreen),
        ("/model", PickerScreen),
        ("/resume", PickerScreen),
    ],
)
async def test_composer_hidden_exactly_when_modal_open(make_app, command, overlay) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        composer_hidden_iff_modal(app)
        await session(pilot).handle_input(command)
        await pilot.pause()
        assert isinstance(app.screen, overlay)
        composer_hidden_iff_modal(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        composer_hidden_iff_modal(app)
        assert app.focused is session(pilot).composer


async def test_clear_confirmation(make_app) -> None:
    app, services = make_app([text_steps("a")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hello")
        await settle(pilot)
        screen = session(pilot)
        await screen.handle_input("/clear")
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert len(screen.query(UserBlock)) == 1
        await screen.handle_input("/clear")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert len(screen.query(UserBlock)) == 0
        assert len(services.runners) == 2
        assert screen.runner is services.runners[1]


async def test_model_picker_filters_and_switches(make_app) -> None:
    app, services = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await session(pilot).handle_input("/model")
        await pilot.pause()
        await type_text(pilot, "pro")
        await pilot.press("enter")
        await pilot.pause()
        assert services.model == "deepseek-v4-pro"
        assert session(pilot).status.state.model == "deepseek-v4-pro"


async def test_resume_picker(make_app) -> None:
    when = datetime(2025, 1, 1, 9, 30)
    sessions = [
        SessionSummary(session_id="abc", title="Fix the parser", updated=when, turns=4),
        SessionSummary(session_id="def", title="Write docs", updated=when, turns=2),
    ]
    app, _services = make_app(sessions=sessions)
    async with app.run_test(size=(100, 32)) as pilot:
        await session(pilot).handle_input("/resume")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert session(pilot).runner.session_id == "def"


async def test_mcp_status_lists_and_reconnects(make_app) -> None:
    servers = [
        McpServerView(name="fs", transport="stdio", state="ready", tools=5),
        McpServerView(name="web", transport="http", state="failed", error_class="TimeoutError"),
    ]
    app, services = make_app(servers=servers)
    async with app.run_test(size=(100, 32)) as pilot:
        await session(pilot).handle_input("/mcp")
        await pilot.pause()
        await pilot.press("down", "c")
        await pilot.pause()
        assert services.reconnected == ["web"]


async def test_setup_screen_saves_key_and_continues(make_app) -> None:
    app, services = make_app(api_key_missing=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        await pilot.press("enter")
        assert services.saved_keys == []
        await type_text(pilot, "sk-test123")
        await pilot.press("enter")
        await pilot.pause()
        assert services.saved_keys == ["sk-test123"]
        assert isinstance(app.screen, SessionScreen)


async def test_setup_screen_escape_quits_cleanly(make_app) -> None:
    app, _ = make_app(api_key_missing=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 1
