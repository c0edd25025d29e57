"""What each subagent a tool call spawned spent, kept beside the call's result.

A live subagent card adds up its child's own ``UsageReported`` events (tokens,
cache hits, cost). The parent's transcript keeps only the child's rendered
result, so a resumed card could not show them; this collector sums the same
events per spawning call and the tool batch stores them in the result message's
``meta`` (local: never sent, so no request byte changes)."""

from __future__ import annotations

import math
from pathlib import Path as FilePath
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.session import iter_records

#: ``Message.meta`` key of a tool result: {fleet item id, or "" for a task's one
#: child: {prompt_tokens, completion_tokens, cache_hit_tokens, cost, currency}}.
SUBAGENT_USAGE = "subagent_usage"

Path = tuple[str, ...]


class ChildUsage:
    """Sums the usage of the children this agent's tool calls spawn, by call."""

    def __init__(self, agent_path: Path) -> None:
        self.agent_path = agent_path  # this agent's own path: its direct children only
        self._owner: dict[Path, tuple[str, str]] = {}  # child path -> (call id, item)
        self._by_call: dict[str, dict[str, dict[str, Any]]] = {}

    def observe(self, event: ev.Event) -> None:
        match event:
            case ev.SubagentStarted(child_path=child, tool_call_id=call_id) if (
                call_id and event.agent_path == self.agent_path
            ):
                self._owner[child] = (call_id, event.fleet_item)
            case ev.UsageReported(usage=usage) if event.agent_path in self._owner:
                call_id, item = self._owner[event.agent_path]
                spent = self._by_call.setdefault(call_id, {}).setdefault(
                    item,
                    {"prompt_tokens": 0, "completion_tokens": 0, "cache_hit_tokens": 0,
                     "cost": 0.0, "currency": event.currency},
                )  # fmt: skip
                spent["prompt_tokens"] += usage.prompt_tokens
                spent["completion_tokens"] += usage.completion_tokens
                spent["cache_hit_tokens"] += usage.cache_hit_tokens
                spent["cost"] += event.cost
                spent["currency"] = event.currency
            case _:
                pass

    def take(self, call_id: str) -> dict[str, dict[str, Any]] | None:
        """What the children of ``call_id`` spent (forgotten here), or None."""
        self._owner = {p: o for p, o in self._owner.items() if o[0] != call_id}
        return self._by_call.pop(call_id, None)


def saved_children_cost(session_path: FilePath) -> float:
    """What the subagents of a saved session's tool calls cost, as their results'
    ``meta`` kept it: their requests are recorded in their own session files (or
    nowhere, when ephemeral), never in this session's request records. Every
    message record counts, rewound ones too (the money was spent); a malformed
    entry (the file is anyone's to edit) counts nothing."""
    costs: list[float] = []
    for _, record in iter_records(session_path):
        message = record.get("message") if record.get("type") == "message" else None
        meta = message.get("meta") if isinstance(message, dict) else None
        spent = meta.get(SUBAGENT_USAGE) if isinstance(meta, dict) else None
        if not isinstance(spent, dict):
            continue
        for child in spent.values():
            cost = child.get("cost") if isinstance(child, dict) else None
            if isinstance(cost, int | float) and not isinstance(cost, bool):
                if math.isfinite(cost) and cost > 0:
                    costs.append(float(cost))
    return math.fsum(costs)
