"""An OpenAI-kind provider pointed at the loopback fixture server."""

from __future__ import annotations

from typing import Any

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.provider.openai import OpenAIProvider
from reasonix_testkit import FixtureServer


def fixture_provider(
    server: FixtureServer, key: str, protocol: str = "deepseek", **options: Any
) -> OpenAIProvider:
    """The ``fx`` provider serving ``deepseek-flash`` from ``server`` (``options``: the
    provider's own keyword arguments)."""
    config = ProviderConfig(
        name="fx",
        kind="openai",
        base_url=server.base_url,
        models=["deepseek-flash"],
        api_key_env="X",
        reasoning_protocol=protocol,
    )
    return OpenAIProvider(config, key, **options)
