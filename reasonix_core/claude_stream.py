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
- with ``--include-partial-messages``, each answer also as it streams:
  ``{"type": "stream_event", "event": {...}}`` lines carrying Anthropic's
  streaming events (:class:`_PartialMessages`);
- last the ``result`` line (:func:`result_line`; one per turn in the
  claude-agent-sdk mode, :mod:`reasonix_core.stream_session`).

Thinking blocks carry an empty ``signature``: claude-agent-sdk's parser requires
the field, and Reasonix passes no provider's signature on.

:class:`ClaudeShape` also tallies what the result line reports beyond the metrics:
the time spent in model requests (``duration_api_ms``), the denied tool calls
(``permission_denials``) and the run's warnings (``warnings``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.budget import BUDGET_EXHAUSTED_KIND
from reasonix_core.errors import DISK_FULL_KIND
from reasonix_core.metrics import RunMetrics
from reasonix_core.permission_modes import claude_word

__all__ = ["SCHEMA_VERSION", "ClaudeShape", "result_line", "turn_outcome"]

#: 1: the event lines of earlier releases (``{"type": "turn_started", ...}``);
#: 2: Claude Code's shape, the events as ``system`` lines.
SCHEMA_VERSION = 2


class ClaudeShape:
    """Turns the run's events into Claude Code's lines and tallies the result's extras."""

    def __init__(
        self,
        *,
        session_id: str,
        model: str,
        clock: Callable[[], float] = time.monotonic,
        partial: bool = False,
    ):
        self.session_id = session_id
        self.model = model
        self._clock = clock
        # --include-partial-messages: the answer as it streams, as Claude Code's
        # ``stream_event`` lines (Anthropic's streaming events), beside the whole blocks.
        self._partial = _PartialMessages(self) if partial else None
        self.permission_denials: list[dict[str, Any]] = []
        # Every warning notice of the run (skipped skill files, unattachable
        # mentions, unavailable MCP servers...), in order: the one list the result
        # reports, whatever the output format.
        self.warnings: list[str] = []
        self._api_seconds = 0.0
        self._request_started: float | None = None
        self._step = 0
        self._message_id = _new_message_id()
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
            "permissionMode": claude_word(permission_preset),
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
        if self._partial is not None:
            out.extend(self._partial.lines(event))
        match event:
            case ev.StepStarted(step=step, model=model):
                out = self._flush() + out
                self._step = step
                self._message_id = _new_message_id()
                self.model = model or self.model
                if self._partial is not None:
                    out.extend(self._partial.start())
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
        out = self._partial.stop() if self._partial is not None else []
        if self._thinking:
            thinking = "".join(self._thinking)
            # The SDK's parser requires a signature on every thinking block;
            # Reasonix passes no provider's signature on: empty.
            block = {"type": "thinking", "thinking": thinking, "signature": ""}
            out.append(self._assistant(block))
        if self._text:
            out.append(self._assistant({"type": "text", "text": "".join(self._text)}))
        self._thinking, self._text = [], []
        return out

    @property
    def message_id(self) -> str:
        """The id of the answer being streamed: one per model request, unique across
        turns and runs of a session, as Claude Code's are (a program may key on it)."""
        return self._message_id

    def _assistant(self, block: dict[str, Any]) -> dict[str, Any]:
        message = {
            "id": self.message_id,
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


def turn_outcome(
    finished: ev.TurnFinished | None, error: ev.TurnFailed | None
) -> tuple[bool, str]:
    """Whether a turn succeeded, and its outcome for the metrics (``success``,
    ``max_steps``, ``error``, ``incomplete``). A turn stopped by --max-steps did
    not finish its task: scripts must see that."""
    ok = error is None and finished is not None and finished.stop_reason != "max_steps"
    if ok:
        return ok, "success"
    if finished is not None and finished.stop_reason == "max_steps":
        return ok, "max_steps"
    return ok, "error" if error is not None else "incomplete"


def result_line(
    *,
    ok: bool,
    outcome: str,
    text: str,
    finished: ev.TurnFinished | None,
    error: ev.TurnFailed | None,
    metrics: RunMetrics,
    session_id: str,
    duration_ms: int,
    shape: ClaudeShape | None,
) -> dict[str, Any]:
    """The ``result`` line: Claude Code's result fields (docs/CLI.md), then
    Reasonix's own. ``outcome``: the metrics' (``max_steps`` is Claude Code's
    ``error_max_turns``)."""
    if ok:
        subtype = "success"
    else:
        subtype = "error_max_turns" if outcome == "max_steps" else "error_during_execution"
        if error is not None and error.kind == BUDGET_EXHAUSTED_KIND:
            subtype = "error_max_budget"  # the message names which budget
        elif error is not None and error.kind == DISK_FULL_KIND:
            subtype = "error_disk_full"  # the message names the file
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": not ok,
        "result": text if ok else (error.error if error else f"the run did not finish ({outcome})"),
        "session_id": session_id,
        "num_turns": metrics.steps,
        "stop_reason": finished.stop_reason if finished else None,
        "duration_ms": duration_ms,
        "duration_api_ms": shape.duration_api_ms if shape is not None else 0,
        "usage": {
            # Uncached input only, as Claude Code counts it: a consumer adding
            # cache_read_input_tokens gets the whole prompt.
            "input_tokens": metrics.cache_miss_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": metrics.cache_hit_tokens,
            "output_tokens": metrics.completion_tokens,
            "cache_miss_input_tokens": metrics.cache_miss_tokens,
            # Claude Code's count of the provider's own searches (web_search = true).
            "server_tool_use": {"web_search_requests": metrics.web_search_requests},
        },
        "total_cost_usd": round(metrics.cost, 10) if metrics.currency == "USD" else None,
        "permission_denials": shape.permission_denials if shape is not None else [],
        "warnings": list(shape.warnings) if shape is not None else [],
        "total_cost": round(metrics.cost, 10),
        "currency": metrics.currency,
        "schema_version": SCHEMA_VERSION,
        "metrics": metrics.to_json(),
    }


