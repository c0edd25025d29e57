"""RunMetrics (seed 003): the machine-readable account of one run.

A :class:`MetricsSink` consumes the same event stream as every surface. Totals
are sums of per-call usage as the provider reported it, so they reconcile
exactly. While a run is in progress the sink refreshes ``PATH.partial``
(``complete: false``, a lower bound); at the end it writes ``PATH`` and removes
the partial, so the two are never read together.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.prefix_change import PrefixChangeReason
from reasonix_core.errors import EMPTY_RESPONSE_KIND, MISSING_REASONING_KIND, DiskFull
from reasonix_core.fsutil import atomic_write_text

SUBAGENT_COUNTERS = (
    "subagent_runs",
    "subagent_nested_runs",
    "subagent_tool_calls",
    "subagent_mutations",
    "duplicate_work_paths",
    "completion_reports",
    "completions_prose_only",
    "false_completions",
    "criterion_downgrades",
    "write_scope_violations",
)


@dataclass
class SourceUsage:
    """Calls, tokens and cost of one source (executor, compaction...)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    cost: float = 0.0


@dataclass
class CacheBreakRecord:
    """One request that was not an append-only extension of its agent's previous one."""

    request: int
    reason: str
    first_diff_byte: int | None
    rebilled_tokens: int
    rebilled_cost: float


# The per-role request counts (seed 003 trajectory names), by UsageReported.source.
ROLE_REQUEST_FIELDS = {
    "executor": "executor_requests",
    "planner": "planner_requests",
    "compaction": "compaction_requests",
}


