"""The Chat Completions dialect (DeepSeek / OpenAI-compatible ``/chat/completions``).

Wire details follow ``wire-formats.md`` §1–§3 and §5:

* ``"deepseek"``: strict DeepSeek validation (serde-style 422s, its protocol
  400s), thinking on unless disabled, ``reasoning_content`` deltas, usage on the
  finish chunk with the prompt-cache hit/miss fields; with thinking on, tool calls
  come after reasoning (``Reply.deepseek_reasoning``);
* ``"openai"``: OpenAI's wording, no thinking, a separate usage chunk when
  ``stream_options.include_usage`` asks for it;
* streams end with ``data: [DONE]``; ``error_event`` sends an in-band
  ``data: {"error": ...}``; non-streamed answers apply ``keepalives`` (leading
  newlines), ``drop_after`` (half a body) and ``error_event`` / ``garbage_line``
  (as the body) too.

The Bearer auth, the error envelope and the id formats are shared with the
Responses dialect (same providers, same gateways).
"""

from __future__ import annotations

import string
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from reasonix_core.bench.loopback_http import ROUTES
from reasonix_core.jsontext import dumps_utf8
from reasonix_testkit.prompt_cache import count_tokens, usage_counts
from reasonix_testkit.script import HttpError, Reply, ToolCallSpec
from reasonix_testkit.text import content_text, dumps_compact, split_text, tagged, tools_text
from reasonix_testkit.transport import (
    SSE_KEEPALIVE,
    IncomingRequest,
    RequestHandler,
    send_error_response,
    send_json_body,
    send_sse_stream,
)
from reasonix_testkit.wire import FlavouredDialect, RequestContext, Wire

__all__ = ["ChatDialect", "render_prompt", "thinking_enabled"]

Flavour = Literal["deepseek", "openai"]

DEEPSEEK_MODELS = frozenset({"deepseek-flash", "deepseek-v4-pro"})
OPENAI_MODELS = frozenset({"gpt-test", "deepseek-flash", "deepseek-v4-pro"})
# The flavours of the OpenAI-family dialects (Chat and Responses) and their models.
FLAVOUR_MODELS = MappingProxyType({"deepseek": DEEPSEEK_MODELS, "openai": OPENAI_MODELS})
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra")
MAX_OUTPUT_TOKENS = 393216
DEEPSEEK_FINGERPRINT = "fp_8b330d02d0_prod0820_fp8_kvcache_20260402"
CHAT_PATHS = ROUTES["openai"]

MSG_REASONING_REQUIRED = (
    "The reasoning_content in the thinking mode must be passed back to the API."
)
MSG_TOOL_WITHOUT_CALL = (
    "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
)
MSG_MISSING_TOOL_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)
MSG_TOOL_CHOICE = "Thinking mode does not support this tool_choice"
MSG_DESERIALIZE = "Failed to deserialize the JSON body into the target type: "
MSG_OPENAI_BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means "
    "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
    "payload, but what was sent was not valid JSON.)"
)

_ALNUM = string.ascii_letters + string.digits


# --------------------------------------------------------------------------- prompt rendering


def _data_event(payload: Any) -> bytes:
    """One unnamed SSE event (``data: <json>``), as Chat Completions streams them.

    A lone surrogate in a scripted reply goes out as a ``\\ud800`` escape, as a
    real server's JSON encoder writes it, so the client decodes it back to the
    same lone surrogate (hostile-model tests rely on that)."""
    return b"data: " + dumps_utf8(payload, separators=(",", ":")).encode("utf-8") + b"\n\n"


def thinking_enabled(body: dict[str, Any]) -> bool:
    """DeepSeek: thinking is on unless disabled explicitly or via effort ``none``."""
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "disabled":
        return False
    return body.get("reasoning_effort") != "none"


