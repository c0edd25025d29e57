"""The ``responses`` provider kind against the Responses fixture server, both flavours."""

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
from reasonix_core.provider.responses import ResponsesProvider, parse_usage
from reasonix_testkit import (
    FixtureServer,
    HttpError,
    Reply,
    ResponsesDialect,
    Stall,
    ToolCallSpec,
    count_tokens,
)
from reasonix_testkit.dialects.responses import render_responses_prompt
from tests.conftest import TEST_KEY, TEST_KEY_ENV, write_config
from tests.core.agent_helpers import run_turn, runtime, session_messages

KEY = "sk-responses-test"
TOOLS = (
    ToolSchema(
        name="echo",
        description="Echo text back.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    ),
)
NASTY_ARGS = '{ "text" :"quote \\" back\\\\slash ü 😀\\n",  "n": [1, 2] }'


def provider_for(server: FixtureServer, protocol: str = "deepseek", **kw) -> ResponsesProvider:
    cfg = ProviderConfig(
        name="fx",
        kind="responses",
        base_url=server.base_url,
        api_key_env="X",
        reasoning_protocol=protocol,
        **kw.pop("config", {}),
    )
    return ResponsesProvider(cfg, KEY, **kw)


def request(**kw) -> Request:
    base = dict(
        model="deepseek-flash",
        messages=(Message(role="system", content="be brief"), Message(role="user", content="hi")),
    )
    base.update(kw)
    return Request(**base)


async def collect(provider: ResponsesProvider, req: Request) -> list:
    out = []
    try:
        async for chunk in provider.stream(provider.prepare(req)):
            out.append(chunk)
    finally:
        await provider.aclose()
    return out


def text_of(chunks: list, cls: type) -> str:
    return "".join(c.text for c in chunks if isinstance(c, cls))


def sent(server: FixtureServer, index: int = -1) -> dict:
    return json.loads(server.requests[index].body)


@pytest.fixture
def ds():
    with FixtureServer(ResponsesDialect("deepseek"), api_key=KEY) as srv:
        yield srv


@pytest.fixture
def oa():
    with FixtureServer(ResponsesDialect("openai"), api_key=KEY) as srv:
        yield srv


TOOL_HISTORY = (
    Message(role="system", content="sys"),
    Message(role="user", content="a"),
    Message(role="assistant", content="plain answer"),  # no reasoning stored
    Message(role="user", content="b"),
    Message(
        role="assistant",
        content="let me check",
        reasoning_content="why",
        tool_calls=(
            ToolCall(id="call_00_x", name="echo", arguments=NASTY_ARGS),
            ToolCall(id="call_01_y", name="echo", arguments="{}"),
        ),
    ),
    Message(role="tool", tool_call_id="call_00_x", content="out x"),
    Message(role="tool", tool_call_id="call_01_y", content="out y"),
)


# --------------------------------------------------------------------------- registry and body


def test_kind_is_registered_and_url_is_derived():
    assert "responses" in known_kinds()
    cfg = ProviderConfig(name="p", kind="responses", base_url="https://api.deepseek.com/")
    provider = create_provider(cfg, "k")
    assert isinstance(provider, ResponsesProvider)
    assert provider.url == "https://api.deepseek.com/responses"
    assert provider.deepseek  # by host
    assert provider.max_output_tokens("deepseek-flash") == 393216
    cfg = ProviderConfig(
        name="p", kind="responses", base_url="https://x", request_url="https://gw/v9/resp"
    )
    other = create_provider(cfg, "k")
    assert other.url == "https://gw/v9/resp" and other.max_output_tokens("m") is None


def test_body_layout_key_order_and_history_items():
    cfg = ProviderConfig(name="p", base_url="http://h", reasoning_protocol="deepseek")
    p = ResponsesProvider(cfg, "k")
    req = request(messages=TOOL_HISTORY, tools=TOOLS, effort="high", max_output_tokens=4096)
    prepared = p.prepare(req)
    assert prepared.body == p.prepare(req).body  # frozen bytes, deterministic
    body = json.loads(prepared.body)
    compact = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    assert prepared.body == compact
    assert list(body) == [
        "model",
        "instructions",
        "input",
        "tools",
        "reasoning",
        "max_output_tokens",
        "stream",
        "store",
    ]
    assert body["instructions"] == "sys"
    assert body["reasoning"] == {"effort": "high"}
    assert body["max_output_tokens"] == 4096 and body["stream"] is True and body["store"] is False
    assert body["tools"] == [
        {
            "type": "function",
            "name": "echo",
            "description": "Echo text back.",
            "parameters": TOOLS[0].parameters,
        }
    ]
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
        {"type": "reasoning", "content": [{"type": "reasoning_text", "text": ""}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "plain answer"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "b"}]},
        {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "why"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "let me check"}],
        },
        {"type": "function_call", "call_id": "call_00_x", "name": "echo", "arguments": NASTY_ARGS},
        {"type": "function_call", "call_id": "call_01_y", "name": "echo", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_00_x", "output": "out x"},
        {"type": "function_call_output", "call_id": "call_01_y", "output": "out y"},
    ]
    # The exact argument string is in the frozen bytes.
    assert json.dumps(NASTY_ARGS, ensure_ascii=False).encode() in prepared.body


