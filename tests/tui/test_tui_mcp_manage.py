"""``/mcp`` adds, removes and logs in to servers (Pilot; the login against the
loopback OAuth-protected MCP server, ``$BROWSER`` a script following the redirect)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from reasonix_core.mcp.tokens import TOKEN_FILE
from reasonix_tui.screens.mcp_status import McpStatusScreen
from reasonix_tui.services import McpServerView
from tests.core.mcp_helpers import FIXTURES, free_port, http_process
from tests.tui.tui_helpers import session, type_text

USER_TEXT = "# mine\n[agent]\ncompact_ratio = 0.8  # keep\n"


async def _until(predicate, within: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    with anyio.fail_after(within):
        while not predicate():  # noqa: ASYNC110 (state of other tasks)
            await anyio.sleep(0.05)


async def test_add_with_the_a_key_and_remove_with_the_command(make_app) -> None:
    app, services = make_app(servers=[McpServerView(name="fs", transport="stdio", state="ready")])
    config = services.config_home / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(USER_TEXT)
    async with app.run_test(size=(110, 34)) as pilot:
        await session(pilot).handle_input("/mcp")
        await pilot.pause()
        assert isinstance(app.screen, McpStatusScreen)
        await pilot.press("a")
        await pilot.pause()
        await type_text(pilot, "gh http://127.0.0.1:9/mcp --header X-Team:blue")
        await pilot.press("enter")
        await pilot.pause()
        text = config.read_text()
        assert text.startswith(USER_TEXT)
        assert 'name = "gh"' in text and 'url = "http://127.0.0.1:9/mcp"' in text

        # A bad line is refused with a notice and writes nothing.
        await pilot.press("a")
        await type_text(pilot, "bad!name http://x")
        await pilot.press("enter")
        await pilot.pause()
        assert config.read_text() == text
        await pilot.press("escape", "escape")
        await pilot.pause()

        await session(pilot).handle_input("/mcp remove gh")
        await pilot.pause()
        assert config.read_text() == USER_TEXT
        await pilot.press("escape")
        await pilot.pause()
        await session(pilot).handle_input("/mcp remove gh")
        await pilot.pause()
        assert config.read_text() == USER_TEXT  # unknown now: a notice, nothing written


async def test_authenticate_from_mcp_logs_in_and_reconnects(
    make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    events = tmp_path / "events.jsonl"
    argv = [sys.executable, str(FIXTURES / "mcp_oauth_server.py"), str(port), str(events), "60"]
    monkeypatch.setenv("BROWSER", f"{sys.executable} {FIXTURES / 'browser.py'} %s")
    app, services = make_app(servers=[McpServerView(name="sec", transport="http", state="failed")])
    home = services.config_home
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[[mcp.servers]]\nname = "sec"\nurl = "{url}"\n')
    with http_process(argv, port):
        async with app.run_test(size=(110, 34)) as pilot:
            await session(pilot).handle_input("/mcp")
            await pilot.pause()
            await pilot.press("l")  # the selected (only) row
            await _until(lambda: services.reconnected == ["sec"])
    stored = json.loads((home / TOKEN_FILE).read_text())[url]
    assert stored["tokens"]["access_token"]
    assert [json.loads(line)["event"] for line in events.read_text().splitlines()].count(
        "authorize"
    ) == 1