def _render_message(message: Any, with_reasoning: bool) -> str:
    if not isinstance(message, dict):
        return "<|invalid|>" + dumps_compact(message)
    role = str(message.get("role"))
    out = [f"<|{role}|>"]
    if role == "tool":
        out.append(content_text(message.get("tool_call_id")) + "<|sep|>")
    if role == "assistant" and with_reasoning:
        out.append("<think>" + content_text(message.get("reasoning_content")) + "</think>")
    out.append(content_text(message.get("content")))
    calls = message.get("tool_calls") if role == "assistant" else None
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                out.append("<|tool_call|>" + dumps_compact(call))
                continue
            fn = call.get("function")
            fn = fn if isinstance(fn, dict) else {}
            out.append(
                tagged(
                    "tool_call",
                    content_text(call.get("id")),
                    content_text(fn.get("name")),
                    content_text(fn.get("arguments")),
                )
            )
    return "".join(out)


def render_prompt(body: dict[str, Any], *, thinking: bool | None = None) -> str:
    """What the fixture "model" sees: tools (received key order kept), then messages.

    Assistant messages render as ``<|assistant|><think>reasoning</think>content``
    plus their tool calls (id, name, raw arguments); the ``<think>`` part is only
    present when the request has ``tools`` and thinking is on (DeepSeek drops
    replayed reasoning otherwise). Tool messages render their ``tool_call_id``.
    ``thinking=None`` derives the mode from the body (DeepSeek rules).
    """
    if thinking is None:
        thinking = thinking_enabled(body)
    tools = body.get("tools")
    with_reasoning = bool(tools) and thinking
    out = [tools_text(tools)]
    messages = body.get("messages")
    if isinstance(messages, list):
        out.extend(_render_message(m, with_reasoning) for m in messages)
    return "".join(out)


# --------------------------------------------------------------------------- helpers


def serde_desc(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, list):
        return "sequence"
    if isinstance(value, dict):
        return "map"
    return "null"


@dataclass(slots=True)
class ChatContext(RequestContext):
    """Everything derived from a validated request (Chat and Responses)."""

    include_usage: bool
    has_tools: bool


# --------------------------------------------------------------------------- shared with Responses


def presented_key(headers: dict[str, str]) -> str | None:
    """The Bearer token sent (None without Authorization, "" for another scheme)."""
    auth = headers.get("authorization")
    if auth is None:
        return None
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer":
        return ""
    return token.strip()


def bearer_auth(flavour: str, api_key: str, headers: dict[str, str]) -> HttpError | None:
    """The Bearer key check, worded as the flavour words its 401 (Chat and Responses)."""
    key = presented_key(headers)
    if key == api_key:
        return None
    if flavour == "deepseek":
        return HttpError(
            401,
            f"Authentication Fails, Your api key: ****{(key or '')[-4:]} is invalid",
            type="authentication_error",
        )
    if not key:
        message = (
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
        )
    else:
        message = f"Incorrect API key provided: {key[:3]}****{key[-4:]}."
    return HttpError(401, message, code="invalid_api_key")


