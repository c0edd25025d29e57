"""The ``anthropic`` provider kind against the Anthropic-flavoured loopback fixture.

Both flavours: Anthropic proper (signed thinking, ``budget_tokens``) and
DeepSeek's ``/anthropic`` endpoint (placeholder signatures, ``output_config``).
The fixture is strict (wire-formats.md §6), so an accepted request is evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from reasonix_core import events as ev
from reasonix_core.config.schema import ProviderConfig
from reasonix_core.errors import ProviderError, StreamInterrupted
from reasonix_core.messages import Message, ToolCall
from reasonix_core.provider.anthropic import AnthropicProvider, parse_usage, tool_input
from reasonix_core.provider.base import (
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
    ToolSchema,
    create_provider,
    known_kinds,
)
from reasonix_testkit import (
    AnthropicDialect,
    FixtureServer,
    HttpError,
    Reply,
    Stall,
    ToolCallSpec,
    count_tokens,
)
from reasonix_testkit.dialects.anthropic import MSG_THINKING_REQUIRED, render_prompt, sign_thinking
from tests.conftest import TEST_KEY, TEST_KEY_ENV
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages

KEY = "sk-ant-test"
TOOLS = (
    ToolSchema(
        name="echo",
        description="Echo text back.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    ),
)


def provider_for(server: FixtureServer, *, key: str = KEY, **kw: object) -> AnthropicProvider:
    deepseek = server.flavour == "deepseek"
    cfg = ProviderConfig(
        name="ant",
        kind="anthropic",
        base_url=server.base_url + ("/anthropic" if deepseek else ""),
        models=["claude-test"],
        reasoning_protocol="deepseek" if deepseek else None,
    )
    return AnthropicProvider(cfg, key, **kw)  # type: ignore[arg-type]


def request(model: str = "claude-test", **kw: object) -> Request:
    base: dict[str, object] = dict(
        model=model,
        messages=(Message(role="system", content="be brief"), Message(role="user", content="hi")),
    )
    base.update(kw)
    return Request(**base)  # type: ignore[arg-type]


async def collect(provider: AnthropicProvider, req: Request) -> list:
    out = []
    try:
        async for chunk in provider.stream(provider.prepare(req)):
            out.append(chunk)
    finally:
        await provider.aclose()
    return out


@pytest.fixture
def ant():
    with FixtureServer(AnthropicDialect("anthropic"), api_key=KEY, seed=1) as srv:
        yield srv


@pytest.fixture
def dsa():
    with FixtureServer(AnthropicDialect("deepseek"), api_key=KEY, seed=2) as srv:
        yield srv


# --------------------------------------------------------------------------- registry


def test_kind_is_registered_and_created_from_config():
    assert "anthropic" in known_kinds()
    cfg = ProviderConfig(name="a", kind="anthropic", base_url="https://api.anthropic.com")
    provider = create_provider(cfg, "k")
    assert isinstance(provider, AnthropicProvider)
    assert provider.url == "https://api.anthropic.com/v1/messages"
    assert provider.max_output_tokens("claude-x") == 32000
    ds = ProviderConfig(name="d", kind="anthropic", base_url="https://api.deepseek.com/anthropic")
    assert create_provider(ds, "k").url == "https://api.deepseek.com/anthropic/v1/messages"
    assert create_provider(ds, "k").max_output_tokens("deepseek-flash") == 393216
    # A base that already ends in /v1 is not doubled; request_url wins outright.
    v1 = ProviderConfig(name="v", kind="anthropic", base_url="https://proxy.example/v1/")
    assert create_provider(v1, "k").url == "https://proxy.example/v1/messages"
    full = ProviderConfig(name="f", kind="anthropic", request_url="https://x.example/msgs")
    assert create_provider(full, "k").url == "https://x.example/msgs"


# --------------------------------------------------------------------------- streaming


async def test_anthropic_stream_text_thinking_signature_and_usage(ant):
    ant.enqueue(Reply(reasoning="weighing options", content="the answer", chunk_size=4))
    chunks = await collect(provider_for(ant), request(effort="high"))
    reasoning = "".join(c.text for c in chunks if isinstance(c, ReasoningChunk))
    text = "".join(c.text for c in chunks if isinstance(c, TextChunk))
    assert reasoning == "weighing options" and text == "the answer"
    end = chunks[-1]
    assert isinstance(end, StreamEnd) and end.finish_reason == "stop"
    assert end.reasoning_signature == sign_thinking("weighing options")
    assert end.model == "claude-test"
    u = end.usage
    assert u is not None and u.prompt_tokens == u.cache_hit_tokens + u.cache_miss_tokens
    assert u.prompt_tokens == count_tokens(render_prompt(json.loads(ant.requests[0].body)))
    assert u.completion_tokens == count_tokens("weighing options" + "the answer")
    # The request: headers and the fixed body shape.
    sent = ant.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and "authorization" not in sent.headers
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    body = json.loads(sent.body)
    assert list(body) == ["model", "max_tokens", "system", "messages", "stream", "thinking"]
    assert body["max_tokens"] == 32000 and body["system"] == "be brief"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert sent.body == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def test_deepseek_flavour_bearer_effort_and_placeholder_signature(dsa):
    dsa.dialect.signature_in_start = True  # DeepSeek may put the signature in the block start
    dsa.dialect.pings = False
    dsa.enqueue(Reply(reasoning="short think", content="ok"))
    chunks = await collect(provider_for(dsa), request("deepseek-flash", effort="max"))
    end = chunks[-1]
    assert end.finish_reason == "stop" and end.reasoning_signature.startswith("msg_")
    sent = dsa.requests[0]
    assert sent.path == "/anthropic/v1/messages"
    assert sent.headers["authorization"] == f"Bearer {KEY}" and sent.headers["x-api-key"] == KEY
    body = json.loads(sent.body)
    assert body["max_tokens"] == 393216
    assert body["thinking"] == {"type": "enabled"} and body["output_config"] == {"effort": "max"}
    assert list(body)[-2:] == ["thinking", "output_config"]


@pytest.mark.parametrize(
    ("effort", "thinking", "output_config"),
    [
        ("auto", None, None),
        ("disabled", {"type": "disabled"}, None),
        ("low", {"type": "enabled"}, {"effort": "low"}),
        ("medium", {"type": "enabled"}, {"effort": "high"}),
        ("high", {"type": "enabled"}, {"effort": "high"}),
        ("max", {"type": "enabled"}, {"effort": "max"}),
    ],
)
def test_deepseek_effort_mapping(effort, thinking, output_config):
    cfg = ProviderConfig(name="d", kind="anthropic", base_url="https://api.deepseek.com/anthropic")
    body = json.loads(AnthropicProvider(cfg, "k").prepare(request(effort=effort)).body)
    assert body.get("thinking") == thinking and body.get("output_config") == output_config


@pytest.mark.parametrize(
    ("effort", "max_tokens", "thinking"),
    [
        ("auto", None, None),
        ("disabled", None, {"type": "disabled"}),
        ("low", None, {"type": "enabled", "budget_tokens": 4096}),
        ("high", None, {"type": "enabled", "budget_tokens": 16384}),
        ("max", None, {"type": "enabled", "budget_tokens": 31999}),
        ("max", 8000, {"type": "enabled", "budget_tokens": 7999}),
        ("high", 1000, {"type": "disabled"}),  # no room for Anthropic's 1024 minimum
    ],
)
def test_anthropic_effort_mapping(effort, max_tokens, thinking):
    cfg = ProviderConfig(name="a", kind="anthropic", base_url="https://api.anthropic.com")
    req = request(effort=effort, max_output_tokens=max_tokens)
    body = json.loads(AnthropicProvider(cfg, "k").prepare(req).body)
    assert body.get("thinking") == thinking and "output_config" not in body
    assert body["max_tokens"] == (max_tokens or 32000)


def test_reasoning_protocol_none_sends_no_thinking_settings():
    cfg = ProviderConfig(
        name="a", kind="anthropic", base_url="https://api.anthropic.com", reasoning_protocol="none"
    )
    body = json.loads(AnthropicProvider(cfg, "k").prepare(request(effort="high")).body)
    assert "thinking" not in body and "output_config" not in body


async def test_tool_use_fragments_accumulate_to_the_exact_argument_strings(ant):
    first = '{"text":  "spaced \\"quoted\\" \\u00e9 ünï"}'
    second = '{\n  "text": "two"\n}'
    ant.enqueue(
        Reply(
            content="calling",
            tool_calls=[
                ToolCallSpec("echo", first),
                ToolCallSpec("echo", second, id="toolu_fixed"),
            ],
            arg_chunk=3,
        )
    )
    chunks = await collect(provider_for(ant), request(tools=TOOLS))
    frags = [c for c in chunks if isinstance(c, ToolCallFragment)]
    assert {f.index for f in frags} == {0, 1}
    assert "".join(f.arguments for f in frags if f.index == 0) == first
    heads = [f for f in frags if f.id]
    assert [h.name for h in heads] == ["echo", "echo"] and heads[1].id == "toolu_fixed"
    end = chunks[-1]
    assert end.finish_reason == "tool_calls"
    assert [c.arguments for c in end.tool_calls] == [first, second]
    assert end.tool_calls[1].id == "toolu_fixed" and end.tool_calls[0].id.startswith("toolu_")


# --------------------------------------------------------------------------- raw event edge cases


def _sse(*events: dict) -> bytes:
    out = b""
    for event in events:
        out += f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    return out


def _start(usage: dict | None = None) -> dict:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-raw",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 1},
        },
    }


def _text_block(index: int, text: str) -> list[dict]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


def _stop(reason: str, usage: dict | None = None) -> list[dict]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": usage or {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]


async def raw_stream(payload: bytes, *, deepseek: bool = False) -> list:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=payload, headers={"content-type": "text/event-stream"})

    cfg = ProviderConfig(
        name="raw",
        kind="anthropic",
        base_url="https://api.deepseek.com/anthropic" if deepseek else "https://api.anthropic.com",
    )
    provider = AnthropicProvider(cfg, "k", transport=httpx.MockTransport(handler))
    return await collect(provider, request())


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("model_context_window_exceeded", "length"),
        ("pause_turn", "pause_turn"),
        ("something_new", "something_new"),
    ],
)
async def test_stop_reason_mapping(reason, finish):
    chunks = await raw_stream(_sse(_start(), *_text_block(0, "x"), *_stop(reason)))
    assert chunks[-1].finish_reason == finish


async def test_unknown_events_and_deltas_are_ignored_and_usage_is_cumulative():
    payload = _sse(
        _start(
            {"input_tokens": 7, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 90}
        ),
        {"type": "ping"},
        {"type": "brand_new_event", "stuff": 1},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "redacted_thinking", "data": "opaque"},
        },
        {"type": "content_block_stop", "index": 0},
        *_text_block(1, "hello"),
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "citations_delta", "citation": {}},
        },
        {"type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 2}},
        *_stop("end_turn", {"output_tokens": 9, "input_tokens": 7}),
    )
    chunks = await raw_stream(payload)
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "hello"
    usage = chunks[-1].usage
    assert usage.prompt_tokens == 100 and usage.cache_hit_tokens == 90
    assert usage.cache_miss_tokens == 10 and usage.completion_tokens == 9  # latest, not summed


async def test_tool_input_sent_whole_in_block_start():
    payload = _sse(
        _start(),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_a",
                "name": "echo",
                "input": {"text": "é"},
            },
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_b", "name": "ls", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
        {"type": "content_block_stop", "index": 1},
        *_stop("tool_use"),
    )
    end = (await raw_stream(payload))[-1]
    assert [(c.id, c.arguments) for c in end.tool_calls] == [
        ("toolu_a", '{"text":"é"}'),
        ("toolu_b", "{}"),
    ]


async def test_stream_without_stop_is_interrupted_and_stop_without_message_stop_is_fine():
    with pytest.raises(StreamInterrupted):
        await raw_stream(_sse(_start(), *_text_block(0, "partial")))
    chunks = await raw_stream(_sse(_start(), *_text_block(0, "whole"), *_stop("end_turn")[:1]))
    assert chunks[-1].finish_reason == "stop"


async def test_deepseek_transient_stop_reason_is_retryable():
    with pytest.raises(ProviderError) as info:
        await raw_stream(
            _sse(_start(), *_text_block(0, "x"), *_stop("insufficient_system_resource")),
            deepseek=True,
        )
    assert info.value.retryable and info.value.kind == "insufficient_system_resource"


# --------------------------------------------------------------------------- usage


def test_usage_anthropic_semantics_exclude_cache_from_input():
    u = parse_usage(
        {
            "input_tokens": 50,
            "cache_creation_input_tokens": 200,
            "cache_read_input_tokens": 1000,
            "output_tokens": 30,
        }
    )
    assert (u.prompt_tokens, u.cache_hit_tokens, u.cache_miss_tokens) == (1250, 1000, 250)
    assert u.completion_tokens == 30 and u.total_tokens == 1280
    # An "inclusive-looking" report from Anthropic itself is still read the Anthropic way.
    u = parse_usage({"input_tokens": 1300, "cache_read_input_tokens": 1200})
    assert (u.prompt_tokens, u.cache_hit_tokens) == (2500, 1200)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Absent or null cache fields: everything is a miss.
        ({"input_tokens": 40, "output_tokens": 3}, (40, 0, 40)),
        ({"input_tokens": 40, "cache_read_input_tokens": None}, (40, 0, 40)),
        ({"input_tokens": 40, "cache_read_input_tokens": 0}, (40, 0, 40)),
        # Anthropic-style exclusive report: read > input.
        ({"input_tokens": 64, "cache_read_input_tokens": 1216}, (1280, 1216, 64)),
        # OpenAI-style inclusive report (observed from DeepSeek): input >= read.
        ({"input_tokens": 1300, "cache_read_input_tokens": 1152}, (1300, 1152, 148)),
        ({"input_tokens": 1300, "cache_read_input_tokens": 1300}, (1300, 1300, 0)),
        # Garbage values count as zero.
        ({"input_tokens": -5, "cache_read_input_tokens": "x", "output_tokens": True}, (0, 0, 0)),
    ],
)
def test_usage_deepseek_absent_zero_and_overlapping(raw, expected):
    u = parse_usage(raw, deepseek=True)
    assert (u.prompt_tokens, u.cache_hit_tokens, u.cache_miss_tokens) == expected
    assert u.prompt_tokens == u.cache_hit_tokens + u.cache_miss_tokens


async def test_fixture_cache_reports_reads_in_each_usage_style(ant, dsa):
    history = (
        Message(role="system", content="s" * 400),
        Message(role="user", content="first question " * 20),
    )
    ant.enqueue(Reply(content="first answer"), Reply(content="second"))
    await collect(provider_for(ant), request(messages=history))
    follow = (
        *history,
        Message(role="assistant", content="first answer"),
        Message(role="user", content="more"),
    )
    end = (await collect(provider_for(ant), request(messages=follow)))[-1]
    prompt = count_tokens(render_prompt(json.loads(ant.requests[1].body)))
    assert end.usage.prompt_tokens == prompt  # input + cache read, not double counted
    assert end.usage.cache_hit_tokens > 0.8 * prompt
    # DeepSeek's inclusive style gives the same totals through the heuristic.
    dsa.dialect.usage_style = "inclusive"
    dsa.enqueue(Reply(content="first answer"), Reply(content="second"))
    await collect(provider_for(dsa), request("deepseek-flash", messages=history))
    end = (await collect(provider_for(dsa), request("deepseek-flash", messages=follow)))[-1]
    prompt = count_tokens(render_prompt(json.loads(dsa.requests[1].body)))
    assert end.usage.prompt_tokens == prompt and end.usage.cache_hit_tokens > 0.8 * prompt


# --------------------------------------------------------------------------- errors


async def test_http_errors_map_envelope_status_and_retryability(ant):
    ant.enqueue(HttpError(529, "Overloaded"))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert info.value.status == 529 and info.value.retryable
    assert info.value.message == "Overloaded"
    ant.enqueue(
        HttpError(429, "Number of request tokens has exceeded your rate limit", retry_after=2)
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert info.value.status == 429 and info.value.retryable and info.value.retry_after == 2
    assert "rate limit" in str(info.value)
    ant.enqueue(HttpError(400, "messages: something is off"))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert info.value.status == 400 and not info.value.retryable
    assert info.value.message == "messages: something is off"
    ant.enqueue(HttpError(500, "Internal", headers={"x-should-retry": "false"}))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert not info.value.retryable
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant, key="wrong"), request())
    assert info.value.status == 401 and info.value.message == "invalid x-api-key"
    assert not info.value.retryable


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_retryable_statuses(ant, status):
    ant.enqueue(HttpError(status, "try again"))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert info.value.retryable and info.value.status == status


async def test_in_band_error_events(ant):
    ant.enqueue(
        Reply(content="partial", error_event={"type": "overloaded_error", "message": "Overloaded"})
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert info.value.retryable and "Overloaded" in str(info.value)
    assert info.value.kind == "stream_error"
    ant.enqueue(
        Reply(
            content="p",
            error_event={"type": "invalid_request_error", "message": "prompt is too long"},
        )
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant), request())
    assert not info.value.retryable


async def test_dropped_and_garbled_streams_are_interrupted(ant):
    ant.enqueue(Reply(content="x" * 100, chunk_size=5, drop_after=4))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ant), request())
    ant.enqueue(Reply(content="ok", garbage_line="upstream error: read ECONNRESET"))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ant), request())


async def test_idle_watchdog_is_not_fed_by_pings(ant):
    ant.enqueue(Stall(5, keepalive_every=0.05))  # pings only, never a real event
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ant, stream_idle_timeout=0.4), request())
    assert info.value.kind == "idle_timeout" and info.value.retryable


async def test_connection_refused_is_retryable():
    cfg = ProviderConfig(name="x", kind="anthropic", base_url="http://127.0.0.1:1")
    with pytest.raises(ProviderError) as info:
        await collect(AnthropicProvider(cfg, "k"), request())
    assert info.value.retryable and info.value.kind == "connection"


# --------------------------------------------------------------------------- request encoding


def _tool_history(signature: str = "") -> tuple[Message, ...]:
    meta = {"reasoning_signature": signature} if signature else {}
    return (
        Message(role="system", content="sys"),
        Message(role="user", content="go"),
        Message(
            role="assistant",
            content="two calls",
            reasoning_content="plan",
            tool_calls=(
                ToolCall(id="toolu_1", name="echo", arguments='{"text": "a", "n": 1.50}'),
                ToolCall(id="toolu_2", name="echo", arguments='{"text": "b'),  # truncated
            ),
            meta=meta,
        ),
        Message(role="tool", tool_call_id="toolu_1", content="a"),
        Message(role="tool", tool_call_id="toolu_2", content="bad arguments"),
    )


def test_messages_encoding_blocks_merging_and_fallback():
    cfg = ProviderConfig(name="a", kind="anthropic", base_url="https://api.anthropic.com")
    provider = AnthropicProvider(cfg, "k")
    sig = sign_thinking("plan")
    system, messages = provider.encode_messages(_tool_history(sig))
    assert system == "sys"
    assert messages == [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": sig},
                {"type": "text", "text": "two calls"},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "echo",
                    "input": {"text": "a", "n": 1.5},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "echo",
                    "input": {"_raw": '{"text": "b'},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "bad arguments"},
            ],
        },
    ]
    # Unsigned reasoning (e.g. from another provider) cannot go to Anthropic.
    _, unsigned = provider.encode_messages(_tool_history())
    assert unsigned[1]["content"][0]["type"] == "text"
    # A user message after tool results joins their turn, after them.
    _, merged = provider.encode_messages(
        (*_tool_history(sig), Message(role="user", content="next"))
    )
    assert merged[-1]["content"][-1] == {"type": "text", "text": "next"}
    assert len(merged) == 3


def test_deepseek_replays_thinking_on_every_tool_turn():
    cfg = ProviderConfig(name="d", kind="anthropic", base_url="https://api.deepseek.com/anthropic")
    provider = AnthropicProvider(cfg, "k")
    history = (
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=(ToolCall(id="t1", name="ls", arguments="{}"),)),
        Message(role="tool", tool_call_id="t1", content="x"),
        Message(role="assistant", content="plain, no reasoning"),
    )
    _, messages = provider.encode_messages(history)
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "tool_use", "id": "t1", "name": "ls", "input": {}},
    ]
    assert messages[3]["content"] == [{"type": "text", "text": "plain, no reasoning"}]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("", {}),
        ("{}", {}),
        ('{"b": 1, "a": [1, 2]}', {"b": 1, "a": [1, 2]}),
        ("[1, 2]", {"_raw": "[1, 2]"}),
        ('{"x": NaN}', {"_raw": '{"x": NaN}'}),
        ('{"x": 1e999}', {"_raw": '{"x": 1e999}'}),
        ("not json", {"_raw": "not json"}),
    ],
)
def test_tool_input_parsing(arguments, expected):
    assert tool_input(arguments) == expected
    assert list(tool_input(arguments)) == list(expected)  # key order kept


def test_prepare_is_byte_deterministic():
    cfg = ProviderConfig(name="a", kind="anthropic", base_url="https://api.anthropic.com")
    req = request(messages=_tool_history(sign_thinking("plan")), tools=TOOLS, effort="high")
    assert (
        AnthropicProvider(cfg, "k").prepare(req).body
        == AnthropicProvider(cfg, "k").prepare(req).body
    )


# --------------------------------------------------------------------------- fixture strictness


def _post(server: FixtureServer, body: dict, path: str = "/v1/messages") -> httpx.Response:
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    return httpx.post(server.base_url + path, json=body, headers=headers, timeout=60)


def _error_message(response: httpx.Response) -> str:
    payload = response.json()
    assert payload["type"] == "error" and payload["request_id"].startswith("req_")
    return payload["error"]["message"]


GOOD_TOOL_TURN = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {}}],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
    },
]


def test_fixture_strictness_common_rules(ant, dsa):
    for server in (ant, dsa):
        model = "claude-test" if server is ant else "deepseek-flash"
        r = _post(server, {"model": model, "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 400 and _error_message(r) == "max_tokens: Field required"
        bad = [
            *GOOD_TOOL_TURN[:2],
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
                    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"},
                ],
            },
        ]
        r = _post(
            server,
            {"model": model, "max_tokens": 10, "messages": bad, "thinking": {"type": "disabled"}},
        )
        assert r.status_code == 400 and "unexpected `tool_use_id`" in _error_message(r)
        orphan = [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
            }
        ]
        r = _post(server, {"model": model, "max_tokens": 10, "messages": orphan})
        assert r.status_code == 400 and "unexpected `tool_use_id`" in _error_message(r)
        unanswered = [*GOOD_TOOL_TURN[:2], {"role": "user", "content": "never mind"}]
        r = _post(
            server,
            {
                "model": model,
                "max_tokens": 10,
                "messages": unanswered,
                "thinking": {"type": "disabled"},
            },
        )
        assert r.status_code == 400 and "without `tool_result`" in _error_message(r)
    assert ant.requests and all(r.status == 400 for r in ant.requests)
    assert ant.pending == 0


def test_fixture_rejects_system_role_in_messages(ant, dsa):
    messages = [{"role": "user", "content": "a"}, {"role": "system", "content": "s"}]
    r = _post(ant, {"model": "claude-test", "max_tokens": 10, "messages": messages})
    assert r.status_code == 400 and 'Unexpected role "system"' in _error_message(r)
    r = _post(
        dsa,
        {"model": "deepseek-flash", "max_tokens": 10, "messages": messages},
        "/anthropic/v1/messages",
    )
    assert r.status_code == 400
    assert (
        "messages[1].role: unknown variant `system`, expected `user` or `assistant`"
        in _error_message(r)
    )


def test_fixture_deepseek_requires_thinking_of_tool_turns(dsa):
    body = {"model": "deepseek-flash", "max_tokens": 10, "messages": GOOD_TOOL_TURN}
    r = _post(dsa, body)  # thinking is on by default
    assert r.status_code == 400 and _error_message(r) == MSG_THINKING_REQUIRED
    dsa.enqueue(Reply(content="fine"))
    r = _post(dsa, {**body, "thinking": {"type": "disabled"}})
    assert r.status_code == 200
    turn = json.loads(json.dumps(GOOD_TOOL_TURN))
    turn[1]["content"].insert(0, {"type": "thinking", "thinking": "t", "signature": "msg_x"})
    dsa.enqueue(Reply(content="fine"))
    assert _post(dsa, {**body, "messages": turn}).status_code == 200


def test_fixture_anthropic_verifies_signatures_and_thinking_first(ant):
    base = {
        "model": "claude-test",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    r = _post(ant, {**base, "messages": GOOD_TOOL_TURN})
    assert r.status_code == 400 and "must start with a thinking block" in _error_message(r)
    turn = json.loads(json.dumps(GOOD_TOOL_TURN))
    turn[1]["content"].insert(
        0, {"type": "thinking", "thinking": "t", "signature": sign_thinking("t")}
    )
    ant.enqueue(Reply(content="fine"))
    assert _post(ant, {**base, "messages": turn}).status_code == 200
    turn[1]["content"][0]["thinking"] = "t, edited"
    r = _post(ant, {**base, "messages": turn})
    assert r.status_code == 400 and "Invalid `signature`" in _error_message(r)
    r = _post(
        ant, {**base, "thinking": {"type": "enabled", "budget_tokens": 5000}, "messages": turn}
    )
    assert r.status_code == 400 and "budget_tokens" in _error_message(r)


# --------------------------------------------------------------------------- the real Agent


def anthropic_config(
    home: Path, base_url: str, *, model: str, protocol: str = "", effort: str = "high"
) -> None:
    protocol_line = f'reasoning_protocol = "{protocol}"\n' if protocol else ""
    (home / "config.toml").write_text(
        f"""
