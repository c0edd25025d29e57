"""The Responses dialect (OpenAI and DeepSeek ``POST /responses``).

The same server and script items as every dialect (:class:`Reply` /
:class:`HttpError` / :class:`Stall`), speaking ``wire-formats.md`` §7; auth,
error envelopes and tool-call ids are the Chat dialect's (same providers)::

    with FixtureServer(ResponsesDialect("deepseek"), api_key="sk-test") as server:
        server.enqueue(Reply(reasoning="why", tool_calls=[ToolCallSpec("ls", "{}")]))
        ...  # POST {server.base_url}/responses

Stream: ``event: <type>`` + ``data: {..., "type", "sequence_number"}`` with the
sequence number increasing from 0: ``response.created``, ``response.in_progress``,
then per output item ``response.output_item.added`` … ``.done`` (a reasoning item,
then a message item, then one ``function_call`` item per call), then the terminal
event. **No** ``data: [DONE]`` unless ``done_marker`` is set (proxies add one).

* ``deepseek`` flavour: reasoning streams as ``reasoning_text`` content parts
  (``response.reasoning_text.delta``) and thinking is on unless
  ``reasoning.effort`` is ``"none"``; tool calls come after reasoning
  (``Reply.deepseek_reasoning``). Strict like DeepSeek: with ``tools`` and
  thinking on, every assistant turn that makes function calls must carry a
  ``reasoning`` item (400 otherwise).
* ``openai`` flavour: reasoning streams as a summary
  (``response.reasoning_summary_text.delta``; each ``"\\n\\n"``-separated paragraph
  of :attr:`Reply.reasoning` is one summary part, whether or not the request asked
  for summaries). Reasoning items sent back without ``encrypted_content`` are
  refused (with ``store: false`` OpenAI has nothing to look an ``rs_`` id up in).
* Both: 400 for a ``function_call_output`` without a preceding ``function_call``
  of that ``call_id`` and for a ``function_call`` that never gets its output.

How a :class:`Reply` maps onto the terminal event: ``finish_reason`` ``None``,
``"stop"`` or ``"tool_calls"`` give ``response.completed``; ``"length"`` (or
``"max_output_tokens"``) and ``"content_filter"`` give ``response.incomplete``
with that ``incomplete_details.reason``; ``"failed"`` or ``"failed:<code>"`` give
``response.failed`` (``error.code`` default ``server_error``); any other string is
sent verbatim as an incomplete reason. ``error_event`` sends an ``error`` event
(``code`` from its ``code`` or ``type``) and ends the body without a terminal
event; ``drop_after`` counts data events; ``usage`` replaces the computed usage
object; ``interleave_tool_calls`` and ``omit_delta_on_finish`` do not apply.

Usage comes from the same simulated prompt cache as the Chat dialect
(:class:`~reasonix_testkit.prompt_cache.PromptCache`): the rendered prompt (:func:`render_responses_prompt`)
is looked up and persisted, the rendered output unit is persisted once the
response completes, and ``input_tokens_details.cached_tokens`` reports the hit.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from reasonix_core.bench.loopback_http import ROUTES
from reasonix_testkit.dialects.chat import (
    FLAVOUR_MODELS,
    MAX_OUTPUT_TOKENS,
    MSG_DESERIALIZE,
    MSG_OPENAI_BAD_JSON,
    MSG_REASONING_REQUIRED,
    REASONING_EFFORTS,
    ChatContext,
    Flavour,
    bearer_auth,
    deepseek_context_error,
    openai_fixture_error,
    send_openai_error,
    serde_desc,
    tool_call_ids,
)
from reasonix_testkit.prompt_cache import count_tokens, usage_counts
from reasonix_testkit.script import HttpError, Reply, ToolCallSpec
from reasonix_testkit.text import dumps_compact, split_text, tagged, tools_text
from reasonix_testkit.transport import (
    SSE_KEEPALIVE,
    IncomingRequest,
    RequestHandler,
    send_json_body,
    send_sse_stream,
)
from reasonix_testkit.wire import FlavouredDialect, IdSource, Wire

__all__ = ["RESPONSES_PATHS", "ResponsesDialect", "render_responses_prompt"]

RESPONSES_PATHS = ROUTES["responses"]
OPENAI_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
MSG_NO_CALL = "No tool call found for function call output with call_id {}."
MSG_NO_OUTPUT = "No tool output found for function call {}."
MSG_NOT_PERSISTED = (
    "Item with id '{}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)
INPUT_PART_TYPES = frozenset({"input_text", "input_image", "input_file"})
OUTPUT_PART_TYPES = frozenset({"output_text", "refusal"})
DEFAULT_FAILURE = "The server had an error while processing your request. Sorry about that!"


# --------------------------------------------------------------------------- prompt rendering


def effort_of(body: dict[str, Any]) -> Any:
    reasoning = body.get("reasoning")
    return reasoning.get("effort") if isinstance(reasoning, dict) else None


def _parts_text(content: Any, kinds: Iterable[str] | None = None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out: list[str] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                if kinds is None or part.get("type") in kinds:
                    out.append(part["text"])
            else:
                out.append(dumps_compact(part))
        return "".join(out)
    return dumps_compact(content)


def _render_item(item: Any, with_reasoning: bool) -> str:
    if not isinstance(item, dict):
        return "<|item|>" + dumps_compact(item)
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return f"<|{item.get('role')}|>" + _parts_text(item.get("content"))
    if kind == "reasoning":
        if not with_reasoning:
            return ""
        return "<think>" + _parts_text(item.get("content"), ("reasoning_text",)) + "</think>"
    if kind == "function_call":
        return tagged(
            "tool_call",
            _parts_text(item.get("call_id")),
            _parts_text(item.get("name")),
            _parts_text(item.get("arguments")),
        )
    if kind == "function_call_output":
        return tagged("tool", _parts_text(item.get("call_id")), _parts_text(item.get("output")))
    return "<|item|>" + dumps_compact(item)


def render_responses_prompt(body: dict[str, Any], *, thinking: bool | None = None) -> str:
    """What the fixture "model" sees: tools (received key order kept), instructions, input.

    Items render as ``<|role|>text`` (messages), ``<|tool_call|>call_id<|sep|>name<|sep|>
    arguments``, ``<|tool|>call_id<|sep|>output`` and ``<think>text</think>`` for
    reasoning items. Reasoning is only part of the prompt when the request has
    ``tools`` and thinking is on (the DeepSeek rule; ``thinking=None`` derives it
    from ``reasoning.effort``), so dropping or changing it then breaks the cache.
    """
    if thinking is None:
        thinking = effort_of(body) != "none"
    tools = body.get("tools")
    with_reasoning = bool(tools) and thinking
    out = [tools_text(tools)]
    instructions = body.get("instructions")
    if instructions:
        out.append("<|system|>" + _parts_text(instructions))
    items = body.get("input")
    if isinstance(items, str):
        out.append("<|user|>" + items)
    elif isinstance(items, list):
        out.extend(_render_item(item, with_reasoning) for item in items)
    return "".join(out)


# --------------------------------------------------------------------------- validation helpers


def _item_problem(item: Any, index: int, deepseek: bool) -> str | None:
    """A shape problem of ``input[index]`` (type level), or None."""
    where = f"input[{index}]"
    if not isinstance(item, dict):
        return f"{where}: invalid type: {serde_desc(item)}, expected an input item"
    kind = item.get("type", "message" if "role" in item else None)
    if kind is None:
        return f"{where}: missing field `type`"
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            return f"{where}.role: unknown variant `{role}`"
        content = item.get("content")
        if isinstance(content, str):
            return None
        if not isinstance(content, list):
            return f"{where}.content: invalid type: {serde_desc(content)}, expected a sequence"
        allowed = OUTPUT_PART_TYPES if role == "assistant" else INPUT_PART_TYPES
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                return f"{where}.content[{j}]: invalid type: {serde_desc(part)}"
            if part.get("type") not in allowed:
                expected = ", ".join(f"`{t}`" for t in sorted(allowed))
                return f"{where}.content[{j}].type: unknown variant `{part.get('type')}`, expected one of {expected}"
            if part.get("type") in ("input_text", "output_text") and not isinstance(
                part.get("text"), str
            ):
                return f"{where}.content[{j}]: missing field `text`"
        return None
    if kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str):
                return f"{where}: missing field `{key}`"
        return None
    if kind == "web_search_call":
        if not isinstance(item.get("id"), str):
            return f"{where}: missing field `id`"
        return None
    if kind == "function_call_output":
        if not isinstance(item.get("call_id"), str):
            return f"{where}: missing field `call_id`"
        if not isinstance(item.get("output"), str | list):
            return f"{where}: missing field `output`"
        return None
    if kind == "reasoning":
        if not deepseek:
            return None  # judged semantically (ids, encrypted content)
        content = item.get("content")
        if content is None:
            return None
        if not isinstance(content, list):
            return f"{where}.content: invalid type: {serde_desc(content)}, expected a sequence"
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "reasoning_text":
                return f"{where}.content[{j}]: expected a `reasoning_text` part"
            if not isinstance(part.get("text"), str):
                return f"{where}.content[{j}]: missing field `text`"
        return None
    return f"{where}.type: unknown variant `{kind}`"


def _sequence_problem(items: list[dict[str, Any]]) -> str | None:
    """Outputs answer earlier calls (by ``call_id``); every call gets an output."""
    called: list[str] = []
    answered: set[str] = set()
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            called.append(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in called:
                return MSG_NO_CALL.format(item["call_id"])
            answered.add(item["call_id"])
    for call_id in called:
        if call_id not in answered:
            return MSG_NO_OUTPUT.format(call_id)
    return None


def _tool_turn_lacks_reasoning(items: list[dict[str, Any]]) -> bool:
    """DeepSeek: an assistant run (reasoning / assistant message / calls) with calls
    but no reasoning item."""
    has_call = has_reasoning = False
    for item in [*items, {"type": "message", "role": "user"}]:
        kind = item.get("type", "message")
        assistant_side = kind in ("reasoning", "function_call", "web_search_call") or (
            kind == "message" and item.get("role") == "assistant"
        )
        if assistant_side:
            has_call = has_call or kind == "function_call"
            has_reasoning = has_reasoning or kind == "reasoning"
            continue
        if has_call and not has_reasoning:
            return True
        has_call = has_reasoning = False
    return False


def _named_event(payload: dict[str, Any], sequence_number: int) -> bytes:
    """``event: <type>`` + ``data:`` with ``type`` and ``sequence_number`` first."""
    data = {"type": payload["type"], "sequence_number": sequence_number}
    data.update((k, v) for k, v in payload.items() if k != "type")
    return (
        b"event: "
        + payload["type"].encode()
        + b"\ndata: "
        + dumps_compact(data).encode("utf-8", "surrogatepass")
        + b"\n\n"
    )


def _hex_id(ids: IdSource, prefix: str) -> str:
    return prefix + f"{ids.bits(128):032x}"


def _terminal(reply: Reply) -> tuple[str, str]:
    """(``completed`` | ``incomplete`` | ``failed``, reason or error code)."""
    finish = reply.finish_reason
    if finish in (None, "stop", "tool_calls"):
        return "completed", ""
    if finish in ("length", "max_output_tokens"):
        return "incomplete", "max_output_tokens"
    if finish == "failed" or finish.startswith("failed:"):
        return "failed", finish.partition(":")[2] or "server_error"
    return "incomplete", finish


# --------------------------------------------------------------------------- the server


class ResponsesDialect(FlavouredDialect):
    """``POST /responses`` (also under ``/v1``), flavour ``deepseek`` or ``openai``.

    ``done_marker=True`` appends a (non-standard) ``data: [DONE]`` after the
    terminal event, as some proxies do.
    """

    routes = RESPONSES_PATHS
    stream_keepalive = SSE_KEEPALIVE
    flavour_models = FLAVOUR_MODELS
    flavour: Flavour

    def __init__(self, flavour: Flavour = "deepseek", *, done_marker: bool = False) -> None:
        super().__init__(flavour)
        self.done_marker = done_marker

    def fixture_error(self, status: int, message: str) -> HttpError:
        return openai_fixture_error(status, message)

    def send_error(self, h: RequestHandler, err: HttpError, wire: Wire) -> None:
        send_openai_error(h, err)

    # ---------------------------------------------------------------- request handling

    def context(self, body: dict[str, Any]) -> ChatContext:
        return ChatContext(
            body=body,
            model=str(body.get("model")),
            stream=body.get("stream") is True,
            include_usage=False,
            thinking=effort_of(body) != "none",
            has_tools=bool(body.get("tools")),
        )

    def context_limit(self, body: dict[str, Any], limit: int) -> HttpError | None:
        prompt = count_tokens(render_responses_prompt(body))
        max_tokens = body.get("max_output_tokens")
        completion = max_tokens if isinstance(max_tokens, int) else 0
        if prompt + completion <= limit:
            return None
        if self.flavour == "openai":
            return HttpError(
                400,
                "Your input exceeds the context window of this model. "
                "Please adjust your input and try again.",
                code="context_length_exceeded",
            )
        return deepseek_context_error(limit, prompt, completion)

    # ---------------------------------------------------------------- validation

    def authenticate(self, headers: dict[str, str], api_key: str) -> HttpError | None:
        return bearer_auth(self.flavour, api_key, headers)

    def validate(self, request: IncomingRequest, models: set[str] | None) -> HttpError | None:
        deepseek = self.flavour == "deepseek"
        parsed, parse_error = request.parsed, request.parse_error

        def bad(detail: str) -> HttpError:
            # DeepSeek: serde's 422; OpenAI: 400 invalid_request_error.
            if deepseek:
                return HttpError(422, MSG_DESERIALIZE + detail)
            return HttpError(400, f"Invalid request: {detail}", code=None)

        if parse_error is not None or not isinstance(parsed, dict):
            if deepseek:
                if parse_error is not None:
                    return HttpError(400, MSG_DESERIALIZE + parse_error)
                return bad(f"invalid type: {serde_desc(parsed)}, expected struct ResponsesRequest")
            return HttpError(400, MSG_OPENAI_BAD_JSON, code=None)
        body: dict[str, Any] = parsed
        model = body.get("model")
        if not isinstance(model, str) or not model:
            if deepseek:
                return bad("missing field `model`" if model is None else "model: expected a string")
            return HttpError(
                400, "Missing required parameter: 'model'.", code="missing_required_parameter"
            )
        items = body.get("input")
        if items is None:
            if deepseek:
                return bad("missing field `input`")
            return HttpError(
                400, "Missing required parameter: 'input'.", code="missing_required_parameter"
            )
        if not isinstance(items, str | list):
            return bad(f"input: invalid type: {serde_desc(items)}, expected a string or a sequence")
        item_list: list[dict[str, Any]] = []
        if isinstance(items, list):
            for i, item in enumerate(items):
                problem = _item_problem(item, i, deepseek)
                if problem is not None:
                    return bad(problem)
                item_list.append(item)
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            return bad(f"instructions: invalid type: {serde_desc(instructions)}, expected a string")
        reasoning = body.get("reasoning")
        if reasoning is not None and not isinstance(reasoning, dict):
            return bad(
                f"reasoning: invalid type: {serde_desc(reasoning)}, expected struct Reasoning"
            )
        effort = effort_of(body)
        efforts = REASONING_EFFORTS if deepseek else OPENAI_EFFORTS
        if effort is not None and effort not in efforts:
            expected = ", ".join(f"`{e}`" for e in efforts)
            return bad(f"reasoning.effort: unknown variant `{effort}`, expected one of {expected}")
        max_tokens = body.get("max_output_tokens")
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool)
        ):
            return bad(f"max_output_tokens: invalid type: {serde_desc(max_tokens)}, expected u32")
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            return bad(f"tools: invalid type: {serde_desc(tools)}, expected a sequence")
        for j, tool in enumerate(tools or ()):
            if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
                return bad(f"tools[{j}]: missing field `type`")
            if tool["type"] == "function" and not isinstance(tool.get("name"), str):
                return bad(f"tools[{j}]: missing field `name`")
            if deepseek and tool["type"] == "custom" and tool.get("name") != "apply_patch":
                return HttpError(400, f"Unsupported custom tool: {tool.get('name')!r}")

        # ---- semantic checks
        if models is not None and model not in models:
            if deepseek:
                return HttpError(400, "Model Not Exist")
            return HttpError(
                400, f"The requested model '{model}' does not exist.", code="model_not_found"
            )
        if isinstance(items, list) and not items:
            return HttpError(400, "Invalid request: input must not be empty", code=None)
        if max_tokens is not None and deepseek and not 1 <= max_tokens <= MAX_OUTPUT_TOKENS:
            return HttpError(
                400,
                "Invalid max_output_tokens value, the valid range of max_output_tokens is "
                f"[1, {MAX_OUTPUT_TOKENS}]",
            )
        if max_tokens is not None and not deepseek and max_tokens < 16:
            return HttpError(
                400,
                "Invalid 'max_output_tokens': integer below minimum value. Expected a "
                f"value >= 16, but got {max_tokens} instead.",
                code="integer_below_min_value",
            )
        if not deepseek:
            for i, item in enumerate(item_list):
                if item.get("type") == "reasoning" and not item.get("encrypted_content"):
                    if not isinstance(item.get("id"), str):
                        return HttpError(
                            400,
                            f"Missing required parameter: 'input[{i}].id'.",
                            code="missing_required_parameter",
                        )
                    return HttpError(404, MSG_NOT_PERSISTED.format(item["id"]), code=None)
        problem = _sequence_problem(item_list)
        if problem is not None:
            return HttpError(400, problem, code=None if not deepseek else "invalid_request_error")
        if deepseek and effort != "none" and tools and _tool_turn_lacks_reasoning(item_list):
            return HttpError(400, MSG_REASONING_REQUIRED)
        return None

    # ---------------------------------------------------------------- the answer

    @staticmethod
    def _usage(prompt_bytes: int, hit_bytes: int, reasoning: str, output: str) -> dict[str, Any]:
        prompt, hit, completion = usage_counts(prompt_bytes, hit_bytes, output)
        return {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": hit},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": count_tokens(reasoning)},
            "total_tokens": prompt + completion,
        }

    def send_reply(self, h: RequestHandler, reply: Reply, ctx: ChatContext, wire: Wire) -> None:
        deepseek = self.flavour == "deepseek"
        if not ctx.thinking:
            reasoning = ""
        else:
            reasoning = reply.deepseek_reasoning() if deepseek else reply.reasoning
        call_ids = tool_call_ids(self.flavour, reply.tool_calls, wire)
        outcome, reason = _terminal(reply)

        # ---- simulated prompt cache and usage
        space = (ctx.model, str(ctx.body.get("user") or ""))
        with_reasoning = deepseek and ctx.has_tools and ctx.thinking
        prompt = render_responses_prompt(ctx.body, thinking=ctx.thinking).encode(
            "utf-8", "surrogatepass"
        )
        hit_bytes = wire.cache.lookup_and_persist(space, prompt)
        generated = reasoning + reply.content + "".join(s.arguments for s in reply.tool_calls)
        usage = (
            reply.usage
            if reply.usage is not None
            else self._usage(len(prompt), hit_bytes, reasoning, generated)
        )

        # ---- the output items, as they end up in the final response object
        response_id = _hex_id(wire.ids, "resp_")
        created = int(time.time())
        model = reply.model if reply.model is not None else ctx.model
        output: list[dict[str, Any]] = []
        # (added item, [events between added and done], done item)
        plans: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = []
        if reasoning:
            plans.append(
                self._reasoning_plan(wire.ids, len(plans), reasoning, deepseek, reply.chunk_size)
            )
        if reply.web_searches and not any(
            isinstance(t, dict) and t.get("type") == "web_search"
            for t in ctx.body.get("tools") or []
        ):
            send_openai_error(h, HttpError(400, "web search scripted but not offered in tools"))
            return
        for query in reply.web_searches:
            plans.append(self._search_plan(wire.ids, len(plans), query))
        if reply.content or not reply.tool_calls:
            plans.append(
                self._message_plan(
                    wire.ids,
                    len(plans),
                    reply.content,
                    deepseek,
                    bool(reply.tool_calls),
                    reply.chunk_size,
                )
            )
        for cid, spec in zip(call_ids, reply.tool_calls, strict=True):
            plans.append(self._call_plan(wire.ids, len(plans), cid, spec, reply.arg_chunk))
        output = [done for _, _, done in plans]

        # What the client replays next time, rendered like the prompt.
        replay = []
        if with_reasoning:
            replay.append(
                {"type": "reasoning", "content": [{"type": "reasoning_text", "text": reasoning}]}
            )
        replay.extend(item for item in output if item["type"] != "reasoning")
        output_unit = prompt + "".join(_render_item(i, with_reasoning) for i in replay).encode(
            "utf-8", "surrogatepass"
        )

        def response(status: str, items: list[dict[str, Any]], final: bool) -> dict[str, Any]:
            obj: dict[str, Any] = {
                "id": response_id,
                "object": "response",
                "created_at": created,
                "status": status,
                "model": model,
                "output": items,
                "store": False,
                "parallel_tool_calls": True,
            }
            if final:
                obj["error"] = None
                obj["incomplete_details"] = None
                if status == "incomplete":
                    obj["incomplete_details"] = {"reason": reason}
                elif status == "failed":
                    obj["error"] = {"code": reason, "message": DEFAULT_FAILURE}
                obj["usage"] = None if status == "failed" else usage
            else:
                obj["usage"] = None
            return obj

        final = response(outcome, output if outcome != "failed" else [], True)

        def persist_output() -> None:
            if outcome != "failed":
                wire.cache.persist(space, output_unit)

        if not ctx.stream:
            # The final response object as one JSON body; a failure as a 500.
            if outcome == "failed":
                send_openai_error(
                    h, HttpError(500, DEFAULT_FAILURE, type="server_error", code=None)
                )
                return
            send_json_body(
                h,
                wire.stop,
                b"\n" * max(0, reply.keepalives)
                + dumps_compact(final).encode("utf-8", "surrogatepass"),
                delay=reply.delay,
                drop_after=reply.drop_after,
                before_body=persist_output,
            )
            return

        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": response("in_progress", [], False)},
            {"type": "response.in_progress", "response": response("in_progress", [], False)},
        ]
        for index, (added, middle, done) in enumerate(plans):
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            events.extend(middle)
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": done}
            )
        terminal = {"type": f"response.{outcome}", "response": final}

        # Sequence numbers count the events sent; the error event and the
        # terminal one both come right after all of ``events``.
        error_event = None
        if reply.error_event is not None:
            err = reply.error_event
            error = {
                "type": "error",
                "code": err.get("code", err.get("type")),
                "message": err.get("message"),
                "param": err.get("param"),
            }
            error_event = _named_event(error, len(events))

        send_sse_stream(
            h,
            wire.stop,
            reply,
            keepalive_comments=reply.keepalives,
            events=[_named_event(event, seq) for seq, event in enumerate(events)],
            error_event=error_event,
            tail=[_named_event(terminal, len(events))],
            trailer=b"data: [DONE]\n\n" if self.done_marker else None,
            before_tail=persist_output,
        )

    # -- item plans -------------------------------------------------------

    @staticmethod
    def _search_plan(
        ids: IdSource, index: int, query: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        """A server-side ``web_search_call`` item: its status events, then the item."""
        item_id = _hex_id(ids, "ws_")
        where = {"item_id": item_id, "output_index": index}
        events = [
            {"type": f"response.web_search_call.{step}", **where}
            for step in ("in_progress", "searching", "completed")
        ]
        added = {"type": "web_search_call", "id": item_id, "status": "in_progress"}
        action = {"type": "search", "query": query}
        done = {"type": "web_search_call", "id": item_id, "status": "completed", "action": action}
        return added, events, done

    def _reasoning_plan(
        self, ids: IdSource, index: int, text: str, deepseek: bool, size: int
    ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        item_id = _hex_id(ids, "rs_")
        events: list[dict[str, Any]] = []
        if deepseek:
            added = {
                "type": "reasoning",
                "id": item_id,
                "status": "in_progress",
                "content": [],
                "summary": [],
            }
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            part = {"type": "reasoning_text", "text": ""}
            events.append({"type": "response.content_part.added", **where, "part": part})
            for piece in split_text(text, size):
                events.append({"type": "response.reasoning_text.delta", **where, "delta": piece})
            events.append({"type": "response.reasoning_text.done", **where, "text": text})
            done_part = {"type": "reasoning_text", "text": text}
            events.append({"type": "response.content_part.done", **where, "part": done_part})
            done = {
                "type": "reasoning",
                "id": item_id,
                "status": "completed",
                "content": [done_part],
                "summary": [],
                "encrypted_content": str(uuid.UUID(int=ids.bits(128), version=4)),
            }
            return added, events, done
        added = {"type": "reasoning", "id": item_id, "summary": []}
        summaries = [p for p in text.split("\n\n") if p] or [text]
        for k, paragraph in enumerate(summaries):
            where = {"item_id": item_id, "output_index": index, "summary_index": k}
            events.append(
                {
                    "type": "response.reasoning_summary_part.added",
                    **where,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
            for piece in split_text(paragraph, size):
                events.append(
                    {"type": "response.reasoning_summary_text.delta", **where, "delta": piece}
                )
            events.append(
                {"type": "response.reasoning_summary_text.done", **where, "text": paragraph}
            )
            events.append(
                {
                    "type": "response.reasoning_summary_part.done",
                    **where,
                    "part": {"type": "summary_text", "text": paragraph},
                }
            )
        done = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": p} for p in summaries],
        }
        return added, events, done

    def _message_plan(
        self, ids: IdSource, index: int, text: str, deepseek: bool, has_calls: bool, size: int
    ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        item_id = _hex_id(ids, "msg_")
        added: dict[str, Any] = {
            "type": "message",
            "id": item_id,
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        if deepseek and not has_calls:
            added["phase"] = "final_answer"
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        extra = {} if deepseek else {"logprobs": []}
        events: list[dict[str, Any]] = [
            {
                "type": "response.content_part.added",
                **where,
                "part": {"type": "output_text", "text": "", "annotations": []},
            }
        ]
        for piece in split_text(text, size):
            events.append({"type": "response.output_text.delta", **where, "delta": piece, **extra})
        events.append({"type": "response.output_text.done", **where, "text": text, **extra})
        part = {"type": "output_text", "text": text, "annotations": []}
        events.append({"type": "response.content_part.done", **where, "part": part})
        done = {**added, "status": "completed", "content": [part]}
        return added, events, done

    def _call_plan(
        self, ids: IdSource, index: int, call_id: str, spec: ToolCallSpec, size: int
    ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        item_id = _hex_id(ids, "fc_")
        added = {
            "type": "function_call",
            "id": item_id,
            "call_id": call_id,
            "name": spec.name,
            "arguments": "",
            "status": "in_progress",
        }
        where = {"item_id": item_id, "output_index": index}
        events = [
            {"type": "response.function_call_arguments.delta", **where, "delta": piece}
            for piece in split_text(spec.arguments, size)
        ]
        events.append(
            {"type": "response.function_call_arguments.done", **where, "arguments": spec.arguments}
        )
        done = {**added, "arguments": spec.arguments, "status": "completed"}
        return added, events, done