@dataclass
class RunMetrics:
    """What one run used and how it went (``--metrics``, the json result)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    reasoning_tokens: int = 0
    # Searches the provider ran server-side (provider web search; billed per search).
    web_search_requests: int = 0
    steps: int = 0
    # Requests whose usage the provider did not report: counted locally (an estimate).
    estimated_usage_requests: int = 0
    retries: int = 0
    compactions: int = 0
    tool_calls: int = 0
    tool_failures: int = 0
    tool_calls_by_name: dict[str, int] = field(default_factory=dict)
    usage_by_source: dict[str, SourceUsage] = field(default_factory=dict)
    prefix_change_reason_counts: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0
    currency: str = "USD"
    # Per ISO currency when a run mixes currencies; never summed across them.
    original_costs: dict[str, float] = field(default_factory=dict)
    duration_ms: int = 0
    outcome: str = "running"
    complete: bool = False
    subagent_runs: int = 0
    subagent_nested_runs: int = 0
    subagent_tool_calls: int = 0
    subagent_mutations: int = 0
    duplicate_work_paths: int = 0
    completion_reports: int = 0
    completions_prose_only: int = 0
    false_completions: int = 0
    criterion_downgrades: int = 0
    write_scope_violations: int = 0
    # Cache accounting and the trajectory fields of seed 003 (e2ebench reads them).
    cache_breaks: list[CacheBreakRecord] = field(default_factory=list)
    ttft_ms: list[int | None] = field(default_factory=list)
    stream_retries: int = 0
    reasoning_replays: int = 0
    empty_final_retries: int = 0
    # Retries of a request whose tool calls came without their reasoning (DeepSeek).
    missing_reasoning_retries: int = 0
    executor_requests: int = 0
    planner_requests: int = 0
    compaction_requests: int = 0
    wall_ms: int = 0
    # Coordinator routes taken (RouteDecided), by route name (docs/MODES.md).
    routes: dict[str, int] = field(default_factory=dict)
    # Goal mode: rounds the goal driver admitted (GoalRound).
    goal_rounds: int = 0
    # Hooks (docs/HOOKS.md): runs of configured hooks, and those that blocked.
    hook_runs: int = 0
    hook_blocks: int = 0
    # The experiment arm (seed 000 §3.17): "full", or what --ablate took away
    # ("no-subagent"); compare arms on the counts above, not on this label.
    arm: str = "full"

    @property
    def cache_hit_ratio(self) -> float:
        total = self.cache_hit_tokens + self.cache_miss_tokens
        return self.cache_hit_tokens / total if total else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost"] = round(self.cost, 10)
        data["original_costs"] = {k: round(v, 10) for k, v in self.original_costs.items()}
        for bucket in data["usage_by_source"].values():
            bucket["cost"] = round(bucket["cost"], 10)
        for entry in data["cache_breaks"]:
            entry["rebilled_cost"] = round(entry["rebilled_cost"], 10)
        return data


class MetricsSink:
    """Accumulates RunMetrics from events; optionally mirrors them to a file."""

    def __init__(self, path: Path | None = None, *, snapshot_every: float = 0.2) -> None:
        self.metrics = RunMetrics()
        self.path = path
        self.snapshot_every = snapshot_every
        self._started = time.monotonic()
        self._last_snapshot = 0.0
        # The partial snapshot is best effort: once the disk had no room for it,
        # the run goes on without snapshots and finish() writes (or fails) once.
        self._snapshots_failed = False
        # Path -> the first child that wrote it (duplicate_work_paths).
        self._written_by: dict[str, tuple[str, ...]] = {}
        self._duplicates: set[str] = set()

    @property
    def partial_path(self) -> Path | None:
        return self.path.with_name(self.path.name + ".partial") if self.path else None

    def record(self, event: ev.Event) -> None:
        m = self.metrics
        if isinstance(event, ev.UsageReported):
            self._usage_reported(event)
            self._snapshot()
        elif isinstance(event, ev.Retrying):
            m.retries += 1
            if event.error_kind == EMPTY_RESPONSE_KIND:
                m.empty_final_retries += 1
            elif event.error_kind == MISSING_REASONING_KIND:
                m.missing_reasoning_retries += 1
            else:
                m.stream_retries += 1
        elif (
            isinstance(event, ev.PrefixChanged)
            and event.reason == PrefixChangeReason.REASONING_REPLAY
        ):
            m.reasoning_replays += 1
        elif isinstance(event, ev.CacheBroken):
            m.cache_breaks.append(
                CacheBreakRecord(
                    request=event.request,
                    reason=event.reason,
                    first_diff_byte=event.first_diff_byte,
                    rebilled_tokens=event.rebilled_tokens,
                    rebilled_cost=event.rebilled_cost,
                )
            )
        elif isinstance(event, ev.RouteDecided):
            m.routes[event.route] = m.routes.get(event.route, 0) + 1
        elif isinstance(event, ev.GoalRound):
            m.goal_rounds += 1
        elif isinstance(event, ev.HookRan):
            m.hook_runs += 1
            if event.outcome == "blocked":
                m.hook_blocks += 1
        elif isinstance(event, ev.CompactionFinished):
            # Only a compaction that changed the view counts (a blocked one did nothing).
            if event.tokens_after is not None:
                m.compactions += 1
        elif isinstance(event, ev.PrefixChanged):
            m.prefix_change_reason_counts[event.reason] = (
                m.prefix_change_reason_counts.get(event.reason, 0) + 1
            )
        elif isinstance(event, ev.ToolCallFinished):
            m.tool_calls += 1
            if event.is_error:
                m.tool_failures += 1
            m.tool_calls_by_name[event.name] = m.tool_calls_by_name.get(event.name, 0) + 1
            if event.agent_path:
                m.subagent_tool_calls += 1
            self._snapshot()
        elif isinstance(event, ev.SubagentStarted):
            # In the spawner's stream: a spawner that is itself a child makes it nested.
            m.subagent_runs += 1
            if len(event.agent_path) > 0:
                m.subagent_nested_runs += 1
        elif isinstance(event, ev.SubagentFinished):
            self._subagent_finished(event)
            self._snapshot()

    def _usage_reported(self, event: ev.UsageReported) -> None:
        """One model request: tokens in total and by source, its role, cost by currency."""
        m = self.metrics
        u = event.usage
        m.steps += 1
        if u.estimated:
            m.estimated_usage_requests += 1
        m.prompt_tokens += u.prompt_tokens
        m.completion_tokens += u.completion_tokens
        m.cache_hit_tokens += u.cache_hit_tokens
        m.cache_miss_tokens += u.cache_miss_tokens
        m.reasoning_tokens += u.reasoning_tokens
        m.web_search_requests += u.web_search_requests
        bucket = m.usage_by_source.setdefault(event.source or "executor", SourceUsage())
        bucket.calls += 1
        bucket.prompt_tokens += u.prompt_tokens
        bucket.completion_tokens += u.completion_tokens
        bucket.cache_hit_tokens += u.cache_hit_tokens
        bucket.cache_miss_tokens += u.cache_miss_tokens
        bucket.cost += event.cost
        role = ROLE_REQUEST_FIELDS.get(event.source or "executor")
        if role is not None:
            setattr(m, role, getattr(m, role) + 1)
        m.ttft_ms.append(event.ttft_ms)
        m.original_costs[event.currency] = m.original_costs.get(event.currency, 0.0) + event.cost
        if len(m.original_costs) == 1:
            m.currency = event.currency
            m.cost = m.original_costs[event.currency]
        else:
            m.currency = "mixed"
            m.cost = 0.0

    def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        m = self.metrics
        m.subagent_mutations += len(event.mutations)
        for path in event.mutations:
            first = self._written_by.setdefault(path, event.child_path)
            if first != event.child_path and path not in self._duplicates:
                self._duplicates.add(path)
                m.duplicate_work_paths += 1
        if event.completion == "report":
            m.completion_reports += 1
        elif event.completion == "prose":
            m.completions_prose_only += 1
        if event.claimed_status == "complete" and event.status != "complete":
            m.false_completions += 1
        m.criterion_downgrades += event.downgrades
        m.write_scope_violations += len(event.violations)

    def _snapshot(self) -> None:
        if self.path is None or self._snapshots_failed:
            return
        now = time.monotonic()
        if self._last_snapshot and now - self._last_snapshot < self.snapshot_every:
            return
        self._last_snapshot = now
        self.metrics.duration_ms = self.metrics.wall_ms = int((now - self._started) * 1000)
        self.metrics.complete = False
        # No fsync: the partial must survive the process being killed, which the page
        # cache does, and the next snapshot replaces it. An fsync here blocked the event
        # loop for 5-15 ms every 0.2 s (bench_step_overhead.py --bash).
        try:
            _write_json(self.partial_path, self.metrics.to_json(), durable=False)  # type: ignore[arg-type]
        except DiskFull:
            self._snapshots_failed = True

    def finish(self, outcome: str) -> RunMetrics:
        """The complete metrics, written to ``path``: :class:`DiskFull` when the
        disk has no room for them (the metrics are set all the same)."""
        self.metrics.outcome = outcome
        self.metrics.complete = True
        self.metrics.duration_ms = int((time.monotonic() - self._started) * 1000)
        self.metrics.wall_ms = self.metrics.duration_ms
        if self.path is not None:
            _write_json(self.path, self.metrics.to_json())
            partial = self.partial_path
            if partial is not None and partial.exists():
                partial.unlink()
        return self.metrics


def _write_json(path: Path, data: dict[str, Any], *, durable: bool = True) -> None:
    """Raises OSError, :class:`DiskFull` when the disk has no room for it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(data, indent=2) + "\n", durable=durable)
    except OSError as exc:
        if DiskFull.caused(exc):
            raise DiskFull(path, exc.strerror) from None
        raise