def openai_fixture_error(status: int, message: str) -> HttpError:
    """The fixture's own 404 / 500 in the OpenAI-family envelope."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return HttpError(status, message, type=kind, code=None)


def send_openai_error(h: RequestHandler, err: HttpError) -> None:
    send_error_response(
        h, err.status, err.envelope(), retry_after=err.retry_after, headers=err.headers
    )


def tool_call_ids(flavour: str, calls: list[ToolCallSpec], wire: Wire) -> list[str]:
    """Each call's scripted id, else one in the flavour's format."""
    ids: list[str] = []
    for i, spec in enumerate(calls):
        if spec.id is not None:
            ids.append(spec.id)
        elif flavour == "deepseek":
            ids.append(f"call_{i:02d}_" + wire.ids.choices(_ALNUM, 24))
        else:
            ids.append("call_" + wire.ids.choices(_ALNUM, 24))
    return ids


# --------------------------------------------------------------------------- the dialect


class ChatDialect(FlavouredDialect):
    """``POST /chat/completions`` (also under ``/v1``), flavour ``deepseek`` or ``openai``."""

    routes = CHAT_PATHS
    stream_keepalive = SSE_KEEPALIVE
    flavour_models = FLAVOUR_MODELS
    flavour: Flavour

    def __init__(self, flavour: Flavour = "deepseek") -> None:
        super().__init__(flavour)

    def fixture_error(self, status: int, message: str) -> HttpError:
        return openai_fixture_error(status, message)

    def context(self, body: dict[str, Any]) -> ChatContext:
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = (
            stream and isinstance(options, dict) and options.get("include_usage") is True
        )
        thinking = self.flavour == "deepseek" and thinking_enabled(body)
        return ChatContext(
            body=body,
            model=str(body.get("model")),
            stream=stream,
            include_usage=include_usage,
            thinking=thinking,
            has_tools=bool(body.get("tools")),
        )

    # ---------------------------------------------------------------- validation

    def context_limit(self, body: dict[str, Any], limit: int) -> HttpError | None:
        """DeepSeek's answer to a request longer than the model's context."""
        thinking = self.flavour == "deepseek" and thinking_enabled(body)
        prompt = count_tokens(render_prompt(body, thinking=thinking))
        max_tokens = body.get("max_tokens")
        completion = max_tokens if isinstance(max_tokens, int) else 0
        if prompt + completion <= limit:
            return None
        return deepseek_context_error(limit, prompt, completion)

    def authenticate(self, headers: dict[str, str], api_key: str) -> HttpError | None:
        return bearer_auth(self.flavour, api_key, headers)

    def validate(self, request: IncomingRequest, models: set[str] | None) -> HttpError | None:
        if self.flavour == "deepseek":
            return self._validate_deepseek(request.parsed, request.parse_error, models)
        return self._validate_openai(request.parsed, request.parse_error, models)

    def _validate_deepseek(
        self, parsed: Any, parse_error: str | None, models: set[str] | None
    ) -> HttpError | None:
        if parse_error is not None:
            return HttpError(400, MSG_DESERIALIZE + parse_error)
        if not isinstance(parsed, dict):
            return _unprocessable(
                f"invalid type: {serde_desc(parsed)}, expected struct ChatCompletionRequest"
            )
        body: dict[str, Any] = parsed
        # ---- type-level checks (422, like serde + axum's JsonDataError)
        model = body.get("model")
        if model is None:
            return _unprocessable("missing field `model`")
        if not isinstance(model, str):
            return _unprocessable(f"model: invalid type: {serde_desc(model)}, expected a string")
        messages = body.get("messages")
        if messages is None:
            return _unprocessable("missing field `messages`")
        if not isinstance(messages, list):
            return _unprocessable(
                f"messages: invalid type: {serde_desc(messages)}, expected a sequence"
            )
        for i, message in enumerate(messages):
            problem = _message_shape_problem(message)
            if problem is not None:
                return _unprocessable(f"messages[{i}]: {problem}")
        thinking = body.get("thinking")
        if thinking is not None:
            if not isinstance(thinking, dict):
                return _unprocessable(
                    f"thinking: invalid type: {serde_desc(thinking)}, "
                    "expected struct ThinkingOptions"
                )
            kind = thinking.get("type")
            if kind is None:
                return _unprocessable("thinking: missing field `type`")
            if kind not in ("enabled", "disabled"):
                return _unprocessable(
                    f"thinking.type: unknown variant `{kind}`, expected `enabled` or `disabled`"
                )
        effort = body.get("reasoning_effort")
        if effort is not None:
            expected = ", ".join(f"`{e}`" for e in REASONING_EFFORTS)
            if not isinstance(effort, str):
                return _unprocessable(
                    f"reasoning_effort: invalid type: {serde_desc(effort)}, "
                    "expected enum ReasoningEffort"
                )
            if effort not in REASONING_EFFORTS:
                return _unprocessable(
                    f"reasoning_effort: unknown variant `{effort}`, expected one of {expected}"
                )
        n = body.get("n")
        if n is not None and (not isinstance(n, int) or isinstance(n, bool)):
            return _unprocessable(f"n: invalid type: {serde_desc(n)}, expected u32")
        max_tokens = body.get("max_tokens")
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool)
        ):
            return _unprocessable(
                f"max_tokens: invalid type: {serde_desc(max_tokens)}, expected u32"
            )
        # ---- semantic checks (400)
        if models is not None and model not in models:
            return HttpError(400, "Model Not Exist")
        if n is not None and n != 1:
            return HttpError(400, "Invalid n value (currently only n = 1 is supported)")
        if not messages:
            return HttpError(400, "Invalid request: messages must not be empty")
        if max_tokens is not None and not 1 <= max_tokens <= MAX_OUTPUT_TOKENS:
            return HttpError(
                400,
                "Invalid max_tokens value, the valid range of max_tokens is "
                f"[1, {MAX_OUTPUT_TOKENS}]",
            )
        if body.get("stream_options") is not None and body.get("stream") is not True:
            return HttpError(400, "stream_options should be set along with stream = true")
        on = thinking_enabled(body)
        tool_choice = body.get("tool_choice")
        if on and (tool_choice == "required" or isinstance(tool_choice, dict)):
            return HttpError(400, MSG_TOOL_CHOICE)
        problem = _sequence_problem(messages)
        if problem is not None:
            return HttpError(400, problem)
        if on and body.get("tools"):
            for message in messages:
                if message.get("role") == "assistant" and message.get("reasoning_content") is None:
                    return HttpError(400, MSG_REASONING_REQUIRED)
        return None

    def _validate_openai(
        self, parsed: Any, parse_error: str | None, models: set[str] | None
    ) -> HttpError | None:
        if parse_error is not None or not isinstance(parsed, dict):
            return HttpError(400, MSG_OPENAI_BAD_JSON, code=None)
        body: dict[str, Any] = parsed
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return HttpError(400, "you must provide a model parameter", code=None)
        messages = body.get("messages")
        if not isinstance(messages, list):
            return HttpError(400, "Missing required parameter: 'messages'.", code=None)
        if not messages:
            return HttpError(
                400,
                "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                code="empty_array",
            )
        for i, message in enumerate(messages):
            problem = _message_shape_problem(message)
            if problem is not None:
                return HttpError(400, f"Invalid 'messages[{i}]': {problem}", code=None)
        if models is not None and model not in models:
            return HttpError(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                code="model_not_found",
            )
        if body.get("stream_options") is not None and body.get("stream") is not True:
            return HttpError(
                400,
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                code=None,
            )
        problem = _sequence_problem(messages)
        if problem is not None:
            return HttpError(400, problem, code=None)
        return None

    # ---------------------------------------------------------------- responses

    def send_error(self, h: RequestHandler, err: HttpError, wire: Wire) -> None:
        send_openai_error(h, err)

    def _new_ids(self, wire: Wire) -> tuple[str, int]:
        if self.flavour == "deepseek":
            cid = str(uuid.UUID(int=wire.ids.bits(128), version=4))
        else:
            cid = "chatcmpl-" + wire.ids.choices(_ALNUM, 29)
        return cid, int(time.time())

    def _usage(
        self, ctx: ChatContext, prompt_bytes: int, hit_bytes: int, reasoning: str, output: str
    ) -> dict[str, Any]:
        prompt, hit, completion = usage_counts(prompt_bytes, hit_bytes, output)
        reasoning_tokens = count_tokens(reasoning)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if self.flavour == "deepseek":
            usage["prompt_tokens_details"] = {"cached_tokens": hit}
            if ctx.thinking:
                usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
            usage["prompt_cache_hit_tokens"] = hit
            usage["prompt_cache_miss_tokens"] = prompt - hit
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": hit, "audio_tokens": 0}
            usage["completion_tokens_details"] = {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            }
        return usage

    def send_reply(self, h: RequestHandler, reply: Reply, ctx: ChatContext, wire: Wire) -> None:
        deepseek = self.flavour == "deepseek"
        # Thinking is DeepSeek's only (ChatDialect.context).
        reasoning = reply.deepseek_reasoning() if ctx.thinking else ""
        call_ids = tool_call_ids(self.flavour, reply.tool_calls, wire)
        finish_reason = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

        # ---- simulated prompt cache and usage
        space = (ctx.model, str(ctx.body.get("user_id") or ""))
        with_reasoning = ctx.has_tools and ctx.thinking
        prompt = render_prompt(ctx.body, thinking=ctx.thinking).encode("utf-8", "surrogatepass")
        hit_bytes = wire.cache.lookup_and_persist(space, prompt)
        assistant = {
            "role": "assistant",
            "content": reply.content,
            "reasoning_content": reasoning,
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": s.name, "arguments": s.arguments},
                }
                for cid, s in zip(call_ids, reply.tool_calls, strict=True)
            ],
        }
        output_unit = prompt + _render_message(assistant, with_reasoning).encode(
            "utf-8", "surrogatepass"
        )
        generated = reasoning + reply.content + "".join(s.arguments for s in reply.tool_calls)
        usage = (
            reply.usage
            if reply.usage is not None
            else self._usage(ctx, len(prompt), hit_bytes, reasoning, generated)
        )

        def persist_output() -> None:
            wire.cache.persist(space, output_unit)

        chunk_id, created = self._new_ids(wire)
        model = reply.model if reply.model is not None else ctx.model

        def envelope(kind: str) -> dict[str, Any]:
            """The fields a completion and each of its chunks start with, in wire order."""
            return {
                "id": chunk_id,
                "object": kind,
                "created": created,
                "model": model,
                "system_fingerprint": DEEPSEEK_FINGERPRINT if deepseek else None,
            }

        if not ctx.stream:
            self._send_completion(
                h,
                wire,
                reply,
                ctx,
                envelope("chat.completion"),
                reasoning,
                call_ids,
                finish_reason,
                usage,
                persist_output,
            )
            return

        missing = object()

        def chunk(
            delta: dict[str, Any] | None, finish: str | None = None, chunk_usage: Any = missing
        ) -> dict[str, Any]:
            choice: dict[str, Any] = {"index": 0}
            if delta is not None:
                choice["delta"] = delta
            choice["logprobs"] = None
            choice["finish_reason"] = finish
            out = {**envelope("chat.completion.chunk"), "choices": [choice]}
            if chunk_usage is not missing:
                out["usage"] = chunk_usage
            elif ctx.include_usage:
                out["usage"] = None
            return out

        events: list[dict[str, Any]] = []
        if deepseek:
            if ctx.thinking:
                events.append(
                    chunk({"role": "assistant", "content": None, "reasoning_content": ""})
                )
            else:
                events.append(chunk({"role": "assistant", "content": ""}))
            for piece in split_text(reasoning, reply.chunk_size):
                events.append(chunk({"content": None, "reasoning_content": piece}))
            for piece in split_text(reply.content, reply.chunk_size):
                if ctx.thinking:
                    events.append(chunk({"content": piece, "reasoning_content": None}))
                else:
                    events.append(chunk({"content": piece}))
        else:
            events.append(chunk({"role": "assistant", "content": "", "refusal": None}))
            for piece in split_text(reply.content, reply.chunk_size):
                events.append(chunk({"content": piece}))
        sequences: list[list[dict[str, Any]]] = []
        for i, (cid, spec) in enumerate(zip(call_ids, reply.tool_calls, strict=True)):
            head = {
                "index": i,
                "id": cid,
                "type": "function",
                "function": {"name": spec.name, "arguments": ""},
            }
            seq = [chunk({"tool_calls": [head]})]
            for frag in split_text(spec.arguments, reply.arg_chunk):
                seq.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
            sequences.append(seq)
        if reply.interleave_tool_calls:
            for step in range(max((len(s) for s in sequences), default=0)):
                events.extend(s[step] for s in sequences if step < len(s))
        else:
            for seq in sequences:
                events.extend(seq)

        finish_delta: dict[str, Any] | None
        if reply.omit_delta_on_finish:
            finish_delta = None
        elif deepseek:
            finish_delta = (
                {"content": "", "reasoning_content": None} if ctx.thinking else {"content": ""}
            )
        else:
            finish_delta = {}
        tail: list[dict[str, Any]]
        if deepseek:
            tail = [chunk(finish_delta, finish_reason, usage)]
        else:
            tail = [chunk(finish_delta, finish_reason)]
            if ctx.include_usage:
                usage_chunk = chunk(None, chunk_usage=usage)
                usage_chunk["choices"] = []
                tail.append(usage_chunk)

        send_sse_stream(
            h,
            wire.stop,
            reply,
            keepalive_comments=reply.keepalives,
            events=[_data_event(event) for event in events],
            error_event=(
                _data_event({"error": reply.error_event}) if reply.error_event is not None else None
            ),
            tail=[_data_event(event) for event in tail],
            trailer=b"data: [DONE]\n\n",
            before_tail=persist_output,
        )

    def _send_completion(
        self,
        h: RequestHandler,
        wire: Wire,
        reply: Reply,
        ctx: ChatContext,
        envelope: dict[str, Any],
        reasoning: str,
        call_ids: list[str],
        finish_reason: str,
        usage: dict[str, Any],
        persist_output: Callable[[], None],
    ) -> None:
        deepseek = self.flavour == "deepseek"
        message: dict[str, Any] = {"role": "assistant"}
        if deepseek:
            message["content"] = reply.content
            if ctx.thinking:
                message["reasoning_content"] = reasoning
        else:
            message["content"] = reply.content if (reply.content or not reply.tool_calls) else None
            message["refusal"] = None
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "index": i,
                    "id": cid,
                    "type": "function",
                    "function": {"name": spec.name, "arguments": spec.arguments},
                }
                for i, (cid, spec) in enumerate(zip(call_ids, reply.tool_calls, strict=True))
            ]
        payload: dict[str, Any] = {
            **envelope,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": usage,
        }
        complete = reply.error_event is None and reply.garbage_line is None
        if reply.error_event is not None:
            data = dumps_compact({"error": reply.error_event}).encode()
        elif reply.garbage_line is not None:
            data = reply.garbage_line.encode("utf-8", "surrogatepass")
        else:
            data = dumps_utf8(payload, separators=(",", ":")).encode("utf-8")
        send_json_body(
            h,
            wire.stop,
            b"\n" * max(0, reply.keepalives) + data,
            delay=reply.delay,
            drop_after=reply.drop_after,
            before_body=persist_output if complete else None,
        )


# --------------------------------------------------------------------------- validation helpers


def deepseek_context_error(limit: int, prompt: int, completion: int) -> HttpError:
    """DeepSeek's 400 for a prompt plus output budget over the context length."""
    return HttpError(
        400,
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
        "completion). Please reduce the length of the messages or completion.",
    )


