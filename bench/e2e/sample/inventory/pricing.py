"""Discounts and the display form of prices."""

from __future__ import annotations

from inventory.config import DEFAULT_CURRENCY


def apply_discount(price_cents: int, percent: int) -> int:
    """The price after a ``percent`` discount, rounded to the nearest cent (halves up)."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    return (price_cents * (100 - percent) + 50) // 100


def format_price(cents: int, currency: str = DEFAULT_CURRENCY) -> str:
    """``1234`` -> ``"12.34 USD"``."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d} {currency}"
