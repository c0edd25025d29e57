"""History search, background facts and automatic recall (docs/MEMORY.md).

Submodules are imported on demand; this package imports nothing at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasonix_core.memory.facts import FactStore
    from reasonix_core.memory.history import HistoryIndex

#: ``ToolContext.services`` keys.
SERVICE_FACTS = "memory"
SERVICE_HISTORY = "history"
SERVICE_RECALL = "memory_recall"


def fact_store(services: dict[str, Any], workspace: Any) -> FactStore:
    """The session's fact store; built from ``$REASONIX_HOME`` if the surface
    did not provide one (tests, embedders)."""
    store = services.get(SERVICE_FACTS)
    if store is None:
        from pathlib import Path

        from reasonix_core.config.loader import reasonix_home
        from reasonix_core.memory.facts import FactStore

        store = FactStore(reasonix_home(), Path(workspace).resolve())
        services[SERVICE_FACTS] = store
    return store


def history_index(services: dict[str, Any], workspace: Any) -> HistoryIndex:
    index = services.get(SERVICE_HISTORY)
    if index is None:
        from pathlib import Path

        from reasonix_core.config.loader import reasonix_home
        from reasonix_core.memory.history import HistoryIndex

        index = HistoryIndex(reasonix_home() / "sessions", Path(workspace).resolve())
        services[SERVICE_HISTORY] = index
    return index
