"""DeepSeek's published USD prices and the peak/off-peak schedule.

Prices change with a few days' notice, so everything else treats them as
configuration: the built-in DeepSeek provider is seeded from this table, and a
user's ``[[providers]] prices`` always wins. Figures are USD per 1M tokens from
the November 2026 price page (``reference/wire-formats.md`` §4.2).

Peak hours are 01:00-04:00 and 06:00-10:00 UTC (09:00-12:00 and 14:00-18:00
Beijing), Monday to Friday; every other time, whole weekends included, is
off-peak at half the peak price. A window is closed at its start and open at
its end, so 01:00:00 is peak and 04:00:00 is off-peak. Chinese public holidays
are off-peak too, but are not modelled here: on those days this overestimates.
"""

# No ``from __future__ import annotations``: pydantic would evaluate Price's
# annotations from their text at import (see schema.py).
from collections.abc import Mapping
from datetime import UTC, datetime, time
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEEPSEEK_PRICES_USD",
    "PEAK_WINDOWS_UTC",
    "Price",
    "deepseek_off_peak_prices",
    "is_peak",
    "next_off_peak",
    "price_for",
]


class Price(BaseModel):
    """Price of one model, per 1M tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cache_hit: float = Field(ge=0)
    cache_miss: float = Field(ge=0)
    output: float = Field(ge=0)
    currency: str = "USD"
    # The provider's server-side web search, per 1,000 searches (billed per request,
    # not per token; wire-formats.md §4). 0: not priced.
    web_search_per_1k: float = Field(default=0, ge=0)

    def cost(
        self,
        *,
        cache_hit_tokens: int,
        cache_miss_tokens: int,
        output_tokens: int,
        web_search_requests: int = 0,
    ) -> float:
        """Cost of one request; reasoning tokens are part of ``output_tokens``."""
        tokens = (
            cache_hit_tokens * self.cache_hit
            + cache_miss_tokens * self.cache_miss
            + output_tokens * self.output
        ) / 1_000_000
        return tokens + web_search_requests * self.web_search_per_1k / 1_000


_FLASH = (
    Price(cache_hit=0.003, cache_miss=0.15, output=0.60),
    Price(cache_hit=0.006, cache_miss=0.30, output=1.20),
)
_V4_PRO = (
    Price(cache_hit=0.022, cache_miss=0.66, output=1.98),
    Price(cache_hit=0.044, cache_miss=1.32, output=3.96),
)

#: model id -> (off-peak price, peak price), USD per 1M tokens.
DEEPSEEK_PRICES_USD: Mapping[str, tuple[Price, Price]] = MappingProxyType(
    {
        "deepseek-flash": _FLASH,
        # The V4 Flash alias is billed as Flash.
        "deepseek-v4-flash": _FLASH,
        "deepseek-v4-pro": _V4_PRO,
    }
)

#: Peak windows, UTC, Monday to Friday; each is [start, end).
PEAK_WINDOWS_UTC: tuple[tuple[time, time], ...] = (
    (time(1, 0), time(4, 0)),
    (time(6, 0), time(10, 0)),
)


def is_peak(when: datetime) -> bool:
    """Whether ``when`` falls in a DeepSeek peak window (naive datetimes are UTC)."""
    utc = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    if utc.weekday() >= 5:
        return False
    now = utc.time().replace(tzinfo=None)
    return any(start <= now < end for start, end in PEAK_WINDOWS_UTC)


def next_off_peak(when: datetime) -> datetime | None:
    """When the off-peak price starts again, in UTC; None when ``when`` is off-peak."""
    if not is_peak(when):
        return None
    utc = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    now = utc.time().replace(tzinfo=None)
    end = next(end for start, end in PEAK_WINDOWS_UTC if start <= now < end)
    return datetime.combine(utc.date(), end, tzinfo=UTC)


def price_for(model: str, when: datetime) -> Price | None:
    """DeepSeek's USD price for ``model`` at ``when`` (request-completion time).

    ``None`` for a model that is not in the table. Naive datetimes are UTC.
    """
    prices = DEEPSEEK_PRICES_USD.get(model.strip().lower())
    if prices is None:
        return None
    off_peak, peak = prices
    return peak if is_peak(when) else off_peak


def deepseek_off_peak_prices(models: tuple[str, ...] | list[str]) -> dict[str, Price]:
    """Off-peak prices for the listed models that the table knows."""
    return {m: DEEPSEEK_PRICES_USD[m][0] for m in models if m in DEEPSEEK_PRICES_USD}