[[providers]]
name = "ant"
kind = "anthropic"
base_url = "{base_url}"
models = ["{model}"]
api_key_env = "{TEST_KEY_ENV}"
context_window = 200000
{protocol_line}
[agent]
effort = "{effort}"
retry_base_delay = 0.01
retry_max_delay = 0.05

[sandbox]
bash = "off"
""",
        encoding="utf-8",
    )


@pytest.fixture
def agent_ant(home, monkeypatch):
    with FixtureServer(AnthropicDialect("anthropic"), api_key=TEST_KEY, seed=3) as srv:
        anthropic_config(home, srv.base_url, model="claude-test")
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        yield srv


@pytest.fixture
def agent_dsa(home, monkeypatch):
    with FixtureServer(AnthropicDialect("deepseek"), api_key=TEST_KEY, seed=4) as srv:
        anthropic_config(
            home, srv.base_url + "/anthropic", model="deepseek-flash", protocol="deepseek"
        )
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        yield srv


@pytest.mark.parametrize("flavour", ["anthropic", "deepseek"])
async def test_agent_tool_loop_replays_signed_thinking(flavour, workspace, request):
    server: FixtureServer = request.getfixturevalue(
        "agent_ant" if flavour == "anthropic" else "agent_dsa"
    )
    (workspace / "notes.txt").write_text("hello from the file\n")
    args = '{"path":  "notes.txt"}'
    server.enqueue(
        Reply(
            reasoning="I should read it.",
            content="Reading.",
            tool_calls=[ToolCallSpec("read_file", args)],
        ),
        Reply(reasoning="Got it.", content="It says hello."),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "what is in notes.txt?")
    assert isinstance(events[-1], ev.TurnFinished), events[-1]
    assert events[-1].text == "It says hello."
    assert [r.status for r in server.requests] == [
        200,
        200,
    ]  # the strict server accepted the replay
    first, second = bodies(server)
    assert first["tools"] and all(
        set(t) == {"name", "description", "input_schema"} for t in first["tools"]
    )
    assert all(m["role"] in ("user", "assistant") for m in second["messages"])
    assistant = second["messages"][-2]
    thinking = assistant["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "I should read it."
    if flavour == "anthropic":
        assert thinking["signature"] == sign_thinking("I should read it.")
    else:
        assert thinking["signature"].startswith("msg_")
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use"]
    assert assistant["content"][2]["input"] == {"path": "notes.txt"}
    results = second["messages"][-1]["content"]
    assert results[0]["type"] == "tool_result" and "hello from the file" in results[0]["content"]
    assert results[0]["tool_use_id"] == assistant["content"][2]["id"]
    # The signature and the exact argument string are kept in the session.
    stored = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert stored[0]["meta"]["reasoning_signature"] == thinking["signature"]
    assert stored[0]["tool_calls"][0]["arguments"] == args
    # The second request reused the first exchange from the cache.
    usage = [e for e in events if isinstance(e, ev.UsageReported)]
    assert len(usage) == 2 and usage[1].usage.cache_hit_tokens > 0
    assert usage[1].usage.prompt_tokens == count_tokens(render_prompt(second))


async def test_continued_session_replays_the_stored_signature(workspace, agent_ant):
    (workspace / "a.txt").write_text("alpha\n")
    agent_ant.enqueue(
        Reply(reasoning="read a", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(reasoning="done", content="alpha it is"),
    )
    async with runtime(workspace) as rt:
        await run_turn(rt, "read a.txt")
    agent_ant.enqueue(Reply(content="still alpha"))
    async with runtime(workspace, continue_last=True) as rt:
        events = await run_turn(rt, "and again?")
    assert events[-1].text == "still alpha"
    assert agent_ant.requests[-1].status == 200
    third = bodies(agent_ant)[-1]["messages"]
    signed = [
        b
        for m in third
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "thinking"
    ]
    assert [b["signature"] for b in signed] == [sign_thinking("read a"), sign_thinking("done")]
    # Byte level: the earlier turns serialise exactly as they were sent before.
    second = bodies(agent_ant)[1]["messages"]
    enc = lambda ms: json.dumps(ms, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    assert enc(third[: len(second)]) == enc(second)


async def test_retry_replays_byte_identical_bodies(workspace, agent_ant):
    agent_ant.enqueue(
        HttpError(529, "Overloaded"),
        Reply(content="partial", error_event={"type": "overloaded_error", "message": "Overloaded"}),
        Reply(content="x" * 50, chunk_size=5, drop_after=3),
        Reply(content="finally"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "hello")
    assert events[-1].text == "finally"
    assert len([e for e in events if isinstance(e, ev.Retrying)]) == 3
    sent = [r.body for r in agent_ant.requests]
    assert len(sent) == 4 and len(set(sent)) == 1


async def test_non_retryable_error_fails_the_turn(workspace, agent_ant):
    agent_ant.enqueue(HttpError(403, "Your credit balance is too low", type="permission_error"))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "hello")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.status == 403
    assert "credit balance" in failed.error and len(agent_ant.requests) == 1


def test_reasonix_run_end_to_end(workspace, agent_dsa):
    (workspace / "a.txt").write_text("alpha\n")
    agent_dsa.enqueue(
        Reply(
            reasoning="need the file", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]
        ),
        Reply(reasoning="have it", content="it says alpha"),
    )
    env = dict(os.environ)
    env[TEST_KEY_ENV] = TEST_KEY
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", "run", "read a.txt", "--output-format", "json"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["subtype"] == "success" and result["result"] == "it says alpha"
    assert [r.status for r in agent_dsa.requests] == [200, 200]
    assert all(r.path == "/anthropic/v1/messages" for r in agent_dsa.requests)
    second = json.loads(agent_dsa.requests[1].body)
    assert second["messages"][-2]["content"][0]["thinking"] == "need the file"
    expected = sum(count_tokens(render_prompt(json.loads(r.body))) for r in agent_dsa.requests)
    usage = result["usage"]  # Claude Code's convention: input_tokens is the uncached part
    assert usage["input_tokens"] + usage["cache_read_input_tokens"] == expected
