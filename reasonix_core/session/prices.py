"""What a model call costs: the configured prices, else DeepSeek's table."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from reasonix_core.config import Config
from reasonix_core.config.prices import DEEPSEEK_PRICES_USD, Price, price_for
from reasonix_core.usage import Usage


def _configured_prices(config: Config) -> dict[str, Price]:
    configured: dict[str, Price] = {}
    for provider in config.providers:
        for model, price in (provider.prices or {}).items():
            configured.setdefault(model, price)
    return configured


def has_price(config: Config, model: str) -> bool:
    """Whether :func:`make_price_fn` knows a price for ``model`` (a model it does not,
    e.g. one discovered at the provider's ``/models``, costs 0 in the metrics and
    shows as an unknown cost in the TUI)."""
    return model in _configured_prices(config) or model.strip().lower() in DEEPSEEK_PRICES_USD


def make_price_fn(config: Config) -> Callable[[str, Usage, datetime], tuple[float, str]]:
    """Cost of one call: a user-configured price wins; known DeepSeek models
    otherwise follow the peak/off-peak table at request-completion time."""
    configured = _configured_prices(config)

    def price(model: str, usage: Usage, when: datetime) -> tuple[float, str]:
        chosen = configured.get(model)
        table = price_for(model, when)
        default = DEEPSEEK_PRICES_USD.get(model.lower())
        if table is not None and (chosen is None or (default and chosen == default[0])):
            chosen = table
        if chosen is None:
            return 0.0, "USD"
        cost = chosen.cost(
            cache_hit_tokens=usage.cache_hit_tokens,
            cache_miss_tokens=usage.cache_miss_tokens,
            output_tokens=usage.completion_tokens,
            web_search_requests=usage.web_search_requests,
        )
        return cost, chosen.currency

    return price
