"""The bench summary (per arm, side by side) and the diff of two bench runs.

Every figure is derived from trajectories only, so ``reasonix bench report`` on a
finished folder gives the same numbers the run printed.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import median
from typing import Any

from reasonix_core.bench.trajectory import STATUSES


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def solved_then_broken(runs: list[dict[str, Any]]) -> int:
    """Tasks solved by one repetition and not by a later one (of the same arm)."""
    by_task: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for t in runs:
        if t.get("status") != "skipped":
            by_task[t["task"]].append((int(t.get("rep", 1)), bool(t.get("solved"))))
    count = 0
    for reps in by_task.values():
        reps.sort()
        seen_solved = False
        for _, solved in reps:
            if seen_solved and not solved:
                count += 1
                break
            seen_solved = seen_solved or solved
    return count


def arm_stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    attempted = [t for t in runs if t.get("status") != "skipped"]
    measured = [t for t in attempted if isinstance(t.get("metrics"), dict)]
    solved = sum(1 for t in attempted if t.get("solved"))
    statuses = {s: 0 for s in STATUSES}
    for t in runs:
        statuses[t.get("status", "agent_error")] = statuses.get(t.get("status", ""), 0) + 1
    sources: set[str] = set()
    for t in measured:
        sources.update((t["metrics"].get("usage_by_source") or {}).keys())
    requests = {
        source: _mean(
            [
                float(
                    ((t["metrics"].get("usage_by_source") or {}).get(source) or {}).get("calls", 0)
                )
                for t in measured
            ]
        )
        for source in sorted(sources | {"executor"})
    }
    hit = sum(int(t.get("cache_hit_tokens") or 0) for t in measured)
    miss = sum(int(t.get("cache_miss_tokens") or 0) for t in measured)
    ttfts = [v for t in measured for v in (t.get("ttft_ms") or []) if isinstance(v, int | float)]
    walls = [int(t["wall_ms"]) for t in measured if isinstance(t.get("wall_ms"), int | float)]
    cost = sum(float(t.get("cost") or 0.0) for t in measured)
    currencies = {t.get("currency") for t in measured if t.get("currency")}
    return {
        "runs": len(runs),
        "attempted": len(attempted),
        "solved": solved,
        "solved_rate": solved / len(attempted) if attempted else None,
        "solved_then_broken": solved_then_broken(runs),
        "statuses": {k: v for k, v in statuses.items() if v},
        "requests_per_turn": requests,
        "cache_hit_ratio": hit / (hit + miss) if hit + miss else None,
        "median_ttft_ms": median(ttfts) if ttfts else None,
        "stream_retries": sum(int(t.get("stream_retries") or 0) for t in measured),
        "empty_final_retries": sum(int(t.get("empty_final_retries") or 0) for t in measured),
        "reasoning_replays": sum(int(t.get("reasoning_replays") or 0) for t in measured),
        "cost": cost,
        "currency": currencies.pop() if len(currencies) == 1 else ("mixed" if currencies else None),
        "cost_per_solved": cost / solved if solved else None,
        "wall_ms": sum(walls),
        "median_wall_ms": median(walls) if walls else None,
    }


def summarise(trajectories: list[dict[str, Any]]) -> dict[str, Any]:
    arms: dict[str, list[dict[str, Any]]] = defaultdict(list)
    tasks: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for t in trajectories:
        arms[t["arm"]].append(t)
        cell = tasks[t["task"]].setdefault(t["arm"], {"runs": 0, "solved": 0})
        cell["runs"] += 1
        cell["solved"] += 1 if t.get("solved") else 0
    categories = {t["task"]: t.get("category") for t in trajectories}
    return {
        "runs": len(trajectories),
        "arms": {name: arm_stats(runs) for name, runs in arms.items()},
        "tasks": {
            name: {"category": categories[name], "arms": cells}
            for name, cells in sorted(tasks.items())
        },
    }


# --------------------------------------------------------------------------- text

_ROWS: tuple[tuple[str, str], ...] = (
    ("runs", "runs"),
    ("solved", "solved"),
    ("solved_rate", "solved rate"),
    ("solved_then_broken", "solved then broken"),
    ("cache_hit_ratio", "cache hit ratio"),
    ("median_ttft_ms", "median TTFT ms"),
    ("stream_retries", "stream retries"),
    ("empty_final_retries", "empty-final retries"),
    ("cost", "cost"),
    ("cost_per_solved", "cost per solved"),
    ("wall_ms", "wall ms (sum)"),
    ("median_wall_ms", "wall ms (median)"),
)


def _fmt(key: str, value: object) -> str:
    if value is None:
        return "-"
    if key in ("solved_rate", "cache_hit_ratio"):
        return f"{value:.1%}"
    if key in ("cost", "cost_per_solved"):
        return f"{value:.6f}"
    if isinstance(value, float):
        return f"{value:.1f}" if value != int(value) else str(int(value))
    return str(value)


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def render_summary(summary: dict[str, Any]) -> str:
    arms = list(summary["arms"])
    rows = [["", *arms]]
    for key, label in _ROWS:
        rows.append([label, *(_fmt(key, summary["arms"][a].get(key)) for a in arms)])
    sources = sorted({s for a in arms for s in summary["arms"][a]["requests_per_turn"]})
    for source in sources:
        rows.append(
            [
                f"{source} requests/turn",
                *(_fmt("", summary["arms"][a]["requests_per_turn"].get(source)) for a in arms),
            ]
        )
    for status in STATUSES:
        if status in ("solved", "unsolved"):
            continue
        counts = [summary["arms"][a]["statuses"].get(status, 0) for a in arms]
        if any(counts):
            rows.append([status.replace("_", " "), *(str(c) for c in counts)])
    text = _table(rows)
    task_rows = [["task", "category", *arms]]
    for name, info in summary["tasks"].items():
        cells = []
        for a in arms:
            cell = info["arms"].get(a)
            cells.append(f"{cell['solved']}/{cell['runs']}" if cell else "-")
        task_rows.append([name, str(info["category"]), *cells])
    return text + "\n" + _table(task_rows)


def failure_detail(t: dict[str, Any]) -> str:
    """Why one run is not solved, in a line."""
    mismatch = (t.get("replay") or {}).get("mismatch")
    verify = t.get("verify") or {}
    if t.get("status") == "replay_mismatch" and mismatch:
        why = mismatch.get("message", "")
    elif t.get("status") == "skipped":
        why = t.get("reason", "")
    elif t.get("status") == "agent_error":
        why = (t.get("stderr_tail") or "").strip().splitlines()[-1:] or ["no result line"]
        why = why[0]
    elif t.get("status") == "timeout":
        why = "killed at the task's timeout"
    else:
        lines = (verify.get("stdout") or verify.get("stderr") or "").strip().splitlines()
        why = t.get("error") or (lines[-1] if lines else "")
    return " ".join(str(why).split())[:200]


def render_failures(trajectories: list[dict[str, Any]]) -> str:
    """One line per run that did not solve its task."""
    lines = [
        f"{t['task']}/{t['arm']}/{t.get('rep', 1)}: {t.get('status')}: {failure_detail(t)}"
        for t in trajectories
        if not t.get("solved")
    ]
    return ("\nnot solved:\n" + "\n".join(f"  {line}" for line in lines) + "\n") if lines else ""


# --------------------------------------------------------------------------- diff

_DIFF_METRICS = (
    "solved_rate",
    "cache_hit_ratio",
    "median_ttft_ms",
    "stream_retries",
    "empty_final_retries",
    "cost",
    "median_wall_ms",
)


def _groups(trajectories: list[dict[str, Any]], by_arm: bool) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in trajectories:
        out[f"{t['task']}/{t['arm']}" if by_arm else t["task"]].append(t)
    return out


def diff(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    """Per task (and arm, when both runs have the same arms) and metric: before, after."""
    by_arm = {t["arm"] for t in before} == {t["arm"] for t in after}
    a, b = _groups(before, by_arm), _groups(after, by_arm)
    rows: dict[str, dict[str, Any]] = {}
    for key in sorted(set(a) | set(b)):
        sa = arm_stats(a[key]) if key in a else None
        sb = arm_stats(b[key]) if key in b else None
        metrics = {}
        for m in (*_DIFF_METRICS, "executor_requests"):
            if m == "executor_requests":
                va = sa["requests_per_turn"].get("executor") if sa else None
                vb = sb["requests_per_turn"].get("executor") if sb else None
            else:
                va = sa.get(m) if sa else None
                vb = sb.get(m) if sb else None
            delta = vb - va if isinstance(va, int | float) and isinstance(vb, int | float) else None
            metrics[m] = {"before": va, "after": vb, "delta": delta}
        rows[key] = metrics
    regressions = sorted(
        k for k, m in rows.items()
        if (m["solved_rate"]["before"] or 0) > 0 and (m["solved_rate"]["after"] or 0) == 0
    )  # fmt: skip
    return {"by_arm": by_arm, "rows": rows, "solved_then_broken": regressions}


def render_diff(result: dict[str, Any]) -> str:
    rows = [["task" + ("/arm" if result["by_arm"] else ""), "metric", "before", "after", "delta"]]
    for key, metrics in result["rows"].items():
        for m, v in metrics.items():
            if v["before"] is None and v["after"] is None:
                continue
            rows.append(
                [key, m, _fmt(m, v["before"]), _fmt(m, v["after"]),
                 _fmt(m, v["delta"]) if v["delta"] is not None else "-"]
            )  # fmt: skip
    text = _table(rows)
    broken = result["solved_then_broken"]
    text += f"\nsolved before, unsolved after: {', '.join(broken) if broken else 'none'}\n"
    return text