def _unprocessable(detail: str) -> HttpError:
    return HttpError(422, MSG_DESERIALIZE + detail)


def _message_shape_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return f"invalid type: {serde_desc(message)}, expected internally tagged enum Message"
    role = message.get("role")
    if role is None:
        return "missing field `role`"
    if role not in ("system", "user", "assistant", "tool"):
        return f"unknown variant `{role}`, expected one of `system`, `user`, `assistant`, `tool`"
    if role in ("system", "user", "tool") and "content" not in message:
        return "missing field `content`"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "missing field `tool_call_id`"
    if role == "assistant":
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                return f"tool_calls: invalid type: {serde_desc(calls)}, expected a sequence"
            for j, call in enumerate(calls):
                if not isinstance(call, dict):
                    return f"tool_calls[{j}]: invalid type: {serde_desc(call)}, expected struct"
                if not isinstance(call.get("id"), str):
                    return f"tool_calls[{j}]: missing field `id`"
                fn = call.get("function")
                if not isinstance(fn, dict):
                    return f"tool_calls[{j}]: missing field `function`"
                if not isinstance(fn.get("name"), str):
                    return f"tool_calls[{j}].function: missing field `name`"
                if not isinstance(fn.get("arguments"), str):
                    return f"tool_calls[{j}].function: missing field `arguments`"
    return None


def _sequence_problem(messages: list[Any]) -> str | None:
    """Tool results must answer the nearest preceding assistant's tool calls, all of them."""
    open_ids: list[str] | None = None
    answered: set[str] = set()

    def unanswered() -> str | None:
        if open_ids is None:
            return None
        missing = [cid for cid in open_ids if cid not in answered]
        return MSG_MISSING_TOOL_RESULTS + ", ".join(missing) if missing else None

    for message in messages:
        role = message.get("role")
        if role == "tool":
            if open_ids is None or message.get("tool_call_id") not in open_ids:
                return MSG_TOOL_WITHOUT_CALL
            answered.add(message["tool_call_id"])
            continue
        problem = unanswered()
        if problem is not None:
            return problem
        open_ids = None
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            open_ids = [call["id"] for call in calls]
            answered = set()
    return unanswered()