def test_reasoning_replay_rules():
    ds_cfg = ProviderConfig(name="p", base_url="http://h", reasoning_protocol="deepseek")
    # Thinking off or no tools: DeepSeek ignores replayed reasoning, none is sent.
    for kw in ({"effort": "disabled", "tools": TOOLS}, {"effort": "high"}):
        body = json.loads(
            ResponsesProvider(ds_cfg, "k").prepare(request(messages=TOOL_HISTORY, **kw)).body
        )
        assert not [i for i in body["input"] if i["type"] == "reasoning"]
    # strip_chain_of_thought keeps the items (presence check) with empty text.
    strip = ProviderConfig(
        name="p", base_url="http://h", reasoning_protocol="deepseek", strip_chain_of_thought=True
    )
    body = json.loads(
        ResponsesProvider(strip, "k").prepare(request(messages=TOOL_HISTORY, tools=TOOLS)).body
    )
    assert [i["content"][0]["text"] for i in body["input"] if i["type"] == "reasoning"] == ["", ""]
    # OpenAI hosts: no reasoning items (nothing replayable is stored); strict off.
    oa_cfg = ProviderConfig(name="p", base_url="https://api.openai.com/v1")
    body = json.loads(
        ResponsesProvider(oa_cfg, "k")
        .prepare(request(model="gpt-test", messages=TOOL_HISTORY, tools=TOOLS, effort="high"))
        .body
    )
    assert not [i for i in body["input"] if i["type"] == "reasoning"]
    assert body["tools"][0]["strict"] is False
    assert [i["type"] for i in body["input"]].count("function_call") == 2


@pytest.mark.parametrize(
    ("protocol", "effort", "expected"),
    [
        ("deepseek", "auto", None),
        ("deepseek", "disabled", {"effort": "none"}),
        ("deepseek", "none", {"effort": "none"}),
        ("deepseek", "low", {"effort": "low"}),
        ("deepseek", "medium", {"effort": "high"}),
        ("deepseek", "max", {"effort": "max"}),
        ("openai", "auto", None),
        ("openai", "disabled", None),
        ("openai", "low", {"effort": "low"}),
        ("openai", "medium", {"effort": "medium"}),
        ("openai", "max", {"effort": "high"}),
        ("none", "high", None),
    ],
)
def test_effort_mapping(protocol, effort, expected):
    cfg = ProviderConfig(name="p", base_url="http://h", reasoning_protocol=protocol)
    body = json.loads(ResponsesProvider(cfg, "k").prepare(request(effort=effort)).body)
    assert body.get("reasoning") == expected


