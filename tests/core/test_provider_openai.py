"""The openai provider kind against the fixture server, both flavours."""

from __future__ import annotations

import json

import httpx
import pytest

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.errors import ProviderError, StreamInterrupted
from reasonix_core.messages import Message, ToolCall
from reasonix_core.provider.base import (
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
    ToolSchema,
)
from reasonix_core.provider.http import parse_retry_after
from reasonix_core.provider.openai import OpenAIProvider
from reasonix_testkit import ChatDialect, FixtureServer, HttpError, Reply, Stall, ToolCallSpec
from tests.core.provider_helpers import fixture_provider

KEY = "sk-provider-test"
TOOLS = (
    ToolSchema(
        name="echo",
        description="Echo text back.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    ),
)


def provider_for(server: FixtureServer, protocol: str = "deepseek", **kw) -> OpenAIProvider:
    return fixture_provider(server, KEY, protocol, **kw)


def request(**kw) -> Request:
    base = dict(model="deepseek-flash", messages=(Message(role="user", content="hi"),))
    base.update(kw)
    return Request(**base)


async def collect(provider: OpenAIProvider, req: Request) -> list:
    out = []
    try:
        async for chunk in provider.stream(provider.prepare(req)):
            out.append(chunk)
    finally:
        await provider.aclose()
    return out


@pytest.fixture
def ds():
    with FixtureServer(ChatDialect("deepseek"), api_key=KEY) as srv:
        yield srv


@pytest.fixture
def oa():
    with FixtureServer(ChatDialect("openai"), api_key=KEY) as srv:
        yield srv


async def test_deepseek_stream_with_keepalives_reasoning_and_usage(ds):
    ds.enqueue(Reply(reasoning="thinking hard", content="answer text", keepalives=3))
    chunks = await collect(provider_for(ds), request())
    reasoning = "".join(c.text for c in chunks if isinstance(c, ReasoningChunk))
    text = "".join(c.text for c in chunks if isinstance(c, TextChunk))
    assert reasoning == "thinking hard" and text == "answer text"
    end = chunks[-1]
    assert isinstance(end, StreamEnd) and end.finish_reason == "stop"
    assert end.usage is not None
    u = end.usage
    assert u.prompt_tokens == u.cache_hit_tokens + u.cache_miss_tokens
    assert u.reasoning_tokens > 0 and u.completion_tokens >= u.reasoning_tokens
    body = json.loads(ds.requests[0].body)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_openai_usage_on_separate_chunk_and_cached_tokens(oa):
    oa.enqueue(Reply(content="hello"))
    cfg_protocol = "openai"
    chunks = await collect(provider_for(oa, cfg_protocol), request(model="gpt-test"))
    end = chunks[-1]
    assert isinstance(end, StreamEnd) and end.usage is not None
    assert end.usage.prompt_tokens == end.usage.cache_hit_tokens + end.usage.cache_miss_tokens


@pytest.mark.parametrize("interleave", [False, True])
async def test_tool_call_fragments_accumulate_by_index(ds, interleave):
    ds.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("echo", '{"text": "first call"}'),
                ToolCallSpec("echo", '{"text": "second"}'),
            ],
            arg_chunk=3,
            interleave_tool_calls=interleave,
        )
    )
    chunks = await collect(provider_for(ds), request(tools=TOOLS))
    assert any(isinstance(c, ToolCallFragment) for c in chunks)
    end = chunks[-1]
    assert end.finish_reason == "tool_calls"
    assert [c.arguments for c in end.tool_calls] == ['{"text": "first call"}', '{"text": "second"}']
    assert all(c.id.startswith("call_0") for c in end.tool_calls)


async def test_replays_reasoning_content_on_every_assistant_turn_with_tools(ds):
    history = (
        Message(role="user", content="a"),
        Message(role="assistant", content="plain answer"),  # no reasoning stored
        Message(role="user", content="b"),
        Message(
            role="assistant",
            reasoning_content="why",
            tool_calls=(ToolCall(id="call_00_x", name="echo", arguments='{"text":"q"}'),),
        ),
        Message(role="tool", tool_call_id="call_00_x", content="q"),
    )
    ds.enqueue(Reply(content="done"))
    chunks = await collect(provider_for(ds), request(messages=history, tools=TOOLS))
    assert chunks[-1].finish_reason == "stop"  # the strict server accepted it
    sent = json.loads(ds.requests[0].body)["messages"]
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"] == ["", "why"]


async def test_effort_mapping(ds):
    p = provider_for(ds)
    assert json.loads(p.prepare(request(effort="disabled")).body)["thinking"] == {
        "type": "disabled"
    }
    body = json.loads(p.prepare(request(effort="max")).body)
    assert body["thinking"] == {"type": "enabled"} and body["reasoning_effort"] == "max"
    body = json.loads(p.prepare(request(effort="medium")).body)
    assert body["reasoning_effort"] == "high"
    assert "thinking" not in json.loads(p.prepare(request(effort="auto")).body)
    assert json.loads(p.prepare(request(max_output_tokens=1234)).body)["max_tokens"] == 1234


async def test_prepare_is_deterministic():
    cfg = ProviderConfig(name="x", base_url="http://127.0.0.1:9", reasoning_protocol="deepseek")
    p = OpenAIProvider(cfg, "k")
    req = request(tools=TOOLS)
    assert p.prepare(req).body == p.prepare(req).body


async def test_dropped_stream_raises_interrupted(ds):
    ds.enqueue(Reply(content="x" * 200, chunk_size=5, drop_after=3))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ds), request())


async def test_in_band_error_event(oa):
    oa.enqueue(
        Reply(
            content="partial",
            error_event={"message": "upstream overloaded", "type": "server_error"},
        )
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(oa, "openai"), request(model="gpt-test"))
    assert "upstream overloaded" in str(info.value) and info.value.retryable


async def test_garbage_line_is_an_interrupted_stream(ds):
    ds.enqueue(Reply(content="ok", garbage_line="upstream error: read ECONNRESET"))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ds), request())


async def test_idle_watchdog_ignores_keepalives(ds):
    ds.enqueue(Stall(5, keepalive_every=0.05))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds, stream_idle_timeout=0.4), request())
    assert info.value.kind == "idle_timeout" and info.value.retryable


async def test_finish_chunk_without_delta(ds):
    ds.enqueue(Reply(content="fine", omit_delta_on_finish=True))
    chunks = await collect(provider_for(ds), request())
    assert chunks[-1].finish_reason == "stop"


async def test_http_errors_carry_status_message_and_retry_after(ds):
    ds.enqueue(HttpError(429, "Rate Limit Reached", type="rate_limit_error", retry_after=3))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds), request())
    assert info.value.status == 429 and info.value.retryable and info.value.retry_after == 3
    assert "Rate Limit Reached" in str(info.value)
    ds.enqueue(HttpError(400, "Model Not Exist"))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds), request())
    assert info.value.status == 400 and not info.value.retryable


async def test_connection_refused_is_retryable():
    cfg = ProviderConfig(name="x", base_url="http://127.0.0.1:1", reasoning_protocol="deepseek")
    with pytest.raises(ProviderError) as info:
        await collect(OpenAIProvider(cfg, "k"), request())
    assert info.value.retryable and info.value.kind == "connection"


def test_parse_retry_after_forms():
    assert parse_retry_after(httpx.Headers({"retry-after": "7"})) == 7.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    assert parse_retry_after(httpx.Headers({})) is None
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert parse_retry_after(httpx.Headers({"retry-after": date})) == 0.0
