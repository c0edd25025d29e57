"""History search, background facts and automatic recall (docs/MEMORY.md).

Submodules are imported on demand; this package imports nothing at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.memory.facts import FactStore
    from reasonix_core.memory.history import HistoryIndex
    from reasonix_core.tool.base import ToolContext


def fact_store(ctx: ToolContext) -> FactStore:
    """The session's fact store (``ctx.facts``); built from ``$REASONIX_HOME``
    and kept there if the surface did not provide one (tests, embedders)."""
    if ctx.facts is None:
        from reasonix_core.home import reasonix_home
        from reasonix_core.memory.facts import FactStore

        ctx.facts = FactStore(reasonix_home(), ctx.workspace.resolve())
    return ctx.facts


def history_index(ctx: ToolContext) -> HistoryIndex:
    """The session-history index (``ctx.history``), built like :func:`fact_store`."""
    if ctx.history is None:
        from reasonix_core.home import reasonix_home
        from reasonix_core.memory.history import HistoryIndex

        ctx.history = HistoryIndex(reasonix_home() / "sessions", ctx.workspace.resolve())
    return ctx.history