# --------------------------------------------------------------------------- streaming


async def test_fixture_stream_speaks_section_7(ds):
    """Raw bytes: event/data pairs, increasing sequence numbers, no [DONE]."""
    ds.enqueue(
        Reply(
            reasoning="Need the file.",
            tool_calls=[ToolCallSpec("echo", '{"text": "x"}')],
            keepalives=1,
        )
    )
    p = provider_for(ds)
    prepared = p.prepare(request(tools=TOOLS))
    async with httpx.AsyncClient() as client:
        resp = await client.post(
            prepared.url, content=prepared.body, headers=list(prepared.headers)
        )
    assert resp.status_code == 200 and resp.headers["content-type"] == "text/event-stream"
    raw = resp.text
    assert "[DONE]" not in raw and raw.startswith(": keep-alive\n\n")
    blocks = [b for b in raw.split("\n\n") if b and not b.startswith(":")]
    events = []
    for block in blocks:
        name_line, data_line = block.split("\n")
        assert name_line.startswith("event: ") and data_line.startswith("data: ")
        payload = json.loads(data_line[6:])
        assert payload["type"] == name_line[7:]
        events.append(payload)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    names = [e["type"] for e in events]
    assert names[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert names[-1] == "response.completed"
    assert (
        "response.reasoning_text.delta" in names
        and "response.function_call_arguments.done" in names
    )
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    assert [i["type"] for i in added] == ["reasoning", "function_call"]
    assert added[0]["id"].startswith("rs_") and added[1]["id"].startswith("fc_")
    assert added[1]["call_id"].startswith("call_00_")
    final = events[-1]["response"]
    assert final["status"] == "completed" and final["store"] is False
    assert final["output"][0]["content"] == [{"type": "reasoning_text", "text": "Need the file."}]
    usage = final["usage"]
    assert usage["input_tokens"] == count_tokens(render_responses_prompt(json.loads(prepared.body)))
    assert usage["input_tokens_details"] == {"cached_tokens": 0}
    assert usage["output_tokens_details"]["reasoning_tokens"] == count_tokens("Need the file.")


async def test_text_reasoning_and_usage(ds):
    ds.enqueue(Reply(reasoning="thinking hard", content="answer text", chunk_size=3))
    chunks = await collect(provider_for(ds), request())
    assert text_of(chunks, ReasoningChunk) == "thinking hard"
    assert text_of(chunks, TextChunk) == "answer text"
    end = chunks[-1]
    assert isinstance(end, StreamEnd) and end.finish_reason == "stop" and end.tool_calls == ()
    assert end.model == "deepseek-flash"
    u = end.usage
    assert u is not None and u.prompt_tokens == u.cache_hit_tokens + u.cache_miss_tokens
    assert u.reasoning_tokens == count_tokens("thinking hard")
    assert u.completion_tokens >= u.reasoning_tokens
    assert ds.requests[0].path == "/responses"


async def test_openai_flavour_reasoning_summaries(oa):
    oa.enqueue(Reply(reasoning="First paragraph.\n\nSecond one.", content="done", chunk_size=4))
    chunks = await collect(provider_for(oa, "openai"), request(model="gpt-test", effort="high"))
    assert text_of(chunks, ReasoningChunk) == "First paragraph.\n\nSecond one."
    assert text_of(chunks, TextChunk) == "done"
    assert sent(oa)["reasoning"] == {"effort": "high"}


async def test_openai_flavour_refuses_reasoning_items_it_cannot_resolve(oa):
    body = {
        "model": "gpt-test",
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "x"}]},
        ],
        "stream": True,
    }
    async with httpx.AsyncClient() as client:
        resp = await client.post(
            f"{oa.base_url}/v1/responses", json=body, headers={"Authorization": f"Bearer {KEY}"}
        )
    assert resp.status_code == 400 and "input[1].id" in resp.json()["error"]["message"]


