"""The first-run setup screen offers the provider presets (issue 19, item 10): the
list first, a key only when the preset needs one, the choice written by the same
writer as ``reasonix setup`` (Pilot over ScriptedServices, then the real engine)."""

from __future__ import annotations

import dataclasses
import re
import stat
import tomllib
from pathlib import Path

import anyio
import pytest
from textual.widgets import Input, OptionList, Static
from tui_helpers import send, type_text, until

from reasonix_core import events as ev
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.provider import presets
from reasonix_testkit import ChatDialect, FixtureServer, Reply
from reasonix_testkit.tui import preset_choices
from reasonix_tui.screens.session import SessionScreen
from reasonix_tui.screens.setup import SetupScreen

SIZE = (110, 34)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for entry in presets.PRESETS:
        if entry.api_key_env:
            monkeypatch.delenv(entry.api_key_env, raising=False)


def _labels(screen: SetupScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def _choose(pilot, key: str) -> None:
    screen = pilot.app.screen
    index = [c.key for c in screen.choices].index(key)
    await pilot.press(*["down"] * index, "enter")


async def test_the_presets_come_first_and_a_local_server_needs_no_key(make_app, tmp_path) -> None:
    app, services = make_app(api_key_missing=True, choices=preset_choices(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        screen = app.screen
        assert screen.query_one(OptionList).display and not screen.query_one(Input).display
        labels = _labels(screen)
        # One line per preset, from the one table, the configured DeepSeek first.
        assert len(labels) == len(presets.PRESETS) + 1  # and "Custom endpoint" last
        assert labels[-1].startswith("Custom endpoint")
        assert labels[0].startswith("DeepSeek (OpenAI-compatible endpoint)")
        for entry in presets.PRESETS:
            line = next(x for x in labels if x.startswith(entry.label))
            assert ("no key" in line) == (not entry.needs_key)
        # The highlighted choice's endpoint under the list.
        endpoint = screen.query_one("#endpoint", Static)
        assert str(endpoint.render()) == "Endpoint: https://api.deepseek.com"
        await pilot.press("down")
        await until(pilot, lambda: "/anthropic" in str(endpoint.render()))
        await pilot.press("up")
        await _choose(pilot, "ollama")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert services.providers_used == [("ollama", None)]
        assert services.saved_keys == []


async def test_a_keyed_preset_asks_for_its_key_and_esc_goes_back(make_app, tmp_path) -> None:
    app, services = make_app(api_key_missing=True, choices=preset_choices(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        await _choose(pilot, "openrouter")
        screen = app.screen
        await until(pilot, lambda: screen.query_one(Input).display)
        intro = str(screen.query_one("#intro", Static).render())
        assert "OpenRouter (OPENROUTER_API_KEY)" in intro
        assert "Endpoint: https://openrouter.ai/api/v1" in intro and ".env" in intro
        assert not screen.query_one(OptionList).display
        await pilot.press("escape")  # back to the list, not out
        await until(pilot, lambda: screen.query_one(OptionList).display)
        assert app.is_running and services.providers_used == []
        await pilot.press("enter")  # the highlight stayed on OpenRouter
        await until(pilot, lambda: screen.query_one(Input).display)
        await type_text(pilot, "sk-or-123")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert services.providers_used == [("openrouter", "sk-or-123")]


async def test_a_refused_choice_is_shown_and_the_screen_stays(make_app, tmp_path) -> None:
    why = "couldn't list the models at http://127.0.0.1:11434/v1 (ConnectError)"
    app, services = make_app(
        api_key_missing=True, choices=preset_choices(tmp_path), provider_errors={"ollama": why}
    )
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        screen = app.screen
        await _choose(pilot, "ollama")
        error = screen.query_one("#error", Static)
        await until(pilot, lambda: "Could not use Ollama" in str(error.render()))
        assert why in str(error.render()) and app.screen is screen
        assert screen.query_one(OptionList).display and services.providers_used == []
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 1


async def test_login_asks_only_for_the_current_key(make_app, tmp_path) -> None:
    app, services = make_app(choices=preset_choices(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/login")
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        assert app.screen.query_one(Input).display
        assert not app.screen.query_one(OptionList).display
        await type_text(pilot, "sk-new")
        await pilot.press("enter")
        await until(pilot, lambda: services.saved_keys == ["sk-new"])
        assert services.providers_used == []


# -- the real engine: what a choice writes and what the session then uses ------------


@pytest.mark.usefixtures("configured")
async def test_a_keyed_preset_is_written_with_its_key(workspace: Path, home: Path) -> None:
    from reasonix_tui.engine import EngineServices

    config = home / "config.toml"
    config.write_text("# my own notes\n" + config.read_text())
    services = EngineServices(workspace, home=home)
    choices = {c.key: c for c in services.provider_choices()}
    assert next(iter(choices)) == "fixture"  # the configured provider first
    assert choices["openrouter"].key_info is not None and choices["ollama"].key_info is None
    await services.use_provider("openrouter", "sk-or-1")
    text = config.read_text()
    assert text.startswith("# my own notes\n")
    parsed = tomllib.loads(text)
    assert parsed["default_model"] == "openrouter"
    assert [p["name"] for p in parsed["providers"]] == ["fixture", "openrouter"]
    env_file = home / ".env"
    assert "OPENROUTER_API_KEY=sk-or-1" in env_file.read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert services.model == "deepseek/deepseek-chat" and not services.needs_api_key()
    assert services.api_key_info().variable == "OPENROUTER_API_KEY"
    # The next start reads the same choice from the file.
    assert EngineServices(workspace, home=home).model == "deepseek/deepseek-chat"


def _local_preset_at(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    table = tuple(
        dataclasses.replace(p, base_url=url) if p.key == "ollama" else p for p in presets.PRESETS
    )
    monkeypatch.setattr(presets, "PRESETS", table)


@pytest.mark.usefixtures("configured")
async def test_a_local_preset_takes_its_servers_models_and_the_next_request_goes_there(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix_tui.engine import EngineServices

    with FixtureServer(ChatDialect(), models={"qwen3:8b", "llama3.2"}, api_key=None) as local:
        _local_preset_at(monkeypatch, local.base_url)
        services = EngineServices(workspace, home=home)
        await services.use_provider("ollama", None)
        written = tomllib.loads((home / "config.toml").read_text())
        ollama = next(p for p in written["providers"] if p["name"] == "ollama")
        assert ollama["models"] == ["llama3.2", "qwen3:8b"] and ollama["api_key_env"] == ""
        assert services.model == "llama3.2" and not services.needs_api_key()
        local.enqueue(Reply(content="hello from the local server"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(services.serve)
            runner = services.new_runner(FailClosedApprover())
            turn = [e async for e in runner.run("hi")]
            tg.cancel_scope.cancel()
    assert isinstance(turn[-1], ev.TurnFinished)
    posts = [r for r in local.requests if r.json is not None]
    assert [r.json["model"] for r in posts] == ["llama3.2"]
    assert "authorization" not in posts[0].headers


@pytest.mark.usefixtures("configured")
async def test_a_local_server_that_is_down_is_refused_and_nothing_written(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix_tui.engine import EngineServices

    with FixtureServer(ChatDialect()) as gone:
        url = gone.base_url
    _local_preset_at(monkeypatch, url)
    before = (home / "config.toml").read_text()
    services = EngineServices(workspace, home=home)
    with pytest.raises(ValueError, match="is the server running"):
        await services.use_provider("ollama", None)
    assert (home / "config.toml").read_text() == before
    assert services.model == "deepseek-flash"


async def test_esc_on_the_first_run_list_says_how_to_configure_later(make_app, tmp_path) -> None:
    """Issue 30 item 9: quitting the first-run list says what to run later; the
    first-run text has no literal backticks."""
    from reasonix_tui.screens.setup import CONFIGURE_LATER

    app, _ = make_app(api_key_missing=True, choices=preset_choices(tmp_path))
    said: list[object] = []
    exit_app = app.exit

    def exit_saying(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        said.append(kwargs.get("message"))
        exit_app(*args, **kwargs)

    app.exit = exit_saying  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        intro = str(app.screen.query_one("#intro", Static).render())
        assert "`" not in intro and "reasonix setup" in intro
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 1
    assert said == [CONFIGURE_LATER]
    assert "reasonix setup" in CONFIGURE_LATER and "`" not in CONFIGURE_LATER


async def test_the_first_run_list_takes_a_custom_base_url(make_app, tmp_path) -> None:
    """Issue 30 item 9: any OpenAI-compatible base URL, checked by the core."""
    app, services = make_app(api_key_missing=True, choices=preset_choices(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        screen = app.screen
        await pilot.press(*["down"] * len(screen.choices))
        endpoint = screen.query_one("#endpoint", Static)
        await until(pilot, lambda: "base URL you give" in str(endpoint.render()))
        await pilot.press("enter")
        field = screen.query_one(Input)
        await until(pilot, lambda: field.display and not field.password)
        assert "base URL" in str(screen.query_one("#intro", Static).render())
        await type_text(pilot, "ftp://user:pw@host")
        await pilot.press("enter")
        error = screen.query_one("#error", Static)
        await until(pilot, lambda: "not an http(s) URL" in str(error.render()))
        field.value = ""
        await type_text(pilot, "http://127.0.0.1:9/v1")
        await pilot.press("enter")
        await until(pilot, lambda: field.password)
        assert "http://127.0.0.1:9/v1" in str(screen.query_one("#intro", Static).render())
        await pilot.press("escape")  # back to the URL, kept
        await until(pilot, lambda: not field.password and field.value == "http://127.0.0.1:9/v1")
        await pilot.press("enter")
        await until(pilot, lambda: field.password)
        await pilot.press("enter")  # no key
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
    assert services.providers_used == [("http://127.0.0.1:9/v1", None)]


def test_a_custom_base_url_is_checked_before_anything_is_written() -> None:
    for bad, why in [
        ("", "empty"),
        ("https://host/v1 x", "spaces"),
        ("https://host/\x1b[31m", "control"),
        ("file:///etc/passwd", "http(s)"),
        ("https://user:pw@host/v1", "key field"),
        ("https://host/v1?x=1", "query"),
        ("javascript:alert(1)", "http(s)"),
    ]:
        with pytest.raises(ValueError, match=re.escape(why)):
            presets.custom_preset(bad, needs_key=False)
    entry = presets.custom_preset(" https://llm.example.com/v1/ ", needs_key=True)
    assert entry.base_url == "https://llm.example.com/v1" and entry.kind == "openai"
    assert entry.api_key_env == presets.CUSTOM_KEY_ENV and entry.models == ()
    assert presets.custom_preset("http://127.0.0.1:8000/v1", needs_key=False).api_key_env == ""


@pytest.mark.usefixtures("configured")
async def test_a_custom_endpoint_takes_its_models_and_the_next_request_goes_there(
    workspace: Path, home: Path
) -> None:
    from reasonix_tui.engine import EngineServices

    with FixtureServer(ChatDialect(), models={"my-model"}, api_key="sk-custom") as custom:
        services = EngineServices(workspace, home=home)
        await services.use_endpoint(custom.base_url + "/", "sk-custom")
        written = tomllib.loads((home / "config.toml").read_text())
        entry = next(p for p in written["providers"] if p["name"] == "custom")
        assert entry["base_url"] == custom.base_url and entry["models"] == ["my-model"]
        assert written["default_model"] == "custom"
        assert "CUSTOM_API_KEY=sk-custom" in (home / ".env").read_text()
        assert services.model == "my-model"
        custom.enqueue(Reply(content="hello from my endpoint"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(services.serve)
            runner = services.new_runner(FailClosedApprover())
            turn = [e async for e in runner.run("hi")]
            tg.cancel_scope.cancel()
    assert isinstance(turn[-1], ev.TurnFinished)
    with pytest.raises(ValueError, match="already configured"):
        await services.use_endpoint("https://other.example/v1", None)


async def test_every_choice_is_one_line_and_the_list_fits_at_80x24(make_app, tmp_path) -> None:
    """Issue 30, item 9 at 80 columns: a label too long for the column next to the notes
    is cut, so no row wraps its note onto a line of its own and the dialog fits."""
    app, _ = make_app(api_key_missing=True, choices=preset_choices(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SetupScreen))
        screen = app.screen
        options = screen.query_one(OptionList)
        await until(pilot, lambda: options.option_count == len(presets.PRESETS) + 1)
        await pilot.pause()
        assert options.region.height == options.option_count  # one line each
        dialog = screen.query_one("#dialog").region
        assert screen.region.contains_region(dialog)
        for label in _labels(screen):
            assert len(label) <= options.content_region.width, label
