"""``memory``: search, list and read the saved background facts (read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import MEMORY as SPEC
from reasonix_core.tool.builtin.specs import MEMORY_MAX_LIMIT as MAX_LIMIT
from reasonix_core.tool.builtin.specs import SpecifiedTool

if TYPE_CHECKING:  # memory/ loads with the first call
    from reasonix_core.memory.facts import Fact, FactStore

DEFAULT_SEARCH_LIMIT = 8
DEFAULT_LIST_LIMIT = 50
PREVIEW = 160

FactType = Literal["user", "feedback", "project", "reference"]
Scope = Literal["project", "global"]


class MemoryArgs(BaseModel):
    model_config = ARGS_CONFIG

    operation: Literal["search", "list", "read"]
    query: str | None = None
    id: str | None = None
    type: FactType | None = None
    scope: Scope | None = None
    archived: bool = False
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT)


def fact_line(fact: Fact, stale: str = "") -> str:
    date = (fact.updated or fact.created)[:10]
    flags = f" · {stale}" if stale else ""
    if fact.archived:
        flags += f" · archived {fact.archived[:10]}"
    body = " ".join(fact.body.split())
    if len(body) > PREVIEW:
        body = body[: PREVIEW - 1].rstrip() + "…"
    return (
        f"- {fact.id} · {fact.type}/{fact.scope} · rev {fact.revision} · updated {date}{flags}\n"
        f"  {fact.title}: {body}"
    )


class MemoryTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from reasonix_core.memory import fact_store
        from reasonix_core.memory.facts import FactError

        a: MemoryArgs = validate_args(MemoryArgs, args)
        store = fact_store(ctx)
        try:
            if a.operation == "read":
                if not (a.id or "").strip():
                    return ToolResult.error("memory: operation=read needs `id`")
                return await anyio.to_thread.run_sync(self._read, store, a.id or "")
            if a.operation == "search":
                if not (a.query or "").strip():
                    return ToolResult.error("memory: operation=search needs a non-empty query")
                return await anyio.to_thread.run_sync(self._search, store, a)
            return await anyio.to_thread.run_sync(self._list, store, a)
        except FactError as exc:
            return ToolResult.error(f"memory: {exc}")

    @staticmethod
    def _read(store: FactStore, fact_id: str) -> ToolResult:
        from reasonix_core.memory.recall import staleness

        fact = store.get(fact_id.strip())
        history = store.revisions(fact.id)
        stale = "" if fact.archived else staleness(fact, store.clock())
        lines = [
            f"id: {fact.id}",
            f"title: {fact.title}",
            f"type: {fact.type}",
            f"scope: {fact.scope}",
            f"revision: {fact.revision} ({len(history)} earlier revision"
            f"{'s' if len(history) != 1 else ''} kept)",
            f"created: {fact.created}",
            f"updated: {fact.updated}" + (f" ({stale})" if stale else ""),
        ]
        if fact.keywords:
            lines.append(f"keywords: {', '.join(fact.keywords)}")
        if fact.archived:
            reason = f" ({fact.archive_reason})" if fact.archive_reason else ""
            lines.append(f"archived: {fact.archived}{reason}")
        lines += ["", fact.body]
        return ToolResult(text="\n".join(lines), meta={"id": fact.id, "revision": fact.revision})

    @staticmethod
    def _list(store: FactStore, a: MemoryArgs) -> ToolResult:
        from reasonix_core.memory.recall import staleness

        facts = store.list(scope=a.scope, type=a.type, archived=a.archived)
        limit = a.limit or DEFAULT_LIST_LIMIT
        what = "archived facts" if a.archived else "facts"
        if not facts:
            return ToolResult(text=f"memory: no {what} saved{_filters(a)}.", meta={"count": 0})
        now = store.clock()
        lines = [
            f"memory: {len(facts)} {what}{_filters(a)}"
            + (f", showing the newest {limit}:" if len(facts) > limit else ":")
        ]
        for fact in facts[:limit]:
            lines.append(fact_line(fact, "" if a.archived else staleness(fact, now)))
        return ToolResult(text="\n".join(lines), meta={"count": len(facts)})

    @staticmethod
    def _search(store: FactStore, a: MemoryArgs) -> ToolResult:
        from reasonix_core.memory.recall import Recaller

        facts = store.list(scope=a.scope, type=a.type, archived=a.archived)
        ranked = Recaller(store, clock=store.clock).rank(a.query or "", facts, min_terms=1)
        ranked = ranked[: a.limit or DEFAULT_SEARCH_LIMIT]
        if not ranked:
            return ToolResult(
                text=f"memory: no facts match {a.query!r}{_filters(a)} ({len(facts)} searched).",
                meta={"hits": 0},
            )
        lines = [f"memory: {len(ranked)} fact{'s' if len(ranked) != 1 else ''} match {a.query!r}:"]
        lines += [fact_line(r.fact, r.stale) for r in ranked]
        lines.append("Use operation=read with an id for the full text.")
        return ToolResult(
            text="\n".join(lines), meta={"hits": len(ranked), "ids": [r.fact.id for r in ranked]}
        )


def _filters(a: MemoryArgs) -> str:
    parts = [f"type {a.type}" if a.type else "", f"scope {a.scope}" if a.scope else ""]
    parts = [p for p in parts if p]
    return f" ({', '.join(parts)})" if parts else ""
