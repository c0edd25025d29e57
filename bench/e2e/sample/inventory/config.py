"""Limits and defaults of the inventory library."""

DEFAULT_CURRENCY = "USD"
# A store refuses the item after this many.
MAX_ITEMS = 500
# An item with fewer units than this is "low stock" in the report.
LOW_STOCK_THRESHOLD = 3
