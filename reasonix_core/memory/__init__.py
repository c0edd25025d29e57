"""History search, background facts and automatic recall (docs/MEMORY.md).

Submodules are imported on demand (the package itself needs only
:mod:`reasonix_core.home`). A session's stores are built on first use from its
``ToolContext`` (the runtime sets ``home``, ``clock`` and ``session_id`` there): a
run that never saves, reads or recalls a fact never imports the fact store, the
history index or BM25.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonix_core.home import MEMORY_DIR, reasonix_home

if TYPE_CHECKING:
    from reasonix_core.memory.facts import FactStore
    from reasonix_core.memory.history import HistoryIndex
    from reasonix_core.tool.base import ToolContext


def _home(ctx: ToolContext) -> Path:
    return ctx.home if ctx.home is not None else reasonix_home()


def fact_store(ctx: ToolContext) -> FactStore:
    """The session's fact store (``ctx.facts``), built on first use under
    ``ctx.home`` (default ``$REASONIX_HOME``) and kept there."""
    if ctx.facts is None:
        from reasonix_core.memory.facts import FactStore

        if ctx.clock is None:
            ctx.facts = FactStore(_home(ctx), ctx.workspace.resolve())
        else:
            ctx.facts = FactStore(_home(ctx), ctx.workspace.resolve(), clock=ctx.clock)
    return ctx.facts


def history_index(ctx: ToolContext) -> HistoryIndex:
    """The session-history index (``ctx.history``), built like :func:`fact_store`;
    ``ctx.session_id`` is the session it calls "this session"."""
    if ctx.history is None:
        from reasonix_core.memory.history import HistoryIndex

        ctx.history = HistoryIndex(
            _home(ctx) / "sessions", ctx.workspace.resolve(), current_session=ctx.session_id
        )
    return ctx.history


def recall_block(ctx: ToolContext, prompt: str) -> str:
    """The ``<memory-recall>`` block for ``prompt`` (``ctx.recall``), or "".

    With no memory folder under the home no fact was ever saved, so there is
    nothing to recall and the fact store, recall and BM25 stay unimported."""
    if ctx.recall is None:
        if ctx.facts is None and not os.path.isdir(_home(ctx) / MEMORY_DIR):
            return ""
        from reasonix_core.memory.recall import Recaller

        store = fact_store(ctx)
        ctx.recall = Recaller(store, clock=store.clock)
    return ctx.recall.recall(prompt)


def auto_save_reason(args: Mapping[str, Any]) -> str | None:
    """:func:`reasonix_core.memory.facts.auto_save_reason`, importing the fact
    store with the first ``remember`` call rather than at start-up."""
    from reasonix_core.memory.facts import auto_save_reason as reason

    return reason(args)
