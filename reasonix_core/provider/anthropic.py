"""The ``anthropic`` provider kind: the Anthropic Messages API (``POST /v1/messages``).

Also DeepSeek's Anthropic-compatible endpoint (base ``https://api.deepseek.com/anthropic``).
Follows shared/reference/wire-formats.md §6 (request, streaming events, usage,
thinking + tools replay, errors) and §5 (retries). The mapping choices are
documented in docs/CONFIG.md, "Provider kinds"; in short:

* **Flavour.** A DeepSeek host (or ``reasoning_protocol = "deepseek"``) is the
  DeepSeek flavour: ``Authorization: Bearer`` besides ``x-api-key``,
  ``thinking: {"type": "enabled"}`` + ``output_config.effort``, an automatic
  ``max_tokens`` of 393216. Anything else is the Anthropic flavour:
  ``thinking.budget_tokens`` from the effort, an automatic ``max_tokens`` of
  32000. ``reasoning_protocol = "none"`` sends no thinking settings at all.
* **Messages.** System messages go to the top-level ``system`` string; tool
  results become ``tool_result`` blocks of a user message; consecutive messages
  of one role are merged into one message (Anthropic wants alternation).
  Assistant turns are replayed as ``thinking`` (with the stored signature),
  ``text`` and ``tool_use`` blocks, in that order. ``tool_use.input`` is the
  parsed JSON of the stored argument string (``{"_raw": "<string>"}`` when it
  is not a JSON object), so the bytes are the same on every request.
* **Signatures.** The thinking block's signature arrives in
  :attr:`StreamEnd.reasoning_signature`; the loop keeps it in the assistant
  message's ``meta["reasoning_signature"]`` (persisted in the session).
* **Usage.** Anthropic's ``input_tokens`` excludes cache reads and writes:
  prompt = input + cache_creation + cache_read, hit = cache_read. DeepSeek's
  endpoint may report OpenAI-style inclusive counts; see :func:`parse_usage`.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn, cast

from reasonix_core.efforts import (
    ANTHROPIC_EFFORTS,
    DEEPSEEK_EFFORTS,
    DISABLED_EFFORTS,
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
from reasonix_core.provider.kept_meta import ANTHROPIC_CONTENT_META as CONTENT_META
from reasonix_core.provider.openai import DEEPSEEK_MAX_OUTPUT
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig

ANTHROPIC_VERSION = "2023-06-01"
# Automatic ``max_tokens`` (Anthropic requires the field) when the loop leaves
# it open: a ceiling every current Claude model accepts when streaming.
ANTHROPIC_MAX_OUTPUT = 32_000
# Anthropic's thinking budget per effort level; clamped below max_tokens.
# Anthropic refuses budgets under 1024, so a smaller room disables thinking.
THINKING_BUDGETS = {"low": 4_096, "high": 16_384, "max": 31_999}
MIN_THINKING_BUDGET = 1_024

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    # The context window filled up while answering: the answer was cut short.
    "model_context_window_exceeded": "length",
    # "pause_turn" (a long server-side search paused) passes through as is: the
    # turn ends with that reason shown, its blocks kept for the next request.
}

#: Anthropic's server-side web search tool, sent after the function tools when the
#: provider entry says ``web_search = true`` (docs/CONFIG.md, "Web search").
WEB_SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search"}
#: Content blocks a server-side tool produces; the model's, never our tool calls.
SERVER_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result"})

# In-band ``error`` event types and the HTTP status they stand for (§6.4).
ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {text}")
    return value


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"non-standard JSON constant {name}")


def tool_input(arguments: str) -> dict[str, Any]:
    """``tool_use.input`` for a stored argument string, deterministically.

    Parsing keeps the model's key order, so the same string always gives the
    same bytes. Anything that is not a JSON object (a truncated string, an
    array, NaN...) is sent as ``{"_raw": "<string>"}``: the API only accepts an
    object, and the raw text keeps the call honest in the transcript.
    """
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments, parse_float=_finite_float, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {"_raw": arguments}
    if not isinstance(value, dict):
        return {"_raw": arguments}
    return value


def parse_usage(raw: dict[str, Any], *, deepseek: bool = False) -> Usage:
    """Anthropic usage -> :class:`Usage` (prompt includes the cached part).

    Anthropic: ``input_tokens`` excludes ``cache_read_input_tokens`` and
    ``cache_creation_input_tokens``, so prompt = input + creation + read,
    hit = read, miss = input + creation. Absent, null or negative fields
    count as 0.

    DeepSeek's endpoint is undocumented here and has been seen reporting an
    ``input_tokens`` that already includes the cached tokens (§3.3). On a
    DeepSeek host a report with ``input_tokens >= cache_read_input_tokens > 0``
    is taken as inclusive (prompt = input, hit = read): with DeepSeek's prefix
    cache an agent's later requests are mostly cache hits, so an exclusive
    report almost always has read > input, while an inclusive one always has
    input >= read. Misreading a rare exclusive report under-counts that one
    prompt; misreading inclusive ones would double every prompt (and trigger
    compaction early), the worse error.
    """
    inp = count(raw.get("input_tokens"))
    creation = count(raw.get("cache_creation_input_tokens"))
    read = count(raw.get("cache_read_input_tokens"))
    output = count(raw.get("output_tokens"))
    if deepseek and read > 0 and inp >= read:
        prompt = max(inp, read + creation)
    else:
        prompt = inp + creation + read
    # Anthropic counts thinking inside output_tokens only: no reasoning count.
    usage = make_usage(prompt, output, min(read, prompt))
    server = raw.get("server_tool_use")
    searches = count(server.get("web_search_requests")) if isinstance(server, dict) else 0
    return replace(usage, web_search_requests=searches) if searches else usage


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image_block(image: ImagePart) -> dict[str, Any]:
    """An inline image (Anthropic Messages: ``source.type`` ``base64``)."""
    source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "image", "source": source}


class AnthropicProvider(HttpProvider):
    """One endpoint speaking the Anthropic Messages API (streamed)."""

    def endpoint(self, base: str) -> str:
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        return f"{base}/v1/messages"

    def kind_headers(self) -> list[tuple[str, str]]:
        headers = [("anthropic-version", ANTHROPIC_VERSION)]
        if self._api_key:
            headers.append(("x-api-key", self._api_key))
            if self.deepseek:
                headers.append(("Authorization", f"Bearer {self._api_key}"))
        return headers

    def efforts(self) -> tuple[str, ...]:
        return accepted_efforts("anthropic", self._protocol) or ()

    # -- request building -------------------------------------------------

    def max_output_tokens(self, model: str) -> int | None:
        return DEEPSEEK_MAX_OUTPUT if self.deepseek else ANTHROPIC_MAX_OUTPUT

    def _thinking_block(self, msg: Message) -> dict[str, Any] | None:
        reasoning = msg.reasoning_content or ""
        signature = str(msg.meta.get("reasoning_signature") or "")
        if self.deepseek:
            # DeepSeek wants the thinking of every tool turn back (400
            # otherwise) and does not verify signatures: replay an empty one
            # for turns that had none, like the openai kind's "".
            if not reasoning and not msg.tool_calls:
                return None
            if self.config.strip_chain_of_thought:
                reasoning = ""
            return {"type": "thinking", "thinking": reasoning, "signature": signature}
        # Anthropic verifies the signature: a block without one (reasoning from
        # another provider) would be refused, so it is left out.
        if not reasoning or not signature:
            return None
        return {"type": "thinking", "thinking": reasoning, "signature": signature}

    def _assistant_blocks(self, msg: Message) -> list[dict[str, Any]]:
        stored = msg.meta.get(CONTENT_META)
        if isinstance(stored, str):
            # A server-side search ran in this answer: its blocks (and the text
            # around them, with citations) go back exactly as they came.
            try:
                kept: object = json.loads(stored)
            except ValueError:
                kept = None
            if isinstance(kept, list) and all(isinstance(b, dict) for b in kept):
                blocks = cast("list[dict[str, Any]]", kept)
                thinking = self._thinking_block(msg)
                if self.deepseek and thinking is not None and not any(
                    b.get("type") == "thinking" for b in blocks
                ):
                    # DeepSeek wants a thinking block on every tool turn (as below).
                    blocks = [thinking, *blocks]
                return blocks
        blocks: list[dict[str, Any]] = []
        thinking = self._thinking_block(msg)
        if thinking is not None:
            blocks.append(thinking)
        if msg.content:
            blocks.append({"type": "text", "text": msg.content})
        for call in msg.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": tool_input(call.arguments),
                }
            )
        return blocks

    def encode_messages(
        self, messages: tuple[Message, ...], *, images: bool = False
    ) -> tuple[str, list[dict[str, Any]]]:
        """(system text, Anthropic messages). Same input, same output, always.
        ``images``: the model takes images (``image`` blocks, base64), else a note
        stands in for each."""
        system: list[str] = []
        turns: list[tuple[str, list[dict[str, Any]]]] = []

        def add(role: str, blocks: list[dict[str, Any]]) -> None:
            if turns and turns[-1][0] == role:
                turns[-1][1].extend(blocks)
            else:
                turns.append((role, list(blocks)))

        for msg in messages:
            if msg.role == "system":
                if msg.content:
                    system.append(msg.content)
            elif msg.role == "tool":
                add(
                    "user",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": msg.tool_call_id or "",
                            "content": msg.content or "",
                        }
                    ],
                )
            elif msg.role == "assistant":
                blocks = self._assistant_blocks(msg)
                if blocks:  # an empty assistant turn cannot be sent; drop it
                    add("assistant", blocks)
            elif msg.images and images:
                add("user", [*map(_image_block, msg.images), _text(msg.content or "")])
            elif msg.images:
                notes = [image.note() for image in msg.images]
                add("user", [_text("\n\n".join([msg.content or "", *notes]))])
            else:
                add("user", [_text(msg.content or "")])
        out: list[dict[str, Any]] = []
        for role, blocks in turns:
            content: str | list[dict[str, Any]] = blocks
            if role == "user" and len(blocks) == 1 and blocks[0]["type"] == "text":
                content = blocks[0]["text"]
            out.append({"role": role, "content": content})
        return "\n\n".join(system), out

    def _thinking(self, effort: str, max_tokens: int) -> tuple[dict[str, Any] | None, str | None]:
        """(``thinking``, ``output_config.effort``) for an effort level."""
        if self._protocol == "none" or effort == "auto":
            return None, None  # the server's default
        if effort in DISABLED_EFFORTS:
            return {"type": "disabled"}, None
        if self.deepseek:
            return {"type": "enabled"}, DEEPSEEK_EFFORTS.get(effort)
        level = ANTHROPIC_EFFORTS.get(effort, "high")
        budget = min(THINKING_BUDGETS[level], max_tokens - 1)
        if budget < MIN_THINKING_BUDGET:
            return {"type": "disabled"}, None
        return {"type": "enabled", "budget_tokens": budget}, None

    def build_body(self, request: Request) -> dict[str, Any]:
        effort = (request.effort or "auto").lower()
        max_tokens = request.max_output_tokens
        if max_tokens is None or max_tokens <= 0:
            max_tokens = self.max_output_tokens(request.model) or ANTHROPIC_MAX_OUTPUT
        system, messages = self.encode_messages(
            request.messages, images=self.takes_images(request.model)
        )
        body: dict[str, Any] = {"model": request.model, "max_tokens": max_tokens}
        if system:
            body["system"] = system
        body["messages"] = messages
        if request.tools:
            tools: list[dict[str, Any]] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
            search = self.web_search_tool()
            if search is not None:
                # Last, so the function tools keep their place; the same bytes on
                # every request of the session (config only), so the prefix holds.
                tools.append(search)
            body["tools"] = tools
        body["stream"] = True
        thinking, level = self._thinking(effort, max_tokens)
        if thinking is not None:
            body["thinking"] = thinking
        if level is not None:
            body["output_config"] = {"effort": level}
        return body

    def web_search_tool(self) -> dict[str, Any] | None:
        """The server-side web search tool this entry offers (None: off)."""
        if not self.config.web_search:
            return None
        tool: dict[str, Any] = dict(WEB_SEARCH_TOOL)
        if self.config.web_search_max_uses is not None:
            tool["max_uses"] = self.config.web_search_max_uses
        return tool

    # -- streaming --------------------------------------------------------

    def event_parser(self) -> EventParser:
        return _StreamState(deepseek=self.deepseek)


class _StreamState(EventParser):
    """What one streamed message has said so far."""

    def __init__(self, *, deepseek: bool) -> None:
        self.deepseek = deepseek
        self.model = ""
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.signature = ""
        # content block index -> ("text" | "thinking" | "tool_use" | other, ordinal)
        self.blocks: dict[int, tuple[str, int]] = {}
        self.calls: list[dict[str, Any]] = []
        # content block index -> the block as it streams, in order; turned into the
        # answer's whole content when a server-side block came (``server_blocks``).
        self.content: dict[int, dict[str, Any]] = {}
        self.server_blocks = False

    def _merge_usage(self, raw: object) -> None:
        # Counts are cumulative: the latest value of each field wins (the nested
        # ``server_tool_use`` counts too).
        if isinstance(raw, dict):
            for key, value in raw.items():
                if isinstance(value, dict) and isinstance(self.usage.get(key), dict):
                    self.usage[key] = {**self.usage[key], **value}
                elif value is not None:
                    self.usage[key] = value

    def keepalive(self, event: str, payload: dict[str, Any]) -> bool:
        # `ping` events are keep-alives (like ": keep-alive" comments).
        return (payload.get("type") or event) == "ping"

    def feed(self, event: str, payload: dict[str, Any]) -> list[Chunk]:
        kind = payload.get("type") or event
        if kind == "error":
            raise stream_error(payload.get("error"))
        out: list[Chunk] = []
        if kind == "message_start":
            message = payload.get("message") or {}
            if isinstance(message, dict):
                self.model = str(message.get("model") or self.model)
                self._merge_usage(message.get("usage"))
        elif kind == "content_block_start":
            self._block_start(payload, out)
        elif kind == "content_block_delta":
            self._block_delta(payload, out)
        elif kind == "content_block_stop":
            index = payload.get("index")
            if isinstance(index, int) and self.blocks.get(index, ("", 0))[0] == "tool_use":
                self._finish_call(self.blocks[index][1])
        elif kind == "message_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self.stop_reason = str(delta["stop_reason"])
            self._merge_usage(payload.get("usage"))
        elif kind == "message_stop":
            self.finished = True
        # ping and unknown event types: nothing to do.
        return out

    def _block_start(self, payload: dict[str, Any], out: list[Chunk]) -> None:
        index = payload.get("index")
        block = payload.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise StreamInterrupted(f"malformed content_block_start: {payload!r}"[:200])
        btype = str(block.get("type"))
        self.content[index] = {"block": block, "parts": [], "citations": []}
        if btype in SERVER_BLOCKS:
            # The provider's own tool: kept for replay, never a call for us to run.
            self.server_blocks = True
            self.blocks[index] = (btype, 0)
            if btype == "web_search_tool_result":
                out.append(self._search_done(block))
        elif btype == "tool_use":
            ordinal = len(self.calls)
            start_input = block.get("input")
            self.calls.append(
                {
                    "id": str(block.get("id") or ""),
                    "name": str(block.get("name") or ""),
                    "parts": [],
                    "input": start_input if isinstance(start_input, dict) else {},
                    "arguments": None,
                }
            )
            self.blocks[index] = (btype, ordinal)
            out.append(
                ToolCallFragment(
                    index=ordinal, id=block.get("id"), name=block.get("name"), arguments=""
                )
            )
        else:
            self.blocks[index] = (btype, 0)
            if btype == "text" and isinstance(block.get("text"), str) and block["text"]:
                out.append(TextChunk(text=block["text"]))
            elif btype == "thinking":
                if isinstance(block.get("thinking"), str) and block["thinking"]:
                    out.append(ReasoningChunk(text=block["thinking"]))
                # DeepSeek may put its (placeholder) signature here.
                if isinstance(block.get("signature"), str) and block["signature"]:
                    self.signature = block["signature"]
            # redacted_thinking, server_tool_use, ... are not kept.

    def _block_delta(self, payload: dict[str, Any], out: list[Chunk]) -> None:
        index = payload.get("index")
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            raise StreamInterrupted(f"malformed content_block_delta: {payload!r}"[:200])
        dtype = delta.get("type")
        btype, ordinal = self.blocks.get(index, ("", 0)) if isinstance(index, int) else ("", 0)
        record = self.content.get(index) if isinstance(index, int) else None
        if btype == "server_tool_use":
            if dtype == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                assert record is not None
                record["parts"].append(delta["partial_json"])
            return
        if dtype == "text_delta" and isinstance(delta.get("text"), str):
            if record is not None:
                record["parts"].append(delta["text"])
            if delta["text"]:
                out.append(TextChunk(text=delta["text"]))
        elif dtype == "thinking_delta" and isinstance(delta.get("thinking"), str):
            if record is not None:
                record["parts"].append(delta["thinking"])
            if delta["thinking"]:
                out.append(ReasoningChunk(text=delta["thinking"]))
        elif dtype == "signature_delta" and isinstance(delta.get("signature"), str):
            if delta["signature"]:
                self.signature = delta["signature"]
        elif dtype == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            if btype != "tool_use":
                raise StreamInterrupted(f"input_json_delta for block {index!r} that is no tool_use")
            part = delta["partial_json"]
            self.calls[ordinal]["parts"].append(part)
            if part:
                out.append(ToolCallFragment(index=ordinal, id=None, name=None, arguments=part))
        elif dtype == "citations_delta" and isinstance(delta.get("citation"), dict):
            if record is not None:
                record["citations"].append(delta["citation"])
        # unknown delta types are ignored.

    def _finish_call(self, ordinal: int) -> None:
        call = self.calls[ordinal]
        if call["arguments"] is not None:
            return
        joined = "".join(call["parts"])
        if not joined:
            # No input_json_delta at all: the whole input came with the start.
            joined = json.dumps(call["input"], ensure_ascii=False, separators=(",", ":"))
        call["arguments"] = joined

    def end(self) -> StreamEnd:
        if not self.finished and self.stop_reason is None:
            raise StreamInterrupted()
        raw = self.stop_reason or ("tool_use" if self.calls else "end_turn")
        if raw in TRANSIENT_FINISH:
            raise ProviderError(
                f"the provider cut the response short (stop_reason={raw})",
                retryable=True,
                kind=raw,
            )
        calls: list[ToolCall] = []
        for ordinal, call in enumerate(self.calls):
            self._finish_call(ordinal)
            calls.append(
                ToolCall(
                    id=call["id"] or f"toolu_{ordinal:02d}",
                    name=call["name"],
                    arguments=call["arguments"],
                )
            )
        replay: tuple[tuple[str, str], ...] = ()
        if self.server_blocks:
            content = json.dumps(self._content(calls), ensure_ascii=False, separators=(",", ":"))
            replay = ((CONTENT_META, content),)
        return StreamEnd(
            finish_reason=STOP_REASONS.get(raw, raw),
            tool_calls=tuple(calls),
            replay_meta=replay,
            usage=parse_usage(self.usage, deepseek=self.deepseek) if self.usage else None,
            model=self.model,
            reasoning_signature=self.signature,
        )


    def _search_done(self, block: dict[str, Any]) -> WebSearchChunk:
        """The search a ``web_search_tool_result`` answers: its query (from the
        ``server_tool_use`` block of the same id) and how many results came."""
        call_id = str(block.get("tool_use_id") or "")
        query_input: object = None
        for record in self.content.values():
            use = record["block"]
            if use.get("type") == "server_tool_use" and use.get("id") == call_id:
                parts = record["parts"]
                query_input = tool_input("".join(parts)) if parts else use.get("input")
        return _search_result(block, query_input)

    def _content(self, calls: list[ToolCall]) -> list[dict[str, Any]]:
        """The answer's content blocks in stream order, as the next request sends
        them: server-side blocks as received (a ``server_tool_use`` with its
        streamed input), text with its citations, thinking with its signature."""
        out: list[dict[str, Any]] = []
        for index in sorted(self.content):
            record = self.content[index]
            block: dict[str, Any] = record["block"]
            btype = block.get("type")
            joined = "".join(record["parts"])
            if btype == "text":
                text = str(block.get("text") or "") + joined
                if not text:
                    continue  # an empty text block would be refused
                rebuilt: dict[str, Any] = {"type": "text", "text": text}
                citations = [*(block.get("citations") or []), *record["citations"]]
                if citations:
                    rebuilt["citations"] = citations
                out.append(rebuilt)
            elif btype == "thinking":
                thinking = str(block.get("thinking") or "") + joined
                out.append({"type": "thinking", "thinking": thinking, "signature": self.signature})
            elif btype == "tool_use":
                call = calls[self.blocks[index][1]]
                out.append(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": tool_input(call.arguments),
                    }
                )
            elif btype == "server_tool_use":
                start_input = block.get("input")
                if joined:
                    server_input = tool_input(joined)
                else:
                    server_input = start_input if isinstance(start_input, dict) else {}
                out.append({**block, "input": server_input})
            else:  # web_search_tool_result, redacted_thinking, ...: as received
                out.append(block)
        return out


def _search_result(block: dict[str, Any], query_input: object) -> WebSearchChunk:
    """One ``web_search_tool_result`` block (and its search's input) as a search."""
    call_id = str(block.get("tool_use_id") or "")
    query = str(query_input.get("query") or "") if isinstance(query_input, dict) else ""
    results = block.get("content")
    if isinstance(results, list):
        return WebSearchChunk(call_id=call_id, query=query, results=len(results))
    error = results.get("error_code") if isinstance(results, dict) else None
    return WebSearchChunk(call_id=call_id, query=query, results=0, error=str(error or "error"))


def stored_searches(msg: Message) -> list[WebSearchChunk]:
    """The searches of a saved answer (its kept content), for a replayed transcript."""
    stored = msg.meta.get(CONTENT_META)
    try:
        blocks: object = json.loads(stored) if isinstance(stored, str) else None
    except ValueError:
        return []
    if not isinstance(blocks, list):
        return []
    inputs: dict[object, object] = {}
    out: list[WebSearchChunk] = []
    for block in cast("list[object]", blocks):
        if not isinstance(block, dict):
            continue
        entry = cast("dict[str, Any]", block)
        if entry.get("type") == "server_tool_use":
            inputs[entry.get("id")] = entry.get("input")
        elif entry.get("type") == "web_search_tool_result":
            out.append(_search_result(entry, inputs.get(entry.get("tool_use_id"))))
    return out


def stream_error(err: object) -> ProviderError:
    """An in-band ``event: error`` (after status 200)."""
    if isinstance(err, dict):
        kind = str(err.get("type") or "api_error")
        message = str(err.get("message") or kind)
    else:
        kind, message = "api_error", str(err)
    status = ERROR_TYPE_STATUS.get(kind)
    # Unknown types are taken as server trouble: retryable.
    retryable = status is None or status in RETRYABLE_STATUS
    return ProviderError(f"{kind}: {message}", retryable=retryable, kind="stream_error")


def _factory(config: ProviderConfig, api_key: str) -> AnthropicProvider:
    return AnthropicProvider(config, api_key)


register_kind("anthropic", _factory)

__all__ = ["AnthropicProvider", "parse_usage", "stream_error", "tool_input"]
