"""One run's trajectory: what e2ebench keeps of a ``reasonix run``.

Built from the run's ``--metrics`` file (or, when the run was killed, its
``.partial`` snapshot, or the ``metrics`` field of the stream's result line) and
from its stream-json output, read tolerantly: tool calls come from the engine's
``tool_call_started`` / ``tool_call_finished`` events or from Claude Code-shaped
``assistant`` lines with ``tool_use`` content (and ``user`` lines with
``tool_result``), the final answer from the ``result`` line. The seed-003 fields
are copied from the metrics when present and recorded as null when not: nothing
is invented.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The seed-003 trajectory fields, copied from RunMetrics by name.
SEED_FIELDS = (
    "ttft_ms",
    "stream_retries",
    "reasoning_replays",
    "empty_final_retries",
    "executor_requests",
    "planner_requests",
    "compaction_requests",
    "wall_ms",
    "cache_hit_tokens",
    "cache_miss_tokens",
    "cache_breaks",
)

# Why a run did not reach a verdict, or the verdict (the `status` of a trajectory).
STATUSES = (
    "solved",
    "unsolved",
    "verify_error",  # the verifier crashed or timed out: no verdict
    "agent_error",  # `reasonix run` failed to start or died without a result line
    "timeout",  # the run outlived the task's timeout and was killed
    "replay_mismatch",  # a request differed from the cassette
    "skipped",  # not started: the --max-cost cap was reached
)


def read_stream(text: str) -> dict[str, Any]:
    """Tool calls, the final answer and the result line of a stream-json output."""
    calls: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    result: dict[str, Any] | None = None
    for item in _stream_items(text):
        kind = item.get("type")
        if kind == "system":
            # Claude Code's shape carries the engine's own events as system subtypes.
            kind = item.get("subtype")
        if kind == "tool_call_started":
            call = {
                "id": item.get("call_id"),
                "name": item.get("name"),
                "arguments": item.get("arguments"),
                "is_error": None,
            }
            calls.append(call)
            by_id[str(call["id"])] = call
        elif kind == "tool_call_finished":
            call = by_id.get(str(item.get("call_id")))
            if call is None:
                call = {
                    "id": item.get("call_id"),
                    "name": item.get("name"),
                    "arguments": None,
                    "is_error": None,
                }
                calls.append(call)
            call["is_error"] = bool(item.get("is_error"))
        elif kind in ("assistant", "user"):
            _message_calls(item, calls, by_id)
        elif kind == "result":
            result = item
    answer = None
    if result is not None and not result.get("is_error") and isinstance(result.get("result"), str):
        answer = result["result"]
    return {"tool_calls": calls, "final_answer": answer, "result": result}


def _stream_items(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a stream-json output, one a line; other lines skipped."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            yield item


def _message_calls(
    item: dict[str, Any], calls: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    """Claude Code's shape: tool_use blocks of a message start calls, tool_result blocks end them."""
    content = (item.get("message") or {}).get("content")
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and str(block.get("id")) not in by_id:
            arguments = block.get("input")
            call = {
                "id": block.get("id"),
                "name": block.get("name"),
                "arguments": arguments
                if isinstance(arguments, str)
                else json.dumps(arguments, ensure_ascii=False),
                "is_error": None,
            }
            calls.append(call)
            by_id[str(call["id"])] = call
        elif block.get("type") == "tool_result":
            call = by_id.get(str(block.get("tool_use_id")))
            if call is not None:
                call["is_error"] = bool(block.get("is_error"))


def read_metrics(path: Path, result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The run's RunMetrics: the final file, else the partial snapshot, else the result line's."""
    for candidate in (path, path.with_name(path.name + ".partial")):
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict):
            return data
    if result is not None and isinstance(result.get("metrics"), dict):
        return result["metrics"]
    return None


def seed_fields(metrics: dict[str, Any] | None) -> dict[str, Any]:
    """The seed-003 fields from ``metrics``; each missing one is null."""
    metrics = metrics or {}
    out = {name: metrics.get(name) for name in SEED_FIELDS}
    hit, miss = metrics.get("cache_hit_tokens"), metrics.get("cache_miss_tokens")
    out["cache_hit_ratio"] = (
        hit / (hit + miss)
        if isinstance(hit, int) and isinstance(miss, int) and hit + miss
        else None
    )
    return out