@pytest.mark.parametrize("arg_chunk", [1, 3, 0])
async def test_function_call_fragments_and_exact_arguments(ds, arg_chunk):
    ds.enqueue(
        Reply(
            reasoning="two calls",
            content="calling",
            tool_calls=[
                ToolCallSpec("echo", NASTY_ARGS),
                ToolCallSpec("echo", '{"text":"2"}', id="call_me"),
            ],
            arg_chunk=arg_chunk,
        )
    )
    chunks = await collect(provider_for(ds), request(tools=TOOLS))
    frags = [c for c in chunks if isinstance(c, ToolCallFragment)]
    heads = [f for f in frags if f.id]
    assert [(f.index, f.name) for f in heads] == [(0, "echo"), (1, "echo")]
    assert heads[1].id == "call_me"
    for index, args in ((0, NASTY_ARGS), (1, '{"text":"2"}')):
        assert "".join(f.arguments for f in frags if f.index == index) == args
    end = chunks[-1]
    assert end.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in end.tool_calls] == [
        ("echo", NASTY_ARGS),
        ("echo", '{"text":"2"}'),
    ]
    assert end.tool_calls[0].id.startswith("call_00_") and end.tool_calls[1].id == "call_me"
    assert text_of(chunks, TextChunk) == "calling"


def test_usage_conversion():
    u = parse_usage(
        {
            "input_tokens": 1300,
            "input_tokens_details": {"cached_tokens": 1152},
            "output_tokens": 40,
            "output_tokens_details": {"reasoning_tokens": 12},
            "total_tokens": 1340,
        }
    )
    assert (u.prompt_tokens, u.cache_hit_tokens, u.cache_miss_tokens) == (1300, 1152, 148)
    assert (u.completion_tokens, u.reasoning_tokens, u.total_tokens) == (40, 12, 1340)
    u = parse_usage({"input_tokens": 10, "output_tokens": 2})  # details absent
    assert (u.cache_hit_tokens, u.cache_miss_tokens, u.reasoning_tokens) == (0, 10, 0)
    u = parse_usage({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 99}})
    assert u.cache_hit_tokens + u.cache_miss_tokens == u.prompt_tokens == 10
    assert parse_usage(None) is None


async def test_cached_tokens_reported_when_history_is_replayed(ds):
    p = provider_for(ds)
    ds.enqueue(Reply(reasoning="r", tool_calls=[ToolCallSpec("echo", '{"text":"a"}')]))
    first = await collect(p, request(tools=TOOLS))
    call = first[-1].tool_calls[0]
    history = (
        *request().messages,
        Message(role="assistant", content="", reasoning_content="r", tool_calls=(call,)),
        Message(role="tool", tool_call_id=call.id, content="a"),
    )
    ds.enqueue(Reply(content="fine"))
    second = await collect(p, request(messages=history, tools=TOOLS))
    usage = second[-1].usage
    # The whole first request plus its output is a persisted unit: only the tool result misses.
    prompt_one = render_responses_prompt(sent(ds, 0)).encode()
    assert render_responses_prompt(sent(ds, 1)).encode().startswith(prompt_one)
    assert usage.cache_hit_tokens > count_tokens(prompt_one.decode())
    assert usage.cache_miss_tokens <= count_tokens("<|tool|>" + call.id + "<|sep|>a") + 1


# --------------------------------------------------------------------------- terminal events and errors


@pytest.mark.parametrize(
    ("finish", "expected", "calls_kept"),
    [("length", "length", True), ("content_filter", "content_filter", False)],
)
async def test_incomplete_responses(ds, finish, expected, calls_kept):
    ds.enqueue(Reply(content="cut", tool_calls=[ToolCallSpec("echo", "{}")], finish_reason=finish))
    chunks = await collect(provider_for(ds), request(tools=TOOLS))
    end = chunks[-1]
    assert end.finish_reason == expected and end.usage is not None
    assert bool(end.tool_calls) is calls_kept


