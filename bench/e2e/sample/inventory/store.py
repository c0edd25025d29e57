"""A store: items by name."""

from __future__ import annotations

from inventory.config import MAX_ITEMS
from inventory.models import Item


class StoreFull(Exception):
    pass


class Store:
    def __init__(self) -> None:
        self._items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        if item.name not in self._items and len(self._items) >= MAX_ITEMS:
            raise StoreFull(f"a store holds at most {MAX_ITEMS} items")
        self._items[item.name] = item

    def remove(self, name: str) -> Item:
        return self._items.pop(name)

    def find(self, name: str) -> Item | None:
        return self._items.get(name)

    def items(self) -> list[Item]:
        return sorted(self._items.values(), key=lambda i: i.name)

    def total_value_cents(self) -> int:
        return sum(item.value_cents() for item in self._items.values())
