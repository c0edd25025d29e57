"""Reasonix core: the UI-free engine.

Importing this package has no side effects and loads nothing heavy; the version
lives here so ``reasonix --version`` stays fast.
"""

__version__ = "0.1.0"