async def test_transient_incomplete_reason_is_retryable(ds):
    ds.enqueue(Reply(content="x", finish_reason="insufficient_system_resource"))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds), request())
    assert info.value.retryable and info.value.kind == "insufficient_system_resource"


@pytest.mark.parametrize(
    ("finish", "retryable"),
    [("failed", True), ("failed:rate_limit_exceeded", True), ("failed:invalid_prompt", False)],
)
async def test_response_failed(ds, finish, retryable):
    ds.enqueue(Reply(content="partial", finish_reason=finish))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds), request())
    assert info.value.retryable is retryable and info.value.kind == "response_failed"
    assert "server had an error" in str(info.value)


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        ({"code": "server_error", "message": "upstream overloaded"}, True),
        ({"type": "rate_limit_exceeded", "message": "slow down"}, True),
        ({"code": "invalid_request_error", "message": "bad input"}, False),
    ],
)
async def test_error_event(oa, error, retryable):
    oa.enqueue(Reply(content="partial", error_event=error))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(oa, "openai"), request(model="gpt-test"))
    assert error["message"] in str(info.value) and info.value.retryable is retryable
    assert not isinstance(info.value, StreamInterrupted)


async def test_dropped_stream_raises_interrupted(ds):
    ds.enqueue(Reply(content="x" * 200, chunk_size=5, drop_after=6))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ds), request())


async def test_clean_end_without_terminal_event_is_interrupted(ds):
    ds.enqueue(Stall(0.05))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ds), request())
    ds.enqueue(Reply(content="ok", garbage_line="upstream error: read ECONNRESET"))
    with pytest.raises(StreamInterrupted):
        await collect(provider_for(ds), request())


async def test_done_marker_is_tolerated(ds):
    ds.dialect.done_marker = True
    ds.enqueue(Reply(content="fine"))
    chunks = await collect(provider_for(ds), request())
    assert chunks[-1].finish_reason == "stop"


async def test_done_before_terminal_event_is_interrupted():
    body = (
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
        '"sequence_number":0,"item_id":"m","output_index":0,"content_index":0,"delta":"hi"}\n\n'
        "data: [DONE]\n\n"
    )
    transport = httpx.MockTransport(lambda req: httpx.Response(200, text=body))
    cfg = ProviderConfig(name="p", base_url="http://h", reasoning_protocol="deepseek")
    with pytest.raises(StreamInterrupted):
        await collect(ResponsesProvider(cfg, "k", transport=transport), request())


async def test_whole_call_in_done_events_only():
    """Some proxies skip the deltas: `.done` events and the final output still count."""
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_9",
        "name": "echo",
        "arguments": '{"text":"z"}',
        "status": "completed",
    }
    lines = [
        {
            "type": "response.output_text.done",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "text": "said",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": item},
        {
            "type": "response.completed",
            "response": {"status": "completed", "model": "m1", "output": [item], "usage": None},
        },
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in lines)
    transport = httpx.MockTransport(lambda req: httpx.Response(200, text=body))
    cfg = ProviderConfig(name="p", base_url="http://h", reasoning_protocol="deepseek")
    chunks = await collect(ResponsesProvider(cfg, "k", transport=transport), request())
    assert text_of(chunks, TextChunk) == "said"
    end = chunks[-1]
    assert end.tool_calls == (ToolCall(id="call_9", name="echo", arguments='{"text":"z"}'),)
    assert end.finish_reason == "tool_calls" and end.model == "m1"


async def test_idle_watchdog_ignores_keepalives(ds):
    ds.enqueue(Stall(5, keepalive_every=0.05))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds, stream_idle_timeout=0.4), request())
    assert info.value.kind == "idle_timeout" and info.value.retryable


