"""Provider presets (one data table) and model discovery against the loopback
fixture's ``/models``, with the fallback to the configured list."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.config.writeback import add_provider
from reasonix_core.errors import ConfigError
from reasonix_core.provider.discovery import discover_models, models_url
from reasonix_core.provider.presets import (
    PRESETS,
    install_preset,
    preset,
    preset_fields,
    preset_provider,
)
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
        assert ProviderConfig(**preset_fields(entry)) == preset_provider(entry)
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
    default = reasonix(workspace, "setup", "--default", "ollama")
    assert default.returncode == 0 and "default_model" in default.stdout
    parsed = tomllib.loads(config.read_text())
    assert parsed["default_model"] == "ollama" and parsed["providers"][1]["name"] == "ollama"
    again = reasonix(workspace, "setup", "moonshot")
    assert again.returncode == 2 and "already has a provider named 'moonshot'" in again.stderr
    unknown = reasonix(workspace, "setup", "nope")
    assert unknown.returncode == 2 and unknown.stderr.startswith("reasonix: error: unknown")


def test_the_writer_keeps_comments_and_refuses_what_it_cannot_edit(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    mine = '# my settings\n[agent]\nmax_steps = 3  # keep\n\n[[providers]]\nname = "own"\n'
    config.write_text(mine)
    path = install_preset(tmp_path, preset("ollama"), make_default=True)
    text = path.read_text()
    assert "# my settings" in text and "max_steps = 3  # keep" in text
    assert text.index('name = "own"') < text.index('name = "ollama"')
    parsed = tomllib.loads(text)
    assert parsed["default_model"] == "ollama" and parsed["agent"]["max_steps"] == 3
    assert [p["name"] for p in parsed["providers"]] == ["own", "ollama"]
    # Already there: refused, the file untouched.
    with pytest.raises(ConfigError, match="already has a provider named 'ollama'"):
        install_preset(tmp_path, preset("ollama"))
    assert config.read_text() == text
    # ``providers`` as an inline array, or a file that is not TOML: refused, untouched.
    for hostile in ('providers = [{name = "x"}]\n', "[agent\nmax_steps = 3\n"):
        config.write_text(hostile)
        with pytest.raises(ConfigError):
            add_provider(config, preset_fields(preset("qwen")))
        assert config.read_text() == hostile
    # A new file: the entry alone, no leading blank line.
    config.unlink()
    install_preset(tmp_path, preset("qwen"))
    assert config.read_text().startswith('[[providers]]\nname = "qwen"')


def test_installing_a_configured_preset_only_sets_the_default(tmp_path: Path) -> None:
    from reasonix_core.config import load_config

    loaded = load_config(tmp_path, home=tmp_path).config  # the built-in DeepSeek provider
    install_preset(tmp_path, preset("deepseek"), make_default=True, config=loaded)
    assert tomllib.loads((tmp_path / "config.toml").read_text()) == {"default_model": "deepseek"}


def test_reasonix_setup_asks_a_local_server_for_its_models(tmp_path: Path, monkeypatch) -> None:
    import argparse
    import dataclasses

    from reasonix_core.provider import presets
    from reasonix_tui.setup_cli import run_setup

    def at(url: str) -> None:
        table = tuple(
            dataclasses.replace(p, base_url=url) if p.key == "lmstudio" else p
            for p in presets.PRESETS
        )
        monkeypatch.setattr(presets, "PRESETS", table)

    args = argparse.Namespace(preset="lmstudio", default=True)
    with FixtureServer(ChatDialect(), models={"qwen3-8b", "gemma-3"}, api_key=None) as local:
        url = local.base_url
        at(url)
        said = run_setup(args, tmp_path)
    assert "the server lists 2 models" in said and "default_model" in said
    written = tomllib.loads((tmp_path / "config.toml").read_text())
    assert written["providers"][0]["models"] == ["gemma-3", "qwen3-8b"]
    # A server that is down: the entry all the same, and how to name a model.
    (tmp_path / "config.toml").unlink()
    at(url)  # stopped now
    said = run_setup(args, tmp_path)
    assert "couldn't list its models" in said and "lmstudio/<model>" in said
    assert tomllib.loads((tmp_path / "config.toml").read_text())["providers"][0]["models"] == []
