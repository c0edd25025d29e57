"""A session's cache account, read from its request records (``reasonix cache``, ``/cache``).

Per request: tokens, hit ratio, cost, and the break it caused (reason, the
bytes around the first difference, tokens and cost re-billed); per reason:
how many breaks and what they cost; totals, and the cost the session would
have had without them. The records are a file anyone could edit, so each is
validated at this edge and a bad one is skipped (and counted), never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reasonix_core.agent.cache_ledger import one_line
from reasonix_core.agent.child_usage import saved_children_cost
from reasonix_core.agent.prefix_change import PrefixChangeReason
from reasonix_core.agent.session import read_request_records

__all__ = ["BreakReasonTotal", "CacheReport", "RequestRecord", "build_report", "render_text"]


class BreakRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    reason: str = Field(max_length=64)
    first_diff_byte: int | None = Field(default=None, ge=0)
    rebilled_tokens: int = Field(ge=0)
    rebilled_cost: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    context: tuple[str, str, str] = ("", "", "")


class RequestRecord(BaseModel):
    """One line of ``<id>.requests.ndjson`` (written by ``cache_ledger.py``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    request: int = Field(ge=1)
    at: str = ""
    source: str = "executor"
    model: str = ""
    prompt_tokens: int = Field(default=0, ge=0)
    cache_hit_tokens: int = Field(default=0, ge=0)
    cache_miss_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cost: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    currency: str = Field(default="USD", max_length=8)
    ttft_ms: int | None = None
    broke: BreakRecord | None = Field(default=None, alias="break")
    agent_path: list[str] = Field(default_factory=list)  # a subagent's request
    estimated: bool = False  # the provider reported no usage: counted locally

    @property
    def hit_ratio(self) -> float:
        total = self.cache_hit_tokens + self.cache_miss_tokens
        return self.cache_hit_tokens / total if total else 0.0


@dataclass
class BreakReasonTotal:
    count: int = 0
    rebilled_tokens: int = 0
    rebilled_cost: float = 0.0


@dataclass(frozen=True, slots=True)
class SavedGauges:
    """What the status bar's gauges said when the session was last used: the
    context and last cache hit of the session's own last request, the cache
    average over its requests, and what the whole session cost."""

    context_tokens: int
    last_cache_pct: float | None
    cache_hit_tokens: int
    prompt_tokens: int
    cost: float
    currency: str
    estimated: bool


@dataclass
class CacheReport:
    session_id: str
    requests: list[RequestRecord]
    skipped: int = 0
    by_reason: dict[str, BreakReasonTotal] = field(default_factory=dict)
    # What subagents cost whose requests are in their own files, not these records
    # (``child_usage.saved_children_cost``): the live status bar counted them.
    children_cost: float = 0.0

    def _sum(self, name: str) -> int:
        return sum(getattr(r, name) for r in self.requests)

    @property
    def currency(self) -> str:
        currencies = {r.currency for r in self.requests}
        return currencies.pop() if len(currencies) == 1 else ("USD" if not currencies else "mixed")

    @property
    def cost(self) -> float:
        """The session's cost; 0 when it was priced in several currencies (never
        summed across them, as in RunMetrics: each request shows its own)."""
        if self.currency == "mixed":
            return 0.0
        return math.fsum(r.cost for r in self.requests)

    def gauges(self) -> SavedGauges | None:
        """The gauges as the last request left them (None: no request of its own)."""
        own = [r for r in self.requests if not r.agent_path]
        chain = [r for r in own if r.source != "compaction"] or own
        if not chain:
            return None
        last = chain[-1]
        return SavedGauges(
            context_tokens=last.prompt_tokens + last.completion_tokens,
            last_cache_pct=(100 * last.cache_hit_tokens / last.prompt_tokens)
            if last.prompt_tokens
            else None,
            cache_hit_tokens=sum(r.cache_hit_tokens for r in own),
            prompt_tokens=sum(r.prompt_tokens for r in own),
            cost=self.cost + self.children_cost,
            currency=self.currency if self.currency != "mixed" else last.currency,
            estimated=any(r.estimated for r in own),
        )

    @property
    def rebilled_cost(self) -> float:
        if self.currency == "mixed":
            return 0.0
        return math.fsum(t.rebilled_cost for t in self.by_reason.values())

    @property
    def rebilled_tokens(self) -> int:
        return sum(t.rebilled_tokens for t in self.by_reason.values())

    @property
    def cost_without_breaks(self) -> float:
        return max(0.0, self.cost - self.rebilled_cost)

    @property
    def unexplained(self) -> int:
        total = self.by_reason.get(PrefixChangeReason.UNEXPLAINED)
        return total.count if total else 0

    @property
    def hit_ratio(self) -> float:
        hit, miss = self._sum("cache_hit_tokens"), self._sum("cache_miss_tokens")
        return hit / (hit + miss) if hit + miss else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "requests": [
                {
                    **r.model_dump(by_alias=True, exclude={"broke"}),
                    "hit_ratio": round(r.hit_ratio, 4),
                }
                | ({"break": r.broke.model_dump()} if r.broke else {})
                for r in self.requests
            ],
            "breaks_by_reason": {
                reason: {
                    "count": t.count,
                    "rebilled_tokens": t.rebilled_tokens,
                    "rebilled_cost": round(t.rebilled_cost, 10),
                }
                for reason, t in self.by_reason.items()
            },
            "totals": {
                "requests": len(self.requests),
                "prompt_tokens": self._sum("prompt_tokens"),
                "cache_hit_tokens": self._sum("cache_hit_tokens"),
                "cache_miss_tokens": self._sum("cache_miss_tokens"),
                "completion_tokens": self._sum("completion_tokens"),
                "hit_ratio": round(self.hit_ratio, 4),
                "cost": round(self.cost, 10),
                "currency": self.currency,
                "rebilled_tokens": self.rebilled_tokens,
                "rebilled_cost": round(self.rebilled_cost, 10),
                "cost_without_breaks": round(self.cost_without_breaks, 10),
            },
            "unexplained": self.unexplained,
            "skipped_records": self.skipped,
        }