async def test_http_errors_carry_status_message_and_retry_after(ds):
    ds.enqueue(HttpError(429, "Rate Limit Reached", type="rate_limit_error", retry_after=3))
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds), request())
    assert info.value.status == 429 and info.value.retryable and info.value.retry_after == 3
    assert "Rate Limit Reached" in str(info.value)
    with pytest.raises(ProviderError) as info:
        await collect(provider_for(ds), request(model="deepseek-nope"))
    assert info.value.status == 400 and not info.value.retryable
    assert "Model Not Exist" in str(info.value)
    cfg = ProviderConfig(
        name="fx", kind="responses", base_url=ds.base_url, reasoning_protocol="deepseek"
    )
    with pytest.raises(ProviderError) as info:
        await collect(ResponsesProvider(cfg, "sk-wrong"), request())
    assert info.value.status == 401 and not info.value.retryable


async def test_connection_refused_is_retryable():
    cfg = ProviderConfig(name="x", base_url="http://127.0.0.1:1", reasoning_protocol="deepseek")
    with pytest.raises(ProviderError) as info:
        await collect(ResponsesProvider(cfg, "k"), request())
    assert info.value.retryable and info.value.kind == "connection"


async def post_raw(server: FixtureServer, body: dict) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(
            f"{server.base_url}/responses", json=body, headers={"Authorization": f"Bearer {KEY}"}
        )


async def test_strict_fixture_rejections(ds):
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]}
    call = {"type": "function_call", "call_id": "c1", "name": "echo", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    reasoning = {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "r"}]}
    tools = [{"type": "function", "name": "echo", "description": "", "parameters": {}}]
    base = {"model": "deepseek-flash", "tools": tools, "stream": True, "store": False}
    # An output whose call never came.
    resp = await post_raw(ds, {**base, "input": [user, output]})
    assert resp.status_code == 400 and "No tool call found" in resp.text
    # A call without its output.
    resp = await post_raw(ds, {**base, "input": [user, reasoning, call]})
    assert resp.status_code == 400 and "No tool output found" in resp.text
    # Tools + thinking on: the tool turn must carry its reasoning item.
    resp = await post_raw(ds, {**base, "input": [user, call, output]})
    assert resp.status_code == 400 and "reasoning_content" in resp.text
    # ... not with thinking off, and not without tools.
    ds.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    resp = await post_raw(
        ds, {**base, "reasoning": {"effort": "none"}, "input": [user, call, output]}
    )
    assert resp.status_code == 200
    no_tools = {k: v for k, v in base.items() if k != "tools"}
    assert (await post_raw(ds, {**no_tools, "input": [user, call, output]})).status_code == 200
    assert (
        await post_raw(ds, {**base, "input": [user, reasoning, call, output]})
    ).status_code == 200
    # Type-level problems are DeepSeek's 422.
    resp = await post_raw(ds, {**base, "reasoning": {"effort": "extreme"}, "input": [user]})
    assert resp.status_code == 422
    resp = await post_raw(
        ds,
        {
            **base,
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "output_text", "text": "x"}],
                }
            ],
        },
    )
    assert resp.status_code == 422
    assert ds.pending == 0 and [r.status for r in ds.requests][-2:] == [422, 422]


# --------------------------------------------------------------------------- the real Agent


def responses_config(home: Path, base_url: str) -> None:
    path = write_config(home, base_url)
    text = path.read_text(encoding="utf-8")
    assert text.count('kind = "openai"') == 1
    path.write_text(text.replace('kind = "openai"', 'kind = "responses"'), encoding="utf-8")


@pytest.fixture
def rs(home, monkeypatch):
    with FixtureServer(ResponsesDialect("deepseek"), api_key=TEST_KEY) as srv:
        responses_config(home, srv.base_url)
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        yield srv


