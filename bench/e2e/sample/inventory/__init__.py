"""inventory: a tiny stock-keeping library (the e2ebench sample project)."""

from inventory.models import Item
from inventory.store import Store

__all__ = ["Item", "Store"]
