"""The records the store keeps."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price_cents: int
    qty: int = 0

    def value_cents(self) -> int:
        return self.price_cents * self.qty
