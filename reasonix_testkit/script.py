"""What a test scripts: the fixture "model"'s answers and faults, and what it recorded.

Every dialect reads the same items; how a :class:`Reply` field maps onto a
wire format is documented in each dialect module.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reasonix_core.bench.loopback_http import Verbatim
from reasonix_testkit.text import content_text, dumps_compact

# What a thinking DeepSeek "model" reasons before tool calls its script gave no reasoning.
STAND_IN_REASONING = "Calling a tool."


@dataclass(frozen=True, slots=True)
class ToolCallSpec:
    """One tool call the fixture "model" makes; ``arguments`` is streamed verbatim."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(slots=True, kw_only=True)
class Reply:
    """A scripted 200 answer (streamed or not, as the request asked)."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    # None: "tool_calls" when there are tool calls, else "stop". Any string goes.
    finish_reason: str | None = None
    chunk_size: int = 8  # characters per content / reasoning delta (<= 0: one delta)
    arg_chunk: int = 5  # characters per argument fragment (<= 0: one fragment)
    interleave_tool_calls: bool = False
    keepalives: int = 0  # ": keep-alive" comments before the first data event
    delay: float = 0.0  # seconds between data events
    drop_after: int | None = None  # close abruptly after this many data events
    error_event: dict[str, Any] | None = None  # in-band `data: {"error": ...}` then close
    garbage_line: str | None = None  # raw line after the content, then close
    usage: dict[str, Any] | None = None  # replaces the computed usage object
    model: str | None = None  # `model` field of the chunks (default: the requested one)
    omit_delta_on_finish: bool = False
    # DeepSeek's flavours with thinking on reason before tool calls, a stand-in when
    # ``reasoning`` is empty; True scripts a strict provider's fault: none at all.
    omit_reasoning: bool = False
    # Provider-side web searches run before the answer's text (the Anthropic dialect
    # streams a ``server_tool_use`` and a ``web_search_tool_result`` block per query,
    # with two results each; the Responses dialect a ``web_search_call`` item).
    web_searches: list[str] = field(default_factory=list)

    def deepseek_reasoning(self) -> str:
        """What a thinking DeepSeek "model" reasons in this answer (every dialect's
        ``deepseek`` flavour): the script's text, or :data:`STAND_IN_REASONING` before
        tool calls that have none, as DeepSeek always reasons first."""
        if self.reasoning or not self.tool_calls or self.omit_reasoning:
            return self.reasoning
        return STAND_IN_REASONING


@dataclass(frozen=True, slots=True)
class HttpError:
    """A scripted (or validation) HTTP error.

    ``envelope()`` is DeepSeek's / OpenAI's JSON error body; a dialect with
    another envelope (Anthropic) builds its own from ``message`` and ``type``.
    """

    status: int
    message: str
    type: str = "invalid_request_error"
    retry_after: str | float | None = None
    headers: dict[str, str] | None = None
    # Extensions: the envelope's `code` (None -> null) and a raw body that
    # replaces the envelope entirely (e.g. a proxy's HTML 502 page).
    code: str | None = "invalid_request_error"
    body: bytes | None = None

    def envelope(self) -> bytes:
        if self.body is not None:
            return self.body
        return dumps_compact(
            {
                "error": {
                    "message": self.message,
                    "type": self.type,
                    "param": None,
                    "code": self.code,
                }
            }
        ).encode()


@dataclass(frozen=True, slots=True)
class Stall:
    """200 + stream headers, no data (optionally keep-alives), then close after ``seconds``."""

    seconds: float
    keepalive_every: float = 0.0


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as received. ``status`` is 0 while the request is still being decided."""

    path: str
    headers: dict[str, str]
    body: bytes
    json: dict[str, Any] | None
    status: int


ScriptItem = Reply | HttpError | Stall | Verbatim
Responder = Callable[[RecordedRequest], ScriptItem]


def first_user_text(body: dict[str, Any] | None) -> str:
    """The text of the first user message of a request body, in any dialect
    (Chat's and Anthropic's ``messages``, Responses' ``input``); "" if none."""
    if not isinstance(body, dict):
        return ""
    items = body.get("messages")
    if not isinstance(items, list):
        items = body.get("input")
    if isinstance(items, str):
        return items
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("role") == "user":
            return content_text(item.get("content"))
    return ""


class ContentScript:
    """A responder that tells agents apart by what they send, not by arrival order.

    Concurrent agents (a parent and its subagents) interleave their requests, so
    a FIFO script cannot say which answer goes where. Each rule is a needle and
    its own FIFO of items: a request takes the next item of the first rule whose
    needle occurs in its first user message (the agent's task), so every agent
    follows its own script whatever the interleaving. Install it as
    ``server.responder = script``; a request no rule matches, or whose rule has
    run dry, gets the fixture's 500 (the responder raises).
    """

    def __init__(self) -> None:
        self._rules: list[tuple[str, deque[ScriptItem]]] = []
        self._lock = threading.Lock()

    def when(self, needle: str, *items: ScriptItem) -> ContentScript:
        """Script ``items`` for the agent whose first user message contains ``needle``."""
        with self._lock:
            for existing, queue in self._rules:
                if existing == needle:
                    queue.extend(items)
                    return self
            self._rules.append((needle, deque(items)))
        return self

    @property
    def pending(self) -> dict[str, int]:
        """Items not consumed yet, per needle."""
        with self._lock:
            return {needle: len(queue) for needle, queue in self._rules}

    def __call__(self, request: RecordedRequest) -> ScriptItem:
        text = first_user_text(request.json)
        with self._lock:
            for needle, queue in self._rules:
                if needle in text:
                    if not queue:
                        raise LookupError(f"the script for {needle!r} has run dry")
                    return queue.popleft()
        raise LookupError(f"no scripted agent matches the first user message {text[:120]!r}")