def build_report(
    session_id: str, records: Iterable[dict[str, Any]], *, children_cost: float = 0.0
) -> CacheReport:
    report = CacheReport(session_id=session_id, requests=[], children_cost=children_cost)
    for raw in records:
        try:
            record = RequestRecord.model_validate(raw)
        except ValidationError:
            report.skipped += 1
            continue
        report.requests.append(record)
        if record.broke is not None:
            total = report.by_reason.setdefault(record.broke.reason, BreakReasonTotal())
            total.count += 1
            total.rebilled_tokens += record.broke.rebilled_tokens
            total.rebilled_cost += record.broke.rebilled_cost
    return report


def _money(amount: float, currency: str) -> str:
    return f"{amount:.6f} {currency}"


def _table(rows: Sequence[Sequence[str]], numeric: range) -> list[str]:
    """Columns padded to their widest cell; the ``numeric`` ones right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(w) if i in numeric else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def render_text(report: CacheReport) -> str:
    """The report as plain text (the CLI prints it; the TUI view shows it)."""
    cur = report.currency
    lines = [f"session {one_line(report.session_id, 80)}: {len(report.requests)} requests"]
    if not report.requests:
        lines.append("no billed requests recorded yet")
        return "\n".join(lines) + "\n"
    lines += ["", *_request_table(report)]
    broken = [r for r in report.requests if r.broke is not None]
    if broken:
        lines += ["", "breaks:", *_break_lines(broken, cur), "", "by reason:"]
        for reason, t in sorted(report.by_reason.items()):
            lines.append(
                f"  {one_line(reason, 24)}: {t.count} break{'s' if t.count != 1 else ''}, "
                f"{t.rebilled_tokens:,} tokens, {_money(t.rebilled_cost, cur)}"
            )
    prompt = sum(r.prompt_tokens for r in report.requests)
    hit = sum(r.cache_hit_tokens for r in report.requests)
    lines += [
        "",
        f"total: {prompt:,} prompt tokens, {hit:,} from the cache "
        f"({100 * report.hit_ratio:.1f}%)",
        f"cost {_money(report.cost, cur)}; without breaks: "
        f"{_money(report.cost_without_breaks, cur)}",
        f"re-billed by breaks: {report.rebilled_tokens:,} tokens, "
        f"{_money(report.rebilled_cost, cur)}",
    ]
    if report.unexplained:
        lines.append(f"{report.unexplained} unexplained break(s): a prefix changed with no reason")
    if report.skipped:
        lines.append(f"{report.skipped} unreadable record(s) skipped")
    return "\n".join(lines) + "\n"


def _request_table(report: CacheReport) -> list[str]:
    """One row per billed request: tokens, hit ratio and cost. It fits 80 columns (the
    TUI's /cache view): a break is listed below the table, by request number, not in a
    column of its own."""
    rows = [["#", "source", "model", "prompt", "hit", "miss", "out", "hit %", "cost"]]
    for r in report.requests:
        rows.append(
            [
                str(r.request),
                one_line(r.source, 12),
                one_line(r.model, 18),
                f"{r.prompt_tokens:,}",
                f"{r.cache_hit_tokens:,}",
                f"{r.cache_miss_tokens:,}",
                f"{r.completion_tokens:,}",
                f"{100 * r.hit_ratio:.1f}",
                f"{r.cost:.6f}",
            ]
        )
    return _table(rows, numeric=range(3, 9))


def _break_lines(broken: list[RequestRecord], cur: str) -> list[str]:
    """Each break: where the prefix changed, what it re-billed, and the bytes around it."""
    lines: list[str] = []
    for r in broken:
        b = r.broke
        assert b is not None
        where = "unknown byte" if b.first_diff_byte is None else f"byte {b.first_diff_byte:,}"
        lines.append(
            f"  request {r.request}: {one_line(b.reason, 24)} at {where}; "
            f"re-billed {b.rebilled_tokens:,} tokens, {_money(b.rebilled_cost, cur)}"
        )
        common, was, now = b.context
        if was or now or common:
            lead = "    " + (f"…{one_line(common[-40:], 40)}" if common else "")
            if was:
                lines.append(f"{lead}[{one_line(was, 40)}]  was")
            lines.append(f"{lead}[{one_line(now, 40)}]  now")
    return lines


def session_report(session_path: Path) -> CacheReport:
    """A saved session's report: its request records, plus what its subagents cost."""
    return build_report(
        session_path.stem,
        read_request_records(session_path),
        children_cost=saved_children_cost(session_path),
    )
