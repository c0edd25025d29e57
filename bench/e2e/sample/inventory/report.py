"""The plain-text stock report."""

from __future__ import annotations

from inventory.config import LOW_STOCK_THRESHOLD
from inventory.pricing import format_price
from inventory.store import Store


def render_report(store: Store) -> str:
    lines = []
    for item in store.items():
        flag = "  (low stock)" if item.qty < LOW_STOCK_THRESHOLD else ""
        lines.append(f"{item.name}: {item.qty} x {format_price(item.price_cents)}{flag}")
    lines.append(f"total: {format_price(store.total_value_cents())}")
    return "\n".join(lines) + "\n"
