"""``history``: BM25 search over this project's earlier session transcripts."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import HISTORY as SPEC
from reasonix_core.tool.builtin.specs import HISTORY_MAX_LIMIT as MAX_LIMIT
from reasonix_core.tool.builtin.specs import SpecifiedTool

if TYPE_CHECKING:  # memory/ loads with the first call
    from reasonix_core.memory.history import HistoryEntry, HistoryIndex

DEFAULT_LIMIT = 8
DEFAULT_RADIUS = 3
MAX_RADIUS = 10
SNIPPET = 300
AROUND_TEXT = 1500
AROUND_TOOL_TEXT = 400


class HistoryArgs(BaseModel):
    model_config = ARGS_CONFIG

    operation: Literal["search", "around"]
    query: str | None = None
    kind: Literal["user", "assistant", "tool", "all"] | None = None
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT)
    ref: str | None = None


def _flat(text: str) -> str:
    return " ".join(text.split())


def snippet(text: str, query: str, width: int = SNIPPET) -> str:
    """``width`` characters of ``text`` around the first query word it contains."""
    flat = _flat(text)
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    words = sorted(
        {w for w in re.findall(r"\w+", query.lower()) if len(w) > 1}, key=len, reverse=True
    )
    pos = min((p for p in (lower.find(w) for w in words) if p >= 0), default=0)
    start = max(0, min(pos - width // 3, len(flat) - width))
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()}… [{len(text) - limit} more chars]"


class HistoryTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from reasonix_core.memory import history_index

        a: HistoryArgs = validate_args(HistoryArgs, args)
        index = history_index(ctx)
        if a.operation == "search":
            if not (a.query or "").strip():
                return ToolResult.error("history: operation=search needs a non-empty query")
            return await anyio.to_thread.run_sync(self._search, index, a)
        if not (a.ref or "").strip():
            return ToolResult.error(
                "history: operation=around needs `ref` (from a search result, e.g. "
                "'20250101-120000-ab12cd#14')"
            )
        return await anyio.to_thread.run_sync(self._around, index, a)

    @staticmethod
    def _label(entry: HistoryEntry, current: str) -> str:
        date = entry.created[:10] if entry.created else "?"
        where = " · this session" if entry.session_id == current else ""
        archived = " · archived" if entry.archived else ""
        return f"{entry.ref} · {entry.role} · {date}{where}{archived}"

    def _search(self, index: HistoryIndex, a: HistoryArgs) -> ToolResult:
        from reasonix_core.memory.bm25 import tokenize

        query = a.query or ""
        if not tokenize(query):
            return ToolResult.error(
                f"history: the query {query!r} has no searchable words (only stopwords or "
                "punctuation); use distinctive keywords"
            )
        hits = index.search(query, kind=a.kind, limit=a.limit or DEFAULT_LIMIT)
        messages, sessions = index.searched_count(a.kind)
        scope = {
            None: "user and assistant messages; tool output excluded (kind=tool or all "
            "searches it)",
            "all": "all messages incl. tool output",
        }.get(a.kind, f"{a.kind} messages")
        head = f"{messages} messages in {sessions} session{'s' if sessions != 1 else ''}; {scope}"
        if not hits:
            return ToolResult(
                text=f"history: no matches for {query!r} ({head}).",
                meta={"hits": 0, "searched": messages},
            )
        lines = [
            f"history: {len(hits)} match{'es' if len(hits) != 1 else ''} for {query!r} ({head}):"
        ]
        for n, hit in enumerate(hits, 1):
            lines.append(f"[{n}] {self._label(hit.entry, index.current_session)}")
            lines.append(f"    {snippet(hit.entry.text, query)}")
        lines.append("Use operation=around with a ref to see the surrounding messages.")
        return ToolResult(
            text="\n".join(lines),
            meta={"hits": len(hits), "refs": [h.entry.ref for h in hits], "searched": messages},
        )

    def _around(self, index: HistoryIndex, a: HistoryArgs) -> ToolResult:
        radius = min(a.limit or DEFAULT_RADIUS, MAX_RADIUS)
        try:
            window, center = index.around(a.ref or "", radius)
        except ValueError as exc:
            return ToolResult.error(f"history: {exc}")
        first, last = window[0].index, window[-1].index
        date = center.created[:10] if center.created else "?"
        lines = [
            f"history: session {center.session_id} ({date}"
            f"{', this session' if center.session_id == index.current_session else ''}), "
            f"messages #{first}-#{last} around #{center.index}:"
        ]
        full_tools = a.kind in ("tool", "all")
        for entry in window:
            limit = AROUND_TOOL_TEXT if entry.role == "tool" and not full_tools else AROUND_TEXT
            mark = "»" if entry.index == center.index else " "
            lines.append(f"{mark} #{entry.index} {entry.role}: {_cut(entry.text, limit)}")
        return ToolResult(text="\n".join(lines), meta={"ref": center.ref, "count": len(window)})
