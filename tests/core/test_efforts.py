"""Reasoning effort: one vocabulary (reasonix_core/efforts.py), said by each
provider's efforts(), checked the same way from flags and config."""

from __future__ import annotations

import json

import pytest

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.efforts import check_effort, known_efforts
from reasonix_core.errors import ConfigError
from reasonix_core.messages import Message
from reasonix_core.provider.anthropic import AnthropicProvider
from reasonix_core.provider.base import Request
from reasonix_core.provider.http import HttpProvider
from reasonix_core.provider.openai import OpenAIProvider
from reasonix_core.provider.responses import ResponsesProvider

KINDS = {"openai": OpenAIProvider, "anthropic": AnthropicProvider, "responses": ResponsesProvider}
HOSTS = {"deepseek": "https://api.deepseek.com", "openai": "https://api.example.com/v1"}


def provider(kind: str, protocol: str) -> HttpProvider:
    config = ProviderConfig(name="p", kind=kind, base_url=HOSTS[protocol], models=["m"])
    return KINDS[kind](config, "key")


def body(p: HttpProvider, effort: str) -> dict:
    request = Request(model="m", messages=(Message(role="user", content="hi"),), effort=effort)
    return json.loads(p.prepare(request).body)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("protocol", sorted(HOSTS))
def test_each_provider_says_what_it_accepts(kind: str, protocol: str) -> None:
    p = provider(kind, protocol)
    levels = p.efforts()
    assert levels[0] == "auto" and "disabled" in levels and "high" in levels
    assert set(levels) <= set(known_efforts())
    auto = body(p, "auto")
    for level in levels:  # every accepted level builds a request
        body(p, level)
    # Every named level but the off switches changes what is sent.
    sent = {level for level in levels if body(p, level) != auto}
    assert sent >= set(levels) - {"auto", "disabled", "none", "off"}


def test_openai_chat_refuses_levels_it_would_silently_drop() -> None:
    p = provider("openai", "openai")
    assert "xhigh" not in p.efforts() and "ultra" not in p.efforts()
    with pytest.raises(ConfigError, match=r"'xhigh' is not accepted by provider 'p'; it accepts"):
        check_effort("xhigh", p.efforts(), p.name)
    assert check_effort(" Medium ", p.efforts(), p.name) == "medium"


def test_provider_effort_is_validated_at_load() -> None:
    with pytest.raises(ValueError, match="'ultra' is not accepted by provider 'o'"):
        ProviderConfig(name="o", base_url=HOSTS["openai"], effort="ultra")
    assert ProviderConfig(name="d", base_url=HOSTS["deepseek"], effort="ULTRA").effort == "ultra"


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("protocol", sorted(HOSTS))
def test_a_menu_lists_one_name_per_distinct_request(kind: str, protocol: str) -> None:
    """effort_levels: each listed level sends its own request; each alias sends
    exactly its level's; together they are every accepted name, each once."""
    from reasonix_core.efforts import effort_level, effort_levels

    p = provider(kind, protocol)
    levels = effort_levels(kind, protocol)
    names = [level.name for level in levels]
    bodies = [json.dumps(body(p, name), sort_keys=True) for name in names]
    assert len(set(bodies)) == len(bodies), names
    spelled = [name for level in levels for name in (level.name, *level.aliases)]
    assert sorted(spelled) == sorted(p.efforts())
    assert sum(name in ("disabled", "none", "off") for name in names) <= 1
    for level in levels:
        for alias in level.aliases:
            assert body(p, alias) == body(p, level.name), (alias, level.name)
            assert effort_level(alias.upper(), levels) == level.name


def test_no_menu_where_nothing_is_sent() -> None:
    from reasonix_core.efforts import effort_level, effort_levels

    assert effort_levels("openai", "none") == ()
    assert effort_levels("custom-kind", "openai") == ()
    assert effort_level("Weird", ()) == "weird"
