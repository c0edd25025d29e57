"""The API key in the app: the setup screen names the provider and variable, /login
replaces the key, a 401/402 says where the key comes from (issue 14, item 10)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from tui_helpers import send, session, settle, type_text, until

from reasonix_core.events import TurnFailed
from reasonix_tui.screens.setup import SetupScreen
from reasonix_tui.widgets.blocks import NoticeBlock


async def test_login_replaces_the_key_from_the_session(make_app) -> None:
    app, services = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/login")
        await until(pilot, lambda: isinstance(pilot.app.screen, SetupScreen))
        intro = str(pilot.app.screen.query_one("#intro").render())
        assert "DeepSeek (DEEPSEEK_API_KEY)" in intro and ".env" in intro
        await type_text(pilot, "sk-new")
        await pilot.press("enter")
        screen = session(pilot)
        await until(pilot, lambda: "saved to" in screen.query(NoticeBlock).last().text)
        assert services.saved_keys == ["sk-new"]


async def test_escape_leaves_login_without_quitting(make_app) -> None:
    app, services = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/key")
        await until(pilot, lambda: isinstance(pilot.app.screen, SetupScreen))
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is session(pilot))
        assert pilot.app.is_running and services.saved_keys == []


@pytest.mark.parametrize(("status", "words"), [(401, "/login replaces it"), (402, "no balance")])
async def test_an_auth_failure_says_where_the_key_is(make_app, status, words) -> None:
    app, _ = make_app([[TurnFailed(error=f"HTTP {status}: nope", status=status)]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hi")
        await settle(pilot)
        hint = session(pilot).query(NoticeBlock).last().text
        assert words in hint and "DEEPSEEK_API_KEY" in hint and ".env" in hint


@pytest.mark.usefixtures("configured")
def test_engine_key_info_and_save(workspace: Path, home: Path, monkeypatch) -> None:
    from reasonix_tui.engine import EngineServices

    services = EngineServices(workspace, home=home)
    info = services.api_key_info()
    assert info.provider == "fixture"
    assert info.from_environment  # the test key is in the environment
    services.save_api_key("sk-replaced")
    env_file = home / ".env"
    assert f"{info.variable}=" in env_file.read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    import os

    assert os.environ[info.variable] == "sk-replaced"  # wins over the old environment value
