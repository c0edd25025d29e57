"""Immutable per-server status records: what ``/mcp`` and ``reasonix mcp list`` show.

A record never carries a session id, a URL, a header, an environment value or
the raw text of an exception (those may embed secrets): only the transport, a
phase, counts, and an error *class* plus a short reason from a fixed vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

Phase = Literal[
    "pending",  # declared; the host has not started it (yet)
    "starting",  # first connection attempt in progress
    "ready",  # initialised, lists fetched; calls are served
    "reconnecting",  # a ready session dropped or is being rebuilt
    "failed",  # gave up; `reason` says why; /mcp reconnect retries
    "disabled",  # enabled = false
    "invalid",  # the declaration itself is wrong; `reason` names the problem
    "stopped",  # the host closed
]

#: Phases in which a caller may still wait for the server to become ready.
WAITABLE: frozenset[str] = frozenset({"pending", "starting", "reconnecting"})


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerStatus:
    name: str
    transport: str  # "stdio" | "http" | "sse"
    phase: Phase = "pending"
    tools: int = 0
    prompts: int = 0
    resources: int = 0
    reconnects: int = 0
    generation: int = 0
    # Class name of the last failure ("TimeoutError", "ProcessExited", ...), "" if none.
    error_class: str = ""
    # A short, redacted reason ("startup timed out after 30s"); never raw exception text.
    reason: str = ""
    source: str = ""  # the file the declaration came from
    concurrency: str = "parallel"

    def evolve(self, **changes: object) -> McpServerStatus:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "phase": self.phase,
            "tools": self.tools,
            "prompts": self.prompts,
            "resources": self.resources,
            "reconnects": self.reconnects,
            "error_class": self.error_class,
            "reason": self.reason,
            "source": self.source,
            "concurrency": self.concurrency,
        }
