"""``reasonix run`` output in Claude Code's shape (``-p --output-format json|stream-json``),
so tools written for Claude Code read it unchanged.

stream-json (schema version :data:`SCHEMA_VERSION`) is one JSON object per line:

- first ``{"type": "system", "subtype": "init", ...}``: session, model, tools, cwd,
  permission mode, MCP servers;
- ``{"type": "assistant", "message": {...}}`` for each content block of an answer as
  Claude Code writes them (``thinking``, ``text``, ``tool_use`` with the parsed
  ``input``), and ``{"type": "user", "message": {...}}`` with the ``tool_result`` of
  each call;
- every Reasonix event as well, as ``{"type": "system", "subtype": <event kind>, ...}``
  with the event's own fields (reasoning and text deltas, usage per request, prefix
  changes, retries, notices...; ``docs/CLI.md`` lists them);
- last the ``result`` line (built by :mod:`reasonix_core.headless`).

:class:`ClaudeShape` also tallies what the result line reports beyond the metrics:
the time spent in model requests (``duration_api_ms``), the denied tool calls
(``permission_denials``) and the run's warnings (``warnings``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from reasonix_core import events as ev

__all__ = ["PERMISSION_MODES", "SCHEMA_VERSION", "ClaudeShape"]

#: 1: the event lines of earlier releases (``{"type": "turn_started", ...}``);
#: 2: Claude Code's shape, the events as ``system`` lines.
SCHEMA_VERSION = 2

#: Reasonix's permission presets in Claude Code's ``permissionMode`` words.
PERMISSION_MODES = {"ask": "default", "auto": "acceptEdits", "yolo": "bypassPermissions"}


class ClaudeShape:
    """Turns the run's events into Claude Code's lines and tallies the result's extras."""

    def __init__(self, *, session_id: str, model: str, clock: Callable[[], float] = time.monotonic):
        self.session_id = session_id
        self.model = model
        self._clock = clock
        self.permission_denials: list[dict[str, Any]] = []
        # Every warning notice of the run (skipped skill files, unattachable
        # mentions, unavailable MCP servers...), in order: the one list the result
        # reports, whatever the output format.
        self.warnings: list[str] = []
        self._api_seconds = 0.0
        self._request_started: float | None = None
        self._step = 0
        self._thinking: list[str] = []
        self._text: list[str] = []
        self._inputs: dict[str, Any] = {}

    @property
    def duration_api_ms(self) -> int:
        return int(self._api_seconds * 1000)

    def init_line(
        self,
        *,
        cwd: str,
        tools: Sequence[str],
        permission_preset: str,
        mcp_servers: Sequence[dict[str, str]],
        version: str,
    ) -> dict[str, Any]:
        return {
            "type": "system",
            "subtype": "init",
            "session_id": self.session_id,
            "model": self.model,
            "cwd": cwd,
            "tools": list(tools),
            "mcp_servers": list(mcp_servers),
            "permissionMode": PERMISSION_MODES.get(permission_preset, permission_preset),
            "permission_preset": permission_preset,
            "apiKeySource": "none",
            "reasonix_version": version,
            "schema_version": SCHEMA_VERSION,
        }

    def observe(self, event: ev.Event) -> None:
        """Tally one event (every output format): the main agent's request time and
        warnings, every agent's denied calls."""
        if event.agent_path and not isinstance(event, ev.ToolCallStarted | ev.ToolCallFinished):
            return
        match event:
            case ev.StepStarted():
                self._request_started = self._clock()
            case ev.UsageReported(source="executor") if self._request_started is not None:
                self._api_seconds += self._clock() - self._request_started
                self._request_started = None
            case ev.TurnFailed() | ev.TurnFinished() if self._request_started is not None:
                self._api_seconds += self._clock() - self._request_started
                self._request_started = None
            case ev.Notice(level="warning", text=text):
                self.warnings.append(text)
            case ev.ToolCallStarted(call_id=call_id, arguments=arguments):
                self._inputs[call_id] = _input(arguments)
            case ev.ToolCallFinished(call_id=call_id, name=name, outcome="denied"):
                self.permission_denials.append(
                    {
                        "tool_name": name,
                        "tool_use_id": call_id,
                        "tool_input": self._inputs.get(call_id, {}),
                    }
                )
            case _:
                pass

    def lines(self, event: ev.Event) -> list[dict[str, Any]]:
        """The stream-json lines for one event: its ``system`` line, then any
        assistant or user message it completes."""
        data = event.to_json()
        kind = data.pop("type")
        out: list[dict[str, Any]] = [
            {"type": "system", "subtype": kind, "session_id": self.session_id, **data}
        ]
        if event.agent_path:
            # A subagent's events stay system lines: its text is not this answer's.
            return out
        match event:
            case ev.StepStarted(step=step, model=model):
                out = self._flush() + out
                self._step = step
                self.model = model or self.model
            case ev.ReasoningDelta(text=text):
                self._thinking.append(text)
            case ev.TextDelta(text=text):
                self._text.append(text)
            case ev.ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                out = self._flush() + out
                block = {"type": "tool_use", "id": call_id, "name": name}
                out.append(self._assistant({**block, "input": _input(arguments)}))
            case ev.ToolCallFinished(call_id=call_id, result=result, is_error=is_error):
                block = {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": result,
                    "is_error": is_error,
                }
                out.append(self._message("user", {"role": "user", "content": [block]}))
            case ev.TurnFinished() | ev.TurnFailed():
                out = self._flush() + out
            case _:
                pass
        return out

    def _flush(self) -> list[dict[str, Any]]:
        """The answer's thinking and text so far, one assistant line per block."""
        out = []
        if self._thinking:
            thinking = "".join(self._thinking)
            out.append(self._assistant({"type": "thinking", "thinking": thinking}))
        if self._text:
            out.append(self._assistant({"type": "text", "text": "".join(self._text)}))
        self._thinking, self._text = [], []
        return out

    def _assistant(self, block: dict[str, Any]) -> dict[str, Any]:
        message = {
            "id": f"msg_{self.session_id}_{self._step}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [block],
        }
        return self._message("assistant", message)

    def _message(self, role: str, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": role,
            "message": message,
            "parent_tool_use_id": None,
            "session_id": self.session_id,
        }


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object Claude Code's ``input`` is; text that is
    not a JSON object is kept under ``_raw``."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}
