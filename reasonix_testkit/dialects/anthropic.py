"""The Anthropic Messages dialect (``POST /v1/messages``).

The same server and script items as every dialect (:class:`Reply`,
:class:`ToolCallSpec`, :class:`HttpError`, :class:`Stall`), speaking
wire-formats.md §6 exactly. Stdlib only.

Usage::

    with FixtureServer(AnthropicDialect("anthropic"), api_key="sk-test") as server:
        server.enqueue(Reply(reasoning="hmm", content="hi"))
        ...  # POST {server.base_url}/v1/messages   (DeepSeek: .../anthropic/v1/messages)

Flavours:

* ``"anthropic"``: ``x-api-key`` and ``anthropic-version`` are required;
  thinking is off unless ``thinking.type`` is ``enabled`` (with a
  ``budget_tokens`` of at least 1024, below ``max_tokens``); signatures are
  real: an HMAC of the thinking text, verified on replay, so an altered or
  unsigned thinking block is a 400; in a tool loop with thinking on, the
  assistant turn being answered must start with its thinking block.
* ``"deepseek"``: DeepSeek's ``/anthropic`` endpoint: ``Authorization: Bearer``
  wins over ``x-api-key``; thinking is on unless disabled; the signature is a
  placeholder (the message id); every assistant turn with a ``tool_use`` must
  carry its thinking block back (400 "The `content[].thinking` in the thinking
  mode must be passed back to the API."); tool uses come after thinking
  (``Reply.deepseek_reasoning``).

Both: 400 when ``max_tokens`` is missing, for ``role: "system"`` inside
``messages``, for a ``tool_result`` without a matching ``tool_use`` in the
previous message (and for ``tool_use`` ids left unanswered), for a
``tool_use.input`` that is no object. Validation rejections consume no
scripted item.

Streams: ``message_start`` (usage with the cache fields), then per block
``content_block_start`` / ``content_block_delta``... / ``content_block_stop``
at indices 0, 1, 2... (thinking, text, tool uses; ``signature_delta`` just
before the thinking block's stop; ``input_json_delta`` starting with ``""``),
``message_delta`` (stop_reason and cumulative usage), ``message_stop``. ``ping``
events follow ``message_start`` and the first block start (``pings=False``
turns them off). The simulated prompt cache (:mod:`reasonix_testkit.prompt_cache`)
reports ``cache_read_input_tokens``; ``usage_style`` chooses Anthropic's
exclusive ``input_tokens`` (default), an OpenAI-style ``"inclusive"`` one
(observed from DeepSeek) or ``"absent"`` cache fields.

:class:`Reply` fields are read the Anthropic way: ``finish_reason`` is the raw
``stop_reason`` (``end_turn``/``tool_use`` by default), ``keepalives`` adds
that many ``ping`` events, ``error_event`` is the body of an ``event: error``
(e.g. ``{"type": "overloaded_error", "message": "Overloaded"}``), ``usage``
replaces the ``message_start`` usage object, and ``interleave_tool_calls`` /
``omit_delta_on_finish`` do not apply (Anthropic blocks are sequential).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import string
from types import MappingProxyType
from typing import Any, Literal

from reasonix_core.bench.loopback_http import ROUTES
from reasonix_testkit.prompt_cache import bytes_to_tokens, count_tokens
from reasonix_testkit.script import HttpError, Reply
from reasonix_testkit.text import content_text, dumps_compact, split_text, tagged, tools_text
from reasonix_testkit.transport import (
    IncomingRequest,
    RequestHandler,
    send_error_response,
    send_json_body,
    send_sse_stream,
)
from reasonix_testkit.wire import FlavouredDialect, RequestContext, Wire

__all__ = ["MSG_THINKING_REQUIRED", "AnthropicDialect", "render_prompt", "sign_thinking"]

Flavour = Literal["anthropic", "deepseek"]
UsageStyle = Literal["exclusive", "inclusive", "absent"]

MESSAGES_PATHS = ROUTES["anthropic"]
ANTHROPIC_MODELS = frozenset({"claude-test", "claude-sonnet-4-5", "claude-opus-4-1"})
DEEPSEEK_MODELS = frozenset({"deepseek-flash", "deepseek-v4-pro"})
ANTHROPIC_MAX_OUTPUT = 128_000
DEEPSEEK_MAX_OUTPUT = 393_216
MIN_THINKING_BUDGET = 1_024
OUTPUT_EFFORTS = ("low", "medium", "high", "max")

MSG_THINKING_REQUIRED = (
    "The `content[].thinking` in the thinking mode must be passed back to the API."
)
MSG_SYSTEM_ROLE_ANTHROPIC = (
    'messages: Unexpected role "system". The Messages API accepts a top-level `system` '
    'parameter, not "system" as an input message role.'
)
MSG_THINKING_FIRST = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
    "We recommend you include thinking blocks from previous turns. To avoid this "
    "requirement, disable `thinking`."
)
STATUS_ERROR_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_ALNUM = string.ascii_letters + string.digits
_SIGNING_KEY = b"reasonix-anthropic-fixture"


def sign_thinking(thinking: str) -> str:
    """The Anthropic flavour's signature for a thinking text (what replay must echo)."""
    mac = hmac.new(_SIGNING_KEY, thinking.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return "Eq" + base64.b64encode(mac.digest()).decode("ascii")


# --------------------------------------------------------------------------- prompt rendering


#: Anthropic's server-side web search tool (``tools[].type``).
WEB_SEARCH_TOOL = "web_search_20250305"


def web_search_blocks(wire: Wire, query: str) -> list[dict[str, Any]]:
    """The ``server_tool_use`` and ``web_search_tool_result`` blocks of one search."""
    sid = _new_id(wire, "srvtoolu_")
    results = [
        {
            "type": "web_search_result",
            "url": f"https://example.test/{n}?q={len(query)}",
            "title": f"Result {n} for {query}",
            "encrypted_content": f"enc{n}-{sid}",
            "page_age": None,
        }
        for n in (1, 2)
    ]
    return [
        {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": sid, "content": results},
    ]


def _render_block(block: Any) -> str:
    if not isinstance(block, dict):
        return dumps_compact(block)
    kind = block.get("type")
    if kind == "text":
        return content_text(block.get("text"))
    if kind == "thinking":
        return "<think>" + content_text(block.get("thinking")) + "</think>"
    if kind == "tool_use":
        return tagged(
            "tool_call",
            content_text(block.get("id")),
            content_text(block.get("name")),
            dumps_compact(block.get("input")),
        )
    if kind == "tool_result":
        return tagged(
            "tool_result",
            content_text(block.get("tool_use_id")),
            content_text(block.get("content")),
        )
    return dumps_compact(block)


def _render_message(message: Any) -> str:
    if not isinstance(message, dict):
        return "<|invalid|>" + dumps_compact(message)
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return f"<|{message.get('role')}|>" + "".join(_render_block(b) for b in blocks)


def render_prompt(body: dict[str, Any]) -> str:
    """What the fixture "model" sees: tools, system, then the messages' blocks.

    Thinking blocks render as ``<think>…</think>`` and ``tool_use`` inputs as
    compact JSON in the received key order; signatures are not part of the prompt.
    """
    out = [tools_text(body.get("tools"))]
    system = body.get("system")
    if system:
        out.append("<|system|>" + content_text(system))
    messages = body.get("messages")
    if isinstance(messages, list):
        out.extend(_render_message(m) for m in messages)
    return "".join(out)


# --------------------------------------------------------------------------- the server


def _error(status: int, message: str, kind: str | None = None) -> HttpError:
    return HttpError(status, message, type=kind or STATUS_ERROR_TYPE.get(status, "api_error"))


def _status_error(error_event: dict[str, Any]) -> HttpError:
    """A scripted ``error_event`` on a non-streamed answer: the error status it stands for."""
    return _error(
        529 if error_event.get("type") == "overloaded_error" else 500,
        str(error_event.get("message") or "error"),
        str(error_event.get("type") or "api_error"),
    )


def _new_id(wire: Wire, prefix: str) -> str:
    return prefix + wire.ids.choices(_ALNUM, 24)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class AnthropicDialect(FlavouredDialect):
    """``POST /v1/messages`` (also under ``/anthropic``), flavour ``anthropic`` or ``deepseek``.

    The wire variants (§6.2, T5) are attributes a test may change between
    requests: ``pings`` or none; ``usage_style``; DeepSeek's signature inside
    ``content_block_start`` instead of a ``signature_delta``; the number of
    (cumulative) ``message_delta`` events.
    """

    routes = MESSAGES_PATHS
    # A stalled stream keeps alive with ping events, as Anthropic does.
    stream_keepalive = b'event: ping\ndata: {"type":"ping"}\n\n'
    flavour_models = MappingProxyType({"anthropic": ANTHROPIC_MODELS, "deepseek": DEEPSEEK_MODELS})
    flavour: Flavour

    def __init__(
        self,
        flavour: Flavour = "anthropic",
        *,
        pings: bool = True,
        usage_style: UsageStyle = "exclusive",
        signature_in_start: bool = False,
        message_deltas: int = 1,
    ) -> None:
        super().__init__(flavour)
        self.pings = pings
        self.usage_style: UsageStyle = usage_style
        self.signature_in_start = signature_in_start
        self.message_deltas = max(1, message_deltas)

    def fixture_error(self, status: int, message: str) -> HttpError:
        return _error(status, message)

    def _thinking_on(self, body: dict[str, Any]) -> bool:
        thinking = body.get("thinking")
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if self.flavour == "deepseek":
            return kind != "disabled"  # on by default
        return kind in ("enabled", "adaptive")

    def context(self, body: dict[str, Any]) -> RequestContext:
        return RequestContext(
            body=body,
            model=str(body.get("model")),
            stream=body.get("stream") is True,
            thinking=self._thinking_on(body),
        )

    # ---------------------------------------------------------------- validation

    def authenticate(self, headers: dict[str, str], api_key: str) -> HttpError | None:
        if self.flavour == "deepseek":
            key = headers.get("x-api-key")
            auth = headers.get("authorization")
            if auth is not None:  # Bearer wins when both are sent
                scheme, _, token = auth.partition(" ")
                key = token.strip() if scheme.lower() == "bearer" else ""
            if key != api_key:
                return _error(
                    401, f"Authentication Fails, Your api key: ****{(key or '')[-4:]} is invalid"
                )
            return None
        key = headers.get("x-api-key")
        if key is None:
            return _error(401, "x-api-key header is required")
        if key != api_key:
            return _error(401, "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return _error(400, "anthropic-version: header is required")
        return None

    def validate(self, request: IncomingRequest, models: set[str] | None) -> HttpError | None:
        parsed, parse_error = request.parsed, request.parse_error
        if parse_error is not None:
            return _error(400, f"There was an error parsing the body: {parse_error}")
        if not isinstance(parsed, dict):
            return _error(400, "Input should be a valid dictionary")
        body: dict[str, Any] = parsed
        deepseek = self.flavour == "deepseek"
        model = body.get("model")
        if model is None:
            return _error(400, "model: Field required")
        if not isinstance(model, str):
            return _error(400, "model: Input should be a valid string")
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            return _error(400, "max_tokens: Field required")
        if not _is_int(max_tokens):
            return _error(400, "max_tokens: Input should be a valid integer")
        messages = body.get("messages")
        if messages is None:
            return _error(400, "messages: Field required")
        if not isinstance(messages, list):
            return _error(400, "messages: Input should be a valid list")
        if models is not None and model not in models:
            if deepseek and not model.startswith("claude"):
                return _error(400, "Model Not Exist")
            if not deepseek:
                return _error(404, f"model: {model}", "not_found_error")
        ceiling = DEEPSEEK_MAX_OUTPUT if deepseek else ANTHROPIC_MAX_OUTPUT
        if max_tokens < 1:
            return _error(400, "max_tokens: Input should be greater than or equal to 1")
        if max_tokens > ceiling:
            if deepseek:
                return _error(
                    400,
                    f"Invalid max_tokens value, the valid range of max_tokens is [1, {ceiling}]",
                )
            return _error(
                400,
                f"max_tokens: {max_tokens} > {ceiling}, which is the maximum allowed number "
                f"of output tokens for {model}",
            )
        if "stream" in body and not isinstance(body["stream"], bool):
            return _error(400, "stream: Input should be a valid boolean")
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            return _error(400, "system: Input should be a valid string or list")
        problem = self._tools_problem(body.get("tools"))
        if problem is not None:
            return _error(400, problem)
        problem = self._thinking_problem(body, max_tokens)
        if problem is not None:
            return _error(400, problem)
        if not messages:
            return _error(400, "messages: List should have at least 1 item after validation")
        for i, message in enumerate(messages):
            problem = self._message_problem(i, message, last=i == len(messages) - 1)
            if problem is not None:
                return _error(400, problem)
        problem = self._sequence_problem(messages, self._thinking_on(body))
        if problem is not None:
            return _error(400, problem)
        return None

    def context_limit(self, body: dict[str, Any], limit: int) -> HttpError | None:
        max_tokens = body["max_tokens"]  # validated: an int
        prompt = count_tokens(render_prompt(body))
        if prompt + max_tokens <= limit:
            return None
        return _error(400, f"prompt is too long: {prompt + max_tokens} tokens > {limit} maximum")

    @staticmethod
    def _tools_problem(tools: Any) -> str | None:
        if tools is None:
            return None
        if not isinstance(tools, list):
            return "tools: Input should be a valid list"
        for k, tool in enumerate(tools):
            if not isinstance(tool, dict):
                return f"tools.{k}: Input should be a valid dictionary"
            if tool.get("type") == WEB_SEARCH_TOOL:
                if tool.get("name") != "web_search":
                    return f"tools.{k}.{WEB_SEARCH_TOOL}.name: Input should be 'web_search'"
                continue
            if not isinstance(tool.get("name"), str) or not tool["name"]:
                return f"tools.{k}.name: Field required"
            if not isinstance(tool.get("input_schema"), dict):
                return f"tools.{k}.custom.input_schema: Field required"
        return None

    def _thinking_problem(self, body: dict[str, Any], max_tokens: int) -> str | None:
        thinking = body.get("thinking")
        if thinking is not None:
            if not isinstance(thinking, dict):
                return "thinking: Input should be a valid dictionary"
            kind = thinking.get("type")
            allowed = (
                ("enabled", "disabled")
                if self.flavour == "deepseek"
                else (
                    "enabled",
                    "disabled",
                    "adaptive",
                )
            )
            if kind not in allowed:
                return f"thinking.type: Input should be {' or '.join(repr(a) for a in allowed)}"
            if kind == "enabled" and self.flavour == "anthropic":
                budget = thinking.get("budget_tokens")
                if budget is None:
                    return "thinking.enabled.budget_tokens: Field required"
                if not _is_int(budget):
                    return "thinking.enabled.budget_tokens: Input should be a valid integer"
                if budget < MIN_THINKING_BUDGET:
                    return (
                        "thinking.enabled.budget_tokens: Input should be greater than or "
                        f"equal to {MIN_THINKING_BUDGET}"
                    )
                if budget >= max_tokens:
                    return "`max_tokens` must be greater than `thinking.budget_tokens`."
        config = body.get("output_config")
        if config is not None:
            if not isinstance(config, dict):
                return "output_config: Input should be a valid dictionary"
            effort = config.get("effort")
            if effort is not None and effort not in OUTPUT_EFFORTS:
                return "output_config.effort: Input should be " + ", ".join(
                    f"'{e}'" for e in OUTPUT_EFFORTS
                )
        return None

    def _message_problem(self, i: int, message: Any, *, last: bool) -> str | None:
        deepseek = self.flavour == "deepseek"
        if not isinstance(message, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        role = message.get("role")
        if role == "system":
            if deepseek:
                return (
                    "Failed to deserialize the JSON body into the target type: "
                    f"messages[{i}].role: unknown variant `system`, expected `user` or `assistant`"
                )
            return MSG_SYSTEM_ROLE_ANTHROPIC
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if content is None:
            return f"messages.{i}.content: Field required"
        if isinstance(content, str):
            content = [{"type": "text", "text": content}] if content else []
        if not isinstance(content, list):
            return f"messages.{i}.content: Input should be a valid list"
        if not content and not (role == "assistant" and last):
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        user_blocks = ("text", "image", "document", "tool_result", "search_result")
        assistant_blocks = (
            "text",
            "thinking",
            "redacted_thinking",
            "tool_use",
            "server_tool_use",
            "web_search_tool_result",
        )
        allowed = user_blocks if role == "user" else assistant_blocks
        for j, block in enumerate(content):
            where = f"messages.{i}.content.{j}"
            if not isinstance(block, dict):
                return f"{where}: Input should be a valid dictionary"
            kind = block.get("type")
            if kind not in allowed:
                return f"{where}.type: Input tag '{kind}' is not allowed in a {role} message"
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    return f"{where}.text.text: Field required"
                if not block["text"]:
                    return "messages: text content blocks must be non-empty"
            elif kind == "tool_use":
                if not isinstance(block.get("id"), str) or not block["id"]:
                    return f"{where}.tool_use.id: Field required"
                if not isinstance(block.get("name"), str) or not block["name"]:
                    return f"{where}.tool_use.name: Field required"
                if not isinstance(block.get("input"), dict):
                    return f"{where}.tool_use.input: Input should be a valid dictionary"
            elif kind == "tool_result":
                if not isinstance(block.get("tool_use_id"), str):
                    return f"{where}.tool_result.tool_use_id: Field required"
                if "content" in block and not isinstance(block["content"], str | list):
                    return f"{where}.tool_result.content: Input should be a valid string or list"
            elif kind == "thinking":
                if not isinstance(block.get("thinking"), str):
                    return f"{where}.thinking.thinking: Field required"
                signature = block.get("signature")
                if deepseek:
                    if signature is not None and not isinstance(signature, str):
                        return f"{where}.thinking.signature: Input should be a valid string"
                else:
                    if not isinstance(signature, str):
                        return f"{where}.thinking.signature: Field required"
                    if not hmac.compare_digest(signature, sign_thinking(block["thinking"])):
                        return f"{where}: Invalid `signature` in `thinking` block"
            elif kind == "redacted_thinking" and deepseek:
                return f"{where}.type: `redacted_thinking` is not supported"
        return None

    def _sequence_problem(self, raw: list[dict[str, Any]], thinking: bool) -> str | None:
        # Consecutive turns of one role are combined into one turn (as Anthropic does).
        turns: list[tuple[str, list[dict[str, Any]]]] = []
        for message in raw:
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if turns and turns[-1][0] == message["role"]:
                turns[-1][1].extend(blocks)
            else:
                turns.append((message["role"], list(blocks)))
        deepseek = self.flavour == "deepseek"
        for i, (role, blocks) in enumerate(turns):
            uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            if role == "assistant" and uses:
                nxt = turns[i + 1] if i + 1 < len(turns) else None
                answered = {
                    b.get("tool_use_id")
                    for b in (nxt[1] if nxt is not None else [])
                    if b.get("type") == "tool_result"
                }
                missing = [u for u in uses if u not in answered]
                if missing and nxt is not None:
                    return (
                        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(missing)}. Each `tool_use` block must "
                        "have a corresponding `tool_result` block in the next message."
                    )
                if thinking and deepseek and not any(b.get("type") == "thinking" for b in blocks):
                    return MSG_THINKING_REQUIRED
            if role == "user":
                prev = turns[i - 1] if i > 0 and turns[i - 1][0] == "assistant" else None
                known = {
                    b.get("id") for b in (prev[1] if prev else []) if b.get("type") == "tool_use"
                }
                for j, block in enumerate(blocks):
                    if block.get("type") == "tool_result" and block.get("tool_use_id") not in known:
                        return (
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {block.get('tool_use_id')}. Each "
                            "`tool_result` block must have a corresponding `tool_use` block in "
                            "the previous message."
                        )
        # Anthropic: in a tool loop with thinking on, the assistant turn being
        # answered must start with its (signed) thinking block.
        if thinking and not deepseek and len(turns) >= 2:
            role, blocks = turns[-1]
            prev_role, prev_blocks = turns[-2]
            if (
                role == "user"
                and prev_role == "assistant"
                and any(b.get("type") == "tool_result" for b in blocks)
                and prev_blocks
                and prev_blocks[0].get("type") not in ("thinking", "redacted_thinking")
            ):
                return MSG_THINKING_FIRST.format(i=len(turns) - 2, found=prev_blocks[0].get("type"))
        return None

    # ---------------------------------------------------------------- responses

    def send_error(self, h: RequestHandler, err: HttpError, wire: Wire) -> None:
        kind = err.type
        if kind == "invalid_request_error" and err.status != 400:
            kind = STATUS_ERROR_TYPE.get(err.status, kind)
        request_id = _new_id(wire, "req_")
        payload = (
            err.body
            if err.body is not None
            else dumps_compact(
                {
                    "type": "error",
                    "error": {"type": kind, "message": err.message},
                    "request_id": request_id,
                }
            ).encode()
        )
        send_error_response(
            h,
            err.status,
            payload,
            retry_after=err.retry_after,
            headers=err.headers,
            leading_headers=[("request-id", request_id)],
        )

    @staticmethod
    def _sse(name: str, payload: dict[str, Any]) -> bytes:
        data = dumps_compact(payload).encode("utf-8", "surrogatepass")
        return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"

    def _usage(self, prompt_bytes: int, hit_bytes: int) -> dict[str, Any]:
        prompt = bytes_to_tokens(prompt_bytes)
        hit = min(bytes_to_tokens(hit_bytes), prompt)
        if self.usage_style == "absent":
            return {"input_tokens": prompt, "output_tokens": 1}
        inp = prompt if self.usage_style == "inclusive" else prompt - hit
        return {
            "input_tokens": inp,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": hit,
            "output_tokens": 1,
        }

    def send_reply(self, h: RequestHandler, reply: Reply, ctx: RequestContext, wire: Wire) -> None:
        deepseek = self.flavour == "deepseek"
        message_id = _new_id(wire, "msg_")
        if not ctx.thinking:
            reasoning = ""
        else:
            reasoning = reply.deepseek_reasoning() if deepseek else reply.reasoning
        signature = message_id if deepseek else sign_thinking(reasoning)
        call_ids = [spec.id or _new_id(wire, "toolu_") for spec in reply.tool_calls]
        stop_reason = reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")
        model = reply.model if reply.model is not None else ctx.model

        # ---- the blocks this answer consists of
        blocks: list[dict[str, Any]] = []
        if reasoning:
            blocks.append({"type": "thinking", "thinking": reasoning, "signature": signature})
        if reply.web_searches and not any(
            isinstance(t, dict) and t.get("type") == WEB_SEARCH_TOOL
            for t in ctx.body.get("tools") or []
        ):
            self.send_error(h, _error(400, "web search scripted but not offered in tools"), wire)
            return
        for query in reply.web_searches:
            blocks.extend(web_search_blocks(wire, query))
        if reply.content:
            blocks.append({"type": "text", "text": reply.content})
        for cid, spec in zip(call_ids, reply.tool_calls, strict=True):
            try:
                parsed = json.loads(spec.arguments) if spec.arguments.strip() else {}
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):  # what a client replays for broken input
                parsed = {"_raw": spec.arguments}
            blocks.append({"type": "tool_use", "id": cid, "name": spec.name, "input": parsed})

        # ---- simulated prompt cache and usage
        space = (ctx.model, str((ctx.body.get("metadata") or {}).get("user_id") or ""))
        prompt = render_prompt(ctx.body).encode("utf-8", "surrogatepass")
        hit_bytes = wire.cache.lookup_and_persist(space, prompt)
        output_unit = prompt + _render_message({"role": "assistant", "content": blocks}).encode(
            "utf-8", "surrogatepass"
        )
        generated = reasoning + reply.content + "".join(s.arguments for s in reply.tool_calls)
        output_tokens = max(1, count_tokens(generated))
        start_usage = (
            dict(reply.usage) if reply.usage is not None else self._usage(len(prompt), hit_bytes)
        )
        if reply.web_searches and reply.usage is None:
            start_usage["server_tool_use"] = {"web_search_requests": len(reply.web_searches)}
        final_output = (
            start_usage.get("output_tokens", output_tokens) if reply.usage else output_tokens
        )

        def persist_output() -> None:
            wire.cache.persist(space, output_unit)

        if not ctx.stream:
            if reply.error_event is not None:
                self.send_error(h, _status_error(reply.error_event), wire)
                return
            payload = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {**start_usage, "output_tokens": final_output},
            }
            # Unlike the Chat fixture, ``drop_after`` and ``keepalives`` apply to streams only.
            send_json_body(
                h,
                wire.stop,
                dumps_compact(payload).encode("utf-8", "surrogatepass"),
                delay=reply.delay,
                before_body=persist_output,
            )
            return

        events: list[bytes] = []
        ping = self._sse("ping", {"type": "ping"})
        events.append(
            self._sse(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": start_usage,
                    },
                },
            )
        )
        events.extend(ping for _ in range(max(0, reply.keepalives)))
        if self.pings:
            events.append(ping)
        for index, block in enumerate(blocks):
            kind = block["type"]
            if kind == "thinking":
                start = {
                    "type": "thinking",
                    "thinking": "",
                    "signature": signature if self.signature_in_start else "",
                }
            elif kind == "text":
                start = {"type": "text", "text": ""}
            elif kind == "server_tool_use":
                start = {**block, "input": {}}
            elif kind == "web_search_tool_result":
                start = block  # the results come whole with the start
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append(
                self._sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            if index == 0 and self.pings:
                events.append(ping)
            deltas: list[dict[str, Any]] = []
            if kind == "thinking":
                deltas = [
                    {"type": "thinking_delta", "thinking": p}
                    for p in split_text(reasoning, reply.chunk_size)
                ]
                if not self.signature_in_start:
                    deltas.append({"type": "signature_delta", "signature": signature})
            elif kind == "text":
                deltas = [
                    {"type": "text_delta", "text": p}
                    for p in split_text(reply.content, reply.chunk_size)
                ]
            elif kind == "server_tool_use":
                deltas = [
                    {"type": "input_json_delta", "partial_json": p}
                    for p in split_text(dumps_compact(block["input"]), reply.arg_chunk)
                ]
            elif kind == "web_search_tool_result":
                deltas = []
            else:
                spec = reply.tool_calls[call_ids.index(block["id"])]
                deltas = [{"type": "input_json_delta", "partial_json": ""}] + [
                    {"type": "input_json_delta", "partial_json": p}
                    for p in split_text(spec.arguments, reply.arg_chunk)
                ]
            for delta in deltas:
                events.append(
                    self._sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
                )
            events.append(
                self._sse("content_block_stop", {"type": "content_block_stop", "index": index})
            )
        tail: list[bytes] = []
        for k in range(self.message_deltas, 0, -1):
            # Cumulative counts: earlier message_delta events carry smaller totals.
            count = max(1, final_output // k) if k > 1 else final_output
            tail.append(
                self._sse(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": count},
                    },
                )
            )
        tail.append(self._sse("message_stop", {"type": "message_stop"}))

        send_sse_stream(
            h,
            wire.stop,
            reply,
            content_type="text/event-stream; charset=utf-8",
            events=events,
            error_event=(
                self._sse("error", {"type": "error", "error": reply.error_event})
                if reply.error_event is not None
                else None
            ),
            tail=tail,
            before_tail=persist_output,
        )
