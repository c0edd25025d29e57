"""The ``responses`` provider kind: the OpenAI Responses API and DeepSeek's ``/responses``.

Wire details follow shared/reference/wire-formats.md §5 and §7:

* **Request.** Always stateless (``store: false``, no ``previous_response_id``):
  the whole history is resent each step as ``input`` items, so the prefix stays
  byte-stable for the provider's prompt cache. The system message becomes
  ``instructions``; user and assistant text become ``message`` items; tool calls
  become ``function_call`` items carrying the exact stored ``arguments`` string;
  tool results become ``function_call_output`` items.
* **Reasoning replay.** DeepSeek (reasoning protocol ``deepseek``) requires the
  chain of thought of earlier tool turns back, as ``reasoning`` items with
  plain-text ``content``; like the ``openai`` kind's ``reasoning_content`` it is
  replayed on every earlier assistant turn whenever tools are sent and thinking
  is on (``""`` when nothing was stored or ``strip_chain_of_thought`` is set).
  Other hosts get **no** reasoning items: OpenAI only accepts its own reasoning
  items back (an ``rs_…`` id that is stored server-side, or
  ``encrypted_content``), and Reasonix keeps neither, only the summary text.
* **Tools** are flat ``{"type":"function","name","description","parameters"}``.
  Non-DeepSeek hosts also get ``"strict": false``: the Responses API otherwise
  normalises every function schema into strict mode, which makes optional
  parameters mandatory.
* **Stream.** ``event:`` + ``data:`` pairs with a ``sequence_number``; no
  ``[DONE]`` (one is tolerated). Text from ``response.output_text.delta``,
  reasoning from ``response.reasoning_text.delta`` (DeepSeek) and
  ``response.reasoning_summary_text.delta`` (OpenAI), function calls from
  ``response.output_item.added`` + ``response.function_call_arguments.delta``,
  completed by ``.done`` / ``response.output_item.done``. The stream ends with
  ``response.completed``, ``response.incomplete`` or ``response.failed``; an
  ``error`` event fails the request; a stream that ends without a terminal event
  is :class:`StreamInterrupted`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from reasonix_core.efforts import (
    DEEPSEEK_EFFORTS,
    DISABLED_EFFORTS,
    OPENAI_RESPONSES_EFFORTS,
    accepted_efforts,
)
from reasonix_core.errors import ProviderError, StreamInterrupted
from reasonix_core.images import ImagePart
from reasonix_core.messages import Message, ToolCall
from reasonix_core.provider.base import (
    Chunk,
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
    WebSearchChunk,
    register_kind,
)
from reasonix_core.provider.http import (
    RETRYABLE_STATUS,
    TRANSIENT_FINISH,
    EventParser,
    HttpProvider,
    count,
    make_usage,
)
from reasonix_core.provider.kept_meta import RESPONSES_SEARCHES_META as SEARCHES_META
from reasonix_core.provider.openai import DEEPSEEK_MAX_OUTPUT
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig

# `response.incomplete` reasons that map onto the loop's finish reasons.
INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}
# `error` / `response.failed` codes that are transient: the request is replayed.
RETRYABLE_CODES = frozenset(
    {
        "server_error",
        "internal_error",
        "rate_limit_exceeded",
        "rate_limit_error",
        "overloaded",
        "overloaded_error",
        "server_overloaded",
        "service_unavailable",
        "timeout",
        "insufficient_system_resource",
        "aborted",
    }
)
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def _text_part(kind: str, text: str) -> dict[str, Any]:
    return {"type": kind, "text": text}


def _message_item(role: str, kind: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [_text_part(kind, text)]}


def _user_item(msg: Message, images: bool) -> dict[str, Any]:
    """A user turn with images: ``input_text`` then ``input_image`` data URLs, or the
    text with a note per image for a model that takes none."""
    text = msg.content or ""
    if not images:
        return _message_item("user", "input_text", "\n\n".join([text, *map(_note, msg.images)]))
    parts = [_text_part("input_text", text)]
    parts.extend({"type": "input_image", "image_url": i.data_url} for i in msg.images)
    return {"type": "message", "role": "user", "content": parts}


def _note(image: ImagePart) -> str:
    return image.note()


@dataclass(slots=True)
class _Call:
    """One function call being assembled from the stream."""

    index: int
    item_id: str
    output_index: int | None
    call_id: str
    name: str
    arguments: str = ""
    done: bool = False


class ResponsesProvider(HttpProvider):
    """One vendor endpoint speaking the Responses API (streamed, stateless)."""

    def endpoint(self, base: str) -> str:
        return f"{base}/responses"

    def efforts(self) -> tuple[str, ...]:
        return accepted_efforts("responses", self._protocol) or ()

    # -- request building -------------------------------------------------

    def max_output_tokens(self, model: str) -> int | None:
        return DEEPSEEK_MAX_OUTPUT if self.deepseek else None

    def reasoning_field(self, effort: str) -> dict[str, Any] | None:
        effort = (effort or "auto").lower()
        if self.deepseek:
            if effort in DISABLED_EFFORTS:
                return {"effort": "none"}
            if effort in DEEPSEEK_EFFORTS:
                return {"effort": DEEPSEEK_EFFORTS[effort]}
        elif self._protocol == "openai" and effort in OPENAI_RESPONSES_EFFORTS:
            return {"effort": OPENAI_RESPONSES_EFFORTS[effort]}
        return None

    def encode_input(
        self, messages: tuple[Message, ...], *, replay_reasoning: bool, images: bool = False
    ) -> list[Any]:
        items: list[Any] = []
        for msg in messages:
            if msg.role == "assistant":
                if replay_reasoning:
                    text = (
                        "" if self.config.strip_chain_of_thought else (msg.reasoning_content or "")
                    )
                    items.append(
                        {"type": "reasoning", "content": [_text_part("reasoning_text", text)]}
                    )
                # A text-less tool turn is just its calls; a turn with neither
                # text nor calls keeps an empty message so the turn exists.
                # The answer's server-side searches, exactly as they came.
                items.extend(_kept_searches(msg))
                if msg.content or not msg.tool_calls:
                    items.append(_message_item("assistant", "output_text", msg.content or ""))
                for call in msg.tool_calls:
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": call.id,
                            "name": call.name,
                            "arguments": call.arguments,
                        }
                    )
            elif msg.role == "tool":
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": msg.tool_call_id or "",
                        "output": msg.content or "",
                    }
                )
            elif msg.images:
                items.append(_user_item(msg, images))
            else:
                items.append(_message_item(msg.role, "input_text", msg.content or ""))
        return items

    def build_body(self, request: Request) -> dict[str, Any]:
        effort = (request.effort or "auto").lower()
        messages = request.messages
        instructions: str | None = None
        if messages and messages[0].role == "system":
            instructions = messages[0].content or ""
            messages = messages[1:]
        # DeepSeek needs the reasoning of earlier tool turns back (as for
        # reasoning_content on Chat); it only reads it with tools + thinking.
        replay = self.deepseek_thinking(effort) and bool(request.tools)
        body: dict[str, Any] = {"model": request.model}
        if instructions is not None:
            body["instructions"] = instructions
        body["input"] = self.encode_input(
            messages, replay_reasoning=replay, images=self.takes_images(request.model)
        )
        if request.tools:
            tools = []
            for tool in request.tools:
                entry: dict[str, Any] = {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }
                if not self.deepseek:
                    entry["strict"] = False
                tools.append(entry)
            if self.config.web_search:
                # Last, so the function tools keep their place; config only, so the
                # same bytes on every request of the session.
                tools.append(dict(WEB_SEARCH_TOOL))
            body["tools"] = tools
        reasoning = self.reasoning_field(effort)
        if reasoning is not None:
            body["reasoning"] = reasoning
        if request.max_output_tokens is not None:
            body["max_output_tokens"] = request.max_output_tokens
        body["stream"] = True
        body["store"] = False
        return body

    # -- streaming --------------------------------------------------------

    def event_parser(self) -> EventParser:
        return _StreamParser()


#: The Responses API's server-side web search tool (``web_search = true``).
WEB_SEARCH_TOOL = {"type": "web_search"}


def _kept_searches(msg: Message) -> list[dict[str, Any]]:
    stored = msg.meta.get(SEARCHES_META)
    if not isinstance(stored, str):
        return []
    try:
        kept: object = json.loads(stored)
    except ValueError:
        return []
    if not isinstance(kept, list):
        return []
    return [item for item in cast("list[object]", kept) if isinstance(item, dict)]


def stored_searches(msg: Message) -> list[WebSearchChunk]:
    """The searches of a saved answer (its kept items), for a replayed transcript."""
    return [_search_chunk(item) for item in _kept_searches(msg)]


def _search_chunk(item: dict[str, Any]) -> WebSearchChunk:
    action = item.get("action")
    query = action.get("query") if isinstance(action, dict) else None
    status = str(item.get("status") or "")
    error = status if status in ("failed", "incomplete") else ""
    return WebSearchChunk(
        call_id=str(item.get("id") or ""), query=str(query or ""), results=None, error=error
    )


class _StreamParser(EventParser):
    """State for one Responses stream: text parts, calls, the terminal event."""

    # Not part of the protocol: without a terminal event before it, it is a drop.
    sentinel = "[DONE]"

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.model = ""
        # (item_id, content_index) of text / reasoning parts that got deltas, so
        # a `.done` without earlier deltas (some proxies) still yields its text.
        self.streamed: set[tuple[str, str, Any]] = set()
        self.last_summary: tuple[str, Any] | None = None
        self._end: StreamEnd | None = None
        # web_search_call items by id, in stream order: the provider's own tool.
        self.searches: dict[str, dict[str, Any]] = {}

    def feed(self, event: str, payload: dict[str, Any]) -> list[Chunk]:
        kind = str(payload.get("type") or event)
        if kind in TERMINAL_EVENTS:
            self._end = self.finish(kind, payload)
            self.finished = True
            return []
        if kind == "error" or ("type" not in payload and payload.get("error")):
            raise event_error(payload)
        return self.handle(kind, payload)

    def end(self) -> StreamEnd:
        if self._end is None:
            raise StreamInterrupted("stream ended before a terminal response event")
        return self._end

    # -- per event --------------------------------------------------------

    def handle(self, kind: str, p: dict[str, Any]) -> list[Chunk]:
        if kind in ("response.created", "response.in_progress"):
            self._note_model(p.get("response"))
            return []
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return self._delta(TextChunk, "text", p)
        if kind == "response.output_text.done" or kind == "response.refusal.done":
            return self._done(TextChunk, "text", p, p.get("text", p.get("refusal")))
        if kind == "response.reasoning_text.delta":
            return self._delta(ReasoningChunk, "reasoning", p)
        if kind == "response.reasoning_text.done":
            return self._done(ReasoningChunk, "reasoning", p, p.get("text"))
        if kind == "response.reasoning_summary_text.delta":
            return self._summary(p, p.get("delta"), final=False)
        if kind == "response.reasoning_summary_text.done":
            return self._summary(p, p.get("text"), final=True)
        if kind == "response.output_item.added":
            return self._item_added(p)
        if kind == "response.function_call_arguments.delta":
            return self._arguments_delta(p)
        if kind == "response.function_call_arguments.done":
            call = self._find(p)
            if call is not None:
                if isinstance(p.get("arguments"), str):
                    call.arguments = p["arguments"]
                call.done = True
            return []
        if kind == "response.output_item.done":
            return self._item_done(p)
        return []  # content_part.*, web search status, unknown future events

    def _note_model(self, response: object) -> None:
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            self.model = response["model"] or self.model

    def _delta(
        self, cls: type[TextChunk] | type[ReasoningChunk], tag: str, p: dict[str, Any]
    ) -> list[Chunk]:
        delta = p.get("delta")
        self.streamed.add((tag, str(p.get("item_id")), p.get("content_index")))
        if isinstance(delta, str) and delta:
            return [cls(text=delta)]
        return []

    def _done(
        self, cls: type[TextChunk] | type[ReasoningChunk], tag: str, p: dict[str, Any], text: object
    ) -> list[Chunk]:
        key = (tag, str(p.get("item_id")), p.get("content_index"))
        if key in self.streamed or not isinstance(text, str) or not text:
            return []
        self.streamed.add(key)
        return [cls(text=text)]

    def _summary(self, p: dict[str, Any], text: object, *, final: bool) -> list[Chunk]:
        part = (str(p.get("item_id")), p.get("summary_index"))
        key = ("summary", *part)
        if final and key in self.streamed:
            return []
        if not isinstance(text, str) or not text:
            return []
        out: list[Chunk] = []
        if self.last_summary is not None and self.last_summary != part:
            out.append(ReasoningChunk(text="\n\n"))  # summary parts are paragraphs
        self.last_summary = part
        self.streamed.add(key)
        out.append(ReasoningChunk(text=text))
        return out

    def _find(self, p: dict[str, Any]) -> _Call | None:
        item_id = p.get("item_id")
        if isinstance(item_id, str) and item_id:
            for call in self.calls:
                if call.item_id == item_id:
                    return call
        index = p.get("output_index")
        if isinstance(index, int):
            for call in self.calls:
                if call.output_index == index:
                    return call
        return None

    def _new_call(self, item: dict[str, Any], output_index: object) -> _Call:
        call = _Call(
            index=len(self.calls),
            item_id=str(item.get("id") or ""),
            output_index=output_index if isinstance(output_index, int) else None,
            call_id=str(item.get("call_id") or item.get("id") or ""),
            name=str(item.get("name") or ""),
            arguments=item["arguments"] if isinstance(item.get("arguments"), str) else "",
        )
        self.calls.append(call)
        return call

    def _item_added(self, p: dict[str, Any]) -> list[Chunk]:
        item = p.get("item")
        if not isinstance(item, dict) or item.get("type") != "function_call":
            return []
        call = self._new_call(item, p.get("output_index"))
        return [
            ToolCallFragment(
                index=call.index,
                id=call.call_id or None,
                name=call.name or None,
                arguments=call.arguments,
            )
        ]

    def _arguments_delta(self, p: dict[str, Any]) -> list[Chunk]:
        call = self._find(p)
        delta = p.get("delta")
        if call is None:
            raise StreamInterrupted(f"arguments for an unknown function call: {p.get('item_id')!r}")
        if not isinstance(delta, str) or not delta:
            return []
        call.arguments += delta
        return [ToolCallFragment(index=call.index, id=None, name=None, arguments=delta)]

    def _search_done(self, item: dict[str, Any]) -> list[Chunk]:
        key = str(item.get("id") or len(self.searches))
        if key in self.searches:
            return []
        self.searches[key] = item
        return [_search_chunk(item)]

    def _item_done(self, p: dict[str, Any]) -> list[Chunk]:
        item = p.get("item")
        if isinstance(item, dict) and item.get("type") == "web_search_call":
            return self._search_done(item)
        if not isinstance(item, dict) or item.get("type") != "function_call":
            return []
        call = self._find({"item_id": item.get("id"), "output_index": p.get("output_index")})
        out: list[Chunk] = []
        if call is None:  # the whole call in one event
            call = self._new_call(item, p.get("output_index"))
            out.append(
                ToolCallFragment(
                    index=call.index,
                    id=call.call_id or None,
                    name=call.name or None,
                    arguments=call.arguments,
                )
            )
        self._complete(call, item)
        return out

    @staticmethod
    def _complete(call: _Call, item: dict[str, Any]) -> None:
        if isinstance(item.get("arguments"), str):
            call.arguments = item["arguments"]
        if item.get("call_id"):
            call.call_id = str(item["call_id"])
        if item.get("name"):
            call.name = str(item["name"])
        call.done = True

    # -- the terminal event -----------------------------------------------

    def finish(self, kind: str, p: dict[str, Any]) -> StreamEnd:
        response = p.get("response")
        response = response if isinstance(response, dict) else {}
        self._note_model(response)
        if kind == "response.failed":
            raise failed_error(response.get("error"))
        # The final `output` is authoritative for calls whose `.done` was missed.
        for position, item in enumerate(response.get("output") or ()):
            if isinstance(item, dict) and item.get("type") == "function_call":
                call = self._find({"item_id": item.get("id"), "output_index": position})
                if call is None:
                    call = self._new_call(item, position)
                self._complete(call, item)
        for item in response.get("output") or ():
            if isinstance(item, dict) and item.get("type") == "web_search_call":
                self._search_done(item)  # (a missed .done: shown late, kept all the same)
        usage = parse_usage(response.get("usage"))
        replay: tuple[tuple[str, str], ...] = ()
        if self.searches:
            kept = json.dumps(
                list(self.searches.values()), ensure_ascii=False, separators=(",", ":")
            )
            replay = ((SEARCHES_META, kept),)
            done = sum(1 for s in self.searches.values() if s.get("status") == "completed")
            if usage is not None and done:
                usage = replace(usage, web_search_requests=done)
        calls = tuple(
            ToolCall(id=c.call_id or f"call_{c.index:02d}", name=c.name, arguments=c.arguments)
            for c in self.calls
            if c.done
        )
        if kind == "response.completed":
            finish = "tool_calls" if calls else "stop"
            return StreamEnd(
                finish_reason=finish,
                tool_calls=calls,
                usage=usage,
                model=self.model,
                replay_meta=replay,
            )
        details = response.get("incomplete_details")
        reason = str((details or {}).get("reason") or "") if isinstance(details, dict) else ""
        if reason in TRANSIENT_FINISH:
            raise ProviderError(
                f"the provider cut the response short (incomplete: {reason})",
                retryable=True,
                kind=reason,
            )
        finish = INCOMPLETE_REASONS.get(reason, reason or "length")
        # Never hand calls from a cut response to the loop as runnable, except
        # at the length limit, where the loop drops them with a warning.
        if finish != "length":
            calls = ()
        return StreamEnd(
            finish_reason=finish,
            tool_calls=calls,
            usage=usage,
            model=self.model,
            replay_meta=replay,
        )


def parse_usage(raw: object) -> Usage | None:
    """Responses usage: ``input_tokens`` includes ``cached_tokens`` (miss = input − cached)."""
    if not isinstance(raw, dict):
        return None
    prompt = count(raw.get("input_tokens"))
    in_details = raw.get("input_tokens_details")
    out_details = raw.get("output_tokens_details")
    hit = count(in_details.get("cached_tokens")) if isinstance(in_details, dict) else 0
    reasoning = count(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
    return make_usage(
        prompt, count(raw.get("output_tokens")), min(hit, prompt), reasoning=reasoning
    )


def _code_retryable(code: str, status: int | None) -> bool:
    if status is not None:
        return status in RETRYABLE_STATUS
    code = code.lower()
    return code in RETRYABLE_CODES or "rate_limit" in code or "overload" in code


def _error_fields(err: object) -> tuple[str, str, int | None]:
    if not isinstance(err, dict):
        return str(err or "the provider reported an error"), "", None
    nested = err.get("error")
    if isinstance(nested, dict):  # `{"type":"error","error":{...}}` variants
        err = nested
    code = err.get("code")
    status = code if isinstance(code, int) and not isinstance(code, bool) else None
    code_text = "" if code is None or status is not None else str(code)
    if not code_text and isinstance(err.get("type"), str) and err["type"] != "error":
        code_text = err["type"]
    message = str(err.get("message") or code_text or "the provider reported an error")
    return message, code_text, status


def event_error(payload: dict[str, Any]) -> ProviderError:
    """An in-band ``error`` event (``{"type":"error","code","message","param"}``)."""
    message, code, status = _error_fields(payload)
    text = f"{message} ({code})" if code and code not in message else message
    return ProviderError(
        text, status=status, retryable=_code_retryable(code, status), kind="stream_error"
    )


def failed_error(err: object) -> ProviderError:
    """A ``response.failed`` event's ``response.error {code, message}``."""
    message, code, status = _error_fields(err)
    text = f"{message} ({code})" if code and code not in message else message
    return ProviderError(
        text, status=status, retryable=_code_retryable(code, status), kind="response_failed"
    )


def _factory(config: ProviderConfig, api_key: str) -> ResponsesProvider:
    return ResponsesProvider(config, api_key)


register_kind("responses", _factory)

__all__ = ["ResponsesProvider", "event_error", "failed_error", "parse_usage"]
