"""Helpers for subagent tests: scripted parent and children told apart by content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reasonix_core import events as ev
from reasonix_core.metrics import MetricsSink, RunMetrics
from reasonix_testkit import ContentScript, RecordedRequest, Reply, ToolCallSpec
from reasonix_testkit.script import first_user_text


def call(tool: str, call_id: str | None = None, /, **args: Any) -> Reply:
    return Reply(tool_calls=[ToolCallSpec(tool, json.dumps(args), id=call_id)])


def calls(*specs: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(tool_calls=[ToolCallSpec(name, json.dumps(args)) for name, args in specs])


def report(status: str, *criteria: dict[str, Any], unresolved: tuple[str, ...] = ()) -> Reply:
    return call(
        "complete_subtask",
        status=status,
        summary=f"reported {status}",
        acceptance_criteria=list(criteria),
        unresolved=list(unresolved),
    )


def criterion(text: str, kind: str, **evidence: Any) -> dict[str, Any]:
    return {"criterion": text, "evidence": {"kind": kind, **evidence}}


def install(server: Any) -> ContentScript:
    script = ContentScript()
    server.responder = script
    return script


def requests_of(server: Any, needle: str) -> list[RecordedRequest]:
    """The requests of the agent whose first user message holds ``needle``."""
    return [r for r in server.requests if needle in first_user_text(r.json)]


def metrics_of(events: list[ev.Event]) -> RunMetrics:
    sink = MetricsSink()
    for event in events:
        sink.record(event)
    return sink.finish("success")


def capsules(home: Path) -> list[dict[str, Any]]:
    return [
        json.loads(p.read_text())
        for p in sorted((home / "sessions" / "subagents").rglob("*.capsule.json"))
    ]


def tool_names(request: RecordedRequest) -> list[str]:
    assert request.json is not None
    return [t["function"]["name"] for t in request.json.get("tools", [])]
