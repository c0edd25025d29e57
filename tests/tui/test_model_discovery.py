"""``/model`` asks the provider's ``/models`` (issue 19, item 10): the engine's probe
against the loopback fixture, its failures, and a discovered model picked for the
session, whose next request goes to it (with the ``model`` prefix change named)."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.config import load_config, resolve_model
from reasonix_core.errors import ConfigError
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.provider.discovery import discover_models
from reasonix_testkit import Reply
from reasonix_tui.engine import EngineServices
from tests.conftest import TEST_KEY_ENV

pytestmark = pytest.mark.usefixtures("configured")

DISCOVERED = "fx-discovered-1"


async def test_the_probe_lists_what_the_config_does_not(workspace: Path, home: Path, server):
    server.models = {"deepseek-flash", "deepseek-v4-pro", DISCOVERED}
    services = EngineServices(workspace, home=home)
    probe = await services.probe_models()
    assert probe.error == ""
    assert f"fixture/{DISCOVERED}" in probe.models and "fixture/deepseek-flash" in probe.models
    assert server.requests[-1].path == "/models"
    # The configured list is what models() keeps saying: the picker merges the probe.
    assert f"fixture/{DISCOVERED}" not in services.models()


async def test_a_refused_probe_says_why_and_keeps_the_configured_list(
    workspace: Path, home: Path, server, monkeypatch
):
    monkeypatch.setenv(TEST_KEY_ENV, "sk-wrong")
    services = EngineServices(workspace, home=home)
    probe = await services.probe_models()
    assert probe.models == () and probe.error == "HTTP 401"
    with pytest.raises(ValueError, match="unknown model"):
        services.set_model(f"fixture/{DISCOVERED}")  # nothing was discovered


async def test_a_probe_that_never_answers_times_out(workspace: Path, home: Path):
    # A socket that accepts connections (the kernel's backlog) and never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        config = load_config(workspace, home=home).config
        provider = config.providers[0].model_copy(update={"base_url": f"http://127.0.0.1:{port}"})
        listing = await discover_models(provider, "k", request_timeout=30, total_timeout=0.3)
    assert listing.source == "configured" and listing.why == "timed out"
    assert listing.models == ("deepseek-flash", "deepseek-v4-pro")


async def test_an_oversized_listing_is_not_read_to_the_end(workspace: Path, home: Path, server):
    server.models = {f"m-{i:07d}-{'x' * 150}" for i in range(14_000)}  # about 2.6 MB
    services = EngineServices(workspace, home=home)
    probe = await services.probe_models()
    assert probe.error == "listing too large" and probe.models == ()


def test_resolve_accepts_a_discovered_id_only_for_its_provider(workspace: Path, home: Path):
    config = load_config(workspace, home=home).config
    with pytest.raises(ConfigError, match="unknown model"):
        resolve_model(config, f"fixture/{DISCOVERED}")
    resolved = resolve_model(config, f"fixture/{DISCOVERED}", {"fixture": (DISCOVERED,)})
    assert resolved.model == DISCOVERED and resolved.provider.name == "fixture"
    # The provider's own limits; no price configured for it.
    assert resolved.provider.context_window_for(DISCOVERED) == 1000000
    with pytest.raises(ConfigError):
        resolve_model(config, f"other/{DISCOVERED}", {"fixture": (DISCOVERED,)})


async def _turn(runner, prompt: str) -> list[ev.Event]:
    return [e async for e in runner.run(prompt)]


async def test_a_discovered_model_picked_mid_session_gets_the_next_request(
    workspace: Path, home: Path, server
):
    server.models = {"deepseek-flash", "deepseek-v4-pro", DISCOVERED}
    services = EngineServices(workspace, home=home)
    server.enqueue(Reply(content="first"))
    server.enqueue(Reply(content="second"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        first = await _turn(runner, "hi")
        assert isinstance(first[-1], ev.TurnFinished)
        probe = await services.probe_models()
        services.set_model(f"fixture/{DISCOVERED}")
        assert runner.model == DISCOVERED
        second = await _turn(runner, "again")
        tg.cancel_scope.cancel()
    assert isinstance(second[-1], ev.TurnFinished)
    assert f"fixture/{DISCOVERED}" in probe.models
    posts = [r for r in server.requests if r.json is not None]
    assert [r.json["model"] for r in posts] == ["deepseek-flash", DISCOVERED]
    changes = [e.reason for e in second if isinstance(e, ev.PrefixChanged)]
    assert changes == ["model"]
    usage = [e for e in second if isinstance(e, ev.UsageReported)]
    assert usage and usage[-1].model == DISCOVERED and usage[-1].cost == 0.0


async def test_a_discovered_model_picked_before_the_first_turn_opens_the_session(
    workspace: Path, home: Path, server
):
    server.models = {"deepseek-flash", DISCOVERED}
    services = EngineServices(workspace, home=home)
    await services.probe_models()
    services.set_model(f"fixture/{DISCOVERED}")
    server.enqueue(Reply(content="ok"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        turn = await _turn(runner, "hi")
        tg.cancel_scope.cancel()
    assert isinstance(turn[-1], ev.TurnFinished)
    assert [r.json["model"] for r in server.requests if r.json is not None] == [DISCOVERED]
