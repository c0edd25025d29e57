"""Provider presets (one data table) and model discovery against the loopback
fixture's ``/models``, with the fallback to the configured list."""

from __future__ import annotations

import tomllib

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.provider.discovery import discover_models, models_url
from reasonix_core.provider.presets import PRESETS, preset, preset_provider, preset_toml
from reasonix_testkit import ChatDialect, FixtureServer

KEY = "sk-test-discovery"


def test_presets_cover_the_issue_list_and_parse_as_config() -> None:
    keys = {p.key for p in PRESETS}
    for wanted in ("deepseek", "deepseek-anthropic", "openrouter", "moonshot", "zhipu", "qwen"):
        assert wanted in keys and preset(wanted).needs_key
    for local in ("ollama", "lmstudio"):
        entry = preset(local)
        assert not entry.needs_key and entry.base_url.startswith("http://127.0.0.1:")
    for entry in PRESETS:
        from_toml = ProviderConfig(**tomllib.loads(preset_toml(entry))["providers"][0])
        assert from_toml == preset_provider(entry)
    assert preset_provider(preset("deepseek")).effective_reasoning_protocol() == "deepseek"


async def test_discovery_reads_the_endpoints_models() -> None:
    with FixtureServer(ChatDialect(), models={"m-b", "m-a"}, api_key=KEY) as server:
        provider = ProviderConfig(name="fx", base_url=server.base_url, models=["configured-1"])
        listing = await discover_models(provider, KEY)
        assert listing.source == "endpoint" and listing.models == ("m-a", "m-b")
        assert server.requests[-1].path == "/models"
        assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"
        # A key the endpoint refuses: the configured list, with the reason.
        refused = await discover_models(provider, "sk-wrong")
        assert refused.source == "configured" and refused.models == ("configured-1",)
        assert refused.why.startswith("HTTP 401")


async def test_discovery_falls_back_when_the_endpoint_is_down() -> None:
    with FixtureServer(ChatDialect()) as server:
        url = server.base_url
    provider = ProviderConfig(name="gone", base_url=url, models=["a", "b"])
    listing = await discover_models(provider, None, request_timeout=2)
    assert listing.source == "configured" and listing.models == ("a", "b")
    anthropic = ProviderConfig(name="x", kind="anthropic", base_url="https://h/anthropic/v1")
    assert models_url(anthropic) == "https://h/anthropic/v1/models"


def test_reasonix_setup_lists_and_adds_a_preset(home, workspace) -> None:
    from tests.conftest import reasonix

    listed = reasonix(workspace, "setup")
    assert listed.returncode == 0, listed.stderr
    assert "ollama" in listed.stdout and "no key" in listed.stdout
    config = home / "config.toml"
    config.write_text("# mine\n[agent]\nmax_steps = 3\n")
    added = reasonix(workspace, "setup", "moonshot")
    assert added.returncode == 0, added.stderr
    text = config.read_text()
    assert text.startswith("# mine\n[agent]\nmax_steps = 3\n")  # the user's lines kept
    parsed = tomllib.loads(text)
    assert parsed["providers"][0]["name"] == "moonshot" and parsed["agent"]["max_steps"] == 3
    again = reasonix(workspace, "setup", "moonshot")
    assert again.returncode == 2 and "already has a provider named 'moonshot'" in again.stderr
    unknown = reasonix(workspace, "setup", "nope")
    assert unknown.returncode == 2 and unknown.stderr.startswith("reasonix: error: unknown")