async def test_agent_two_step_tool_loop_against_strict_fixture(workspace, rs):
    (workspace / "notes.txt").write_text("hello from the file\n")
    raw_args = '{ "path" :"notes.txt"  }'
    rs.enqueue(
        Reply(
            reasoning="I should read it.",
            content="Reading.",
            tool_calls=[ToolCallSpec("read_file", raw_args)],
            arg_chunk=4,
        ),
        Reply(reasoning="Got it.", content="The file says hello."),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read notes.txt")
    assert [r.status for r in rs.requests] == [200, 200]
    assert all(r.path == "/responses" for r in rs.requests)
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "The file says hello."
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert len(finished) == 1 and "hello from the file" in finished[0].result
    first, second = (json.loads(r.body) for r in rs.requests)
    assert first["instructions"] and second["instructions"] == first["instructions"]
    # Append-only: the first request's input is a prefix of the second's.
    n = len(first["input"])
    assert second["input"][:n] == first["input"]
    turn = second["input"][n:]
    assert [i["type"] for i in turn] == [
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert turn[0]["content"] == [{"type": "reasoning_text", "text": "I should read it."}]
    assert turn[2]["arguments"] == raw_args and turn[2]["call_id"] == turn[3]["call_id"]
    assert "hello from the file" in turn[3]["output"]
    # The simulated cache hit everything up to the tool result.
    usages = [e.usage for e in events if isinstance(e, ev.UsageReported)]
    assert len(usages) == 2 and usages[0].cache_hit_tokens == 0
    assert usages[1].cache_hit_tokens >= count_tokens(render_responses_prompt(first))
    for u, body in zip(usages, (first, second), strict=True):
        assert u.prompt_tokens == count_tokens(render_responses_prompt(body))
        assert u.cache_hit_tokens + u.cache_miss_tokens == u.prompt_tokens
    assistant = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert assistant[0]["reasoning_content"] == "I should read it."


@pytest.mark.parametrize(
    "failure",
    [
        HttpError(503, "Server Overloaded", type="server_error"),
        Reply(content="partial answer that drops", chunk_size=4, drop_after=5),
        Reply(content="partial", finish_reason="failed"),
        Reply(content="partial", error_event={"code": "server_error", "message": "try again"}),
    ],
    ids=["http-503", "dropped", "response.failed", "error-event"],
)
async def test_retry_replays_byte_identical_bodies(workspace, rs, failure):
    rs.enqueue(failure, Reply(content="whole"))
    async with runtime(workspace, record_sleeps=[]) as rt:
        events = await run_turn(rt, "hi")
    assert len(rs.requests) == 2
    assert rs.requests[0].body == rs.requests[1].body
    assert "retrying" in [e.kind for e in events]
    assert events[-1].text == "whole"
    assistant = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == ["whole"]


# --------------------------------------------------------------------------- `reasonix run`


def test_reasonix_run_end_to_end(workspace, rs, tmp_path):
    (workspace / "a.txt").write_text("alpha\n")
    rs.enqueue(
        Reply(reasoning="let me read", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(reasoning="done", content="it says alpha"),
    )
    metrics_path = tmp_path / "m.json"
    env = dict(os.environ)
    env[TEST_KEY_ENV] = TEST_KEY
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reasonix_tui.cli",
            "run",
            "read a.txt",
            "--output-format",
            "json",
            "--metrics",
            str(metrics_path),
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["subtype"] == "success" and result["result"] == "it says alpha"
    assert [r.status for r in rs.requests] == [200, 200]
    bodies = [json.loads(r.body) for r in rs.requests]
    assert all(b["store"] is False and b["stream"] is True for b in bodies)
    metrics = json.loads(metrics_path.read_text())
    expected_prompt = sum(count_tokens(render_responses_prompt(b)) for b in bodies)
    usage = result["usage"]  # Claude Code's convention: input_tokens is the uncached part
    assert metrics["prompt_tokens"] == expected_prompt
    assert expected_prompt == usage["input_tokens"] + usage["cache_read_input_tokens"]
    assert metrics["cache_hit_tokens"] + metrics["cache_miss_tokens"] == metrics["prompt_tokens"]
    assert metrics["cache_hit_tokens"] > 0
    assert metrics["tool_calls_by_name"] == {"read_file": 1}