class _PartialMessages:
    """``--include-partial-messages``: each main-agent answer as Anthropic's
    streaming events (``message_start``, a ``content_block_start`` /
    ``content_block_delta`` / ``content_block_stop`` run per block,
    ``message_stop``), each in a ``stream_event`` line as Claude Code writes them."""

    def __init__(self, shape: ClaudeShape) -> None:
        self._shape = shape
        self._open = False  # a message_start was sent and not yet stopped
        self._block: tuple[str, int] | None = None  # (kind, tool call index) of the open block
        self._index = -1

    def start(self) -> list[dict[str, Any]]:
        shape = self._shape
        message = {
            "id": shape.message_id, "type": "message", "role": "assistant",
            "model": shape.model, "content": [], "stop_reason": None,
        }  # fmt: skip
        self._open, self._block, self._index = True, None, -1
        return [self._line({"type": "message_start", "message": message})]

    def lines(self, event: ev.Event) -> list[dict[str, Any]]:
        if not self._open:
            return []
        match event:
            case ev.ReasoningDelta(text=text):
                start = {"type": "thinking", "thinking": "", "signature": ""}
                return self._delta(
                    ("thinking", 0), start, {"type": "thinking_delta", "thinking": text}
                )
            case ev.TextDelta(text=text):
                return self._delta(
                    ("text", 0), {"type": "text", "text": ""}, {"type": "text_delta", "text": text}
                )
            case ev.ToolCallDelta(index=index, call_id=call_id, name=name, arguments=fragment):
                start = {"type": "tool_use", "id": call_id or "", "name": name or "", "input": {}}
                delta = {"type": "input_json_delta", "partial_json": fragment}
                return self._delta(("tool_use", index), start, delta)
            case _:
                return []

    def stop(self) -> list[dict[str, Any]]:
        """The open block's and message's ends (nothing when none is open)."""
        if not self._open:
            return []
        out = self._close_block()
        out.append(self._line({"type": "message_stop"}))
        self._open = False
        return out

    def _delta(
        self, block: tuple[str, int], start: dict[str, Any], delta: dict[str, Any]
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._block != block:
            out.extend(self._close_block())
            self._block, self._index = block, self._index + 1
            out.append(
                self._line(
                    {"type": "content_block_start", "index": self._index, "content_block": start}
                )
            )
        out.append(
            self._line({"type": "content_block_delta", "index": self._index, "delta": delta})
        )
        return out

    def _close_block(self) -> list[dict[str, Any]]:
        if self._block is None:
            return []
        self._block = None
        return [self._line({"type": "content_block_stop", "index": self._index})]

    def _line(self, event: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "stream_event",
            "uuid": str(uuid.uuid4()),
            "session_id": self._shape.session_id,
            "event": event,
            "parent_tool_use_id": None,
        }


def _new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object Claude Code's ``input`` is; text that is
    not a JSON object is kept under ``_raw``."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}
