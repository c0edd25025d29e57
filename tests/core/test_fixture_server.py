"""The loopback fixture server, exercised over real HTTP with httpx."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from reasonix_testkit import (
    AnthropicDialect,
    ChatDialect,
    Dialect,
    FixtureServer,
    HttpError,
    RecordedRequest,
    Reply,
    ResponsesDialect,
    Stall,
    ToolCallSpec,
    count_tokens,
)
from reasonix_testkit.dialects.chat import render_prompt

KEY = "sk-test"
AUTH = {"Authorization": f"Bearer {KEY}"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    with FixtureServer(ChatDialect("deepseek"), api_key=KEY) as srv:
        yield srv


@pytest.fixture
def openai_server() -> Iterator[FixtureServer]:
    with FixtureServer(ChatDialect("openai"), api_key=KEY) as srv:
        yield srv


def body(**extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "deepseek-flash",
        "stream": True,
        "messages": [
            {"role": "system", "content": "You are a careful assistant."},
            {"role": "user", "content": "What is 17 * 23?"},
        ],
    }
    out.update(extra)
    return out


def post(srv: FixtureServer, payload: Any, **kw: Any) -> httpx.Response:
    headers = kw.pop("headers", AUTH)
    return httpx.post(f"{srv.base_url}/chat/completions", json=payload, headers=headers, **kw)


def events(raw: str) -> list[Any]:
    """Parse an SSE body strictly: every event is `data: ...` followed by a blank line."""
    out: list[Any] = []
    assert raw.endswith("\n\n"), raw[-80:]
    for block in raw[:-2].split("\n\n"):
        if block.startswith(":"):
            continue
        assert block.startswith("data: "), block
        assert "\n" not in block
        payload = block[len("data: ") :]
        out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def error_of(response: httpx.Response) -> dict[str, Any]:
    envelope = response.json()
    assert set(envelope) == {"error"}
    assert set(envelope["error"]) == {"message", "type", "param", "code"}
    return envelope["error"]


def check_usage_invariants(usage: dict[str, Any]) -> None:
    assert (
        usage["prompt_tokens"]
        == usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"]
    )
    assert usage["prompt_tokens_details"]["cached_tokens"] == usage["prompt_cache_hit_tokens"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    details = usage.get("completion_tokens_details")
    if details is not None:
        assert details["reasoning_tokens"] <= usage["completion_tokens"]


# --------------------------------------------------------------------------- streaming


def test_deepseek_stream_framing_reasoning_then_content(server: FixtureServer) -> None:
    server.enqueue(
        Reply(reasoning="17*23 = 340 + 51 = 391.", content="17 × 23 = **391**.", chunk_size=7)
    )
    r = post(server, body(stream_options={"include_usage": True}))
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["cache-control"] == "no-cache"
    assert r.text.endswith("data: [DONE]\n\n")
    evs = events(r.text)
    assert evs[-1] == "[DONE]"
    chunks = evs[:-1]
    assert len({c["id"] for c in chunks}) == 1
    assert len({c["created"] for c in chunks}) == 1
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", chunks[0]["id"]
    )
    for c in chunks:
        assert c["object"] == "chat.completion.chunk"
        assert c["model"] == "deepseek-flash"
        assert c["system_fingerprint"].startswith("fp_")
        assert len(c["choices"]) == 1
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": None, "reasoning_content": ""}
    reasoning = [
        d["reasoning_content"]
        for d in deltas[1:]
        if d.get("content") is None and d.get("reasoning_content")
    ]
    content = [d["content"] for d in deltas[1:-1] if d.get("content")]
    assert "".join(reasoning) == "17*23 = 340 + 51 = 391."
    assert "".join(content) == "17 × 23 = **391**."
    assert all(len(piece) <= 7 for piece in reasoning + content)
    # reasoning run strictly before the content run, never both in one delta
    kinds = ["r" if d.get("reasoning_content") else "c" for d in deltas[1:-1]]
    assert kinds == sorted(kinds, key=lambda k: k == "c")
    for d in deltas[1:-1]:
        assert d.get("content") is None or d.get("reasoning_content") is None
    # usage: null on every earlier chunk, filled on the finish chunk
    assert all(c["usage"] is None for c in chunks[:-1])
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])
    final = chunks[-1]
    assert final["choices"][0]["delta"] == {"content": "", "reasoning_content": None}
    assert final["choices"][0]["finish_reason"] == "stop"
    usage = final["usage"]
    check_usage_invariants(usage)
    assert usage["completion_tokens_details"]["reasoning_tokens"] == count_tokens(
        "17*23 = 340 + 51 = 391."
    )
    assert usage["completion_tokens"] == count_tokens("17*23 = 340 + 51 = 391.17 × 23 = **391**.")
    assert usage["prompt_tokens"] == count_tokens(render_prompt(body()))


def test_deepseek_thinking_off_and_usage_key_absent(server: FixtureServer) -> None:
    server.enqueue(Reply(content="Hello!", reasoning="not streamed"))
    r = post(server, body(thinking={"type": "disabled"}))
    chunks = events(r.text)[:-1]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[1]["choices"][0]["delta"] == {"content": "Hello!"}
    assert all("reasoning_content" not in c["choices"][0]["delta"] for c in chunks)
    assert all("usage" not in c for c in chunks[:-1])
    usage = chunks[-1]["usage"]
    assert "completion_tokens_details" not in usage
    assert usage["completion_tokens"] == count_tokens("Hello!")
    check_usage_invariants(usage)
    # reasoning_effort "none" also turns thinking off
    server.enqueue(Reply(content="x"))
    chunks = events(post(server, body(reasoning_effort="none")).text)[:-1]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}


def test_keepalives_come_before_the_first_data_event(server: FixtureServer) -> None:
    server.enqueue(Reply(content="ok", keepalives=3))
    r = post(server, body())
    assert r.text.startswith(": keep-alive\n\n" * 3 + "data: {")
    assert r.text.count(": keep-alive") == 3


def _tool_call_deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for c in chunks:
        for choice in c["choices"]:
            out.extend((choice.get("delta") or {}).get("tool_calls") or [])
    return out


def _assemble(frags: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    calls: dict[int, dict[str, str]] = {}
    for f in frags:
        call = calls.setdefault(f["index"], {"id": "", "name": "", "arguments": ""})
        if "id" in f:
            call["id"] = f["id"]
            call["name"] = f["function"]["name"]
        call["arguments"] += f["function"]["arguments"]
    return calls


ARGS_A = '{"path": "set\\"up.py"}'
ARGS_B = '{"path": "pyproject.toml", "limit": 40}'


def test_tool_calls_sequential(server: FixtureServer) -> None:
    server.enqueue(
        Reply(
            reasoning="read both",
            content="Reading both files.",
            tool_calls=[ToolCallSpec("read_file", ARGS_A), ToolCallSpec("read_file", ARGS_B)],
            arg_chunk=3,
        )
    )
    r = post(server, body(tools=TOOLS))
    chunks = events(r.text)[:-1]
    frags = _tool_call_deltas(chunks)
    indices = [f["index"] for f in frags]
    assert indices == sorted(indices)
    heads = [f for f in frags if "id" in f]
    assert len(heads) == 2
    for i, head in enumerate(heads):
        assert re.fullmatch(rf"call_0{i}_[A-Za-z0-9]{{24}}", head["id"])
        assert head["type"] == "function"
        assert head["function"] == {"name": "read_file", "arguments": ""}
    for f in frags:
        if "id" not in f:
            assert set(f) == {"index", "function"}
            assert set(f["function"]) == {"arguments"}
            assert 1 <= len(f["function"]["arguments"]) <= 3
    calls = _assemble(frags)
    assert calls[0]["arguments"] == ARGS_A
    assert calls[1]["arguments"] == ARGS_B
    final = chunks[-1]
    assert final["choices"][0]["finish_reason"] == "tool_calls"
    assert final["usage"]["completion_tokens"] == count_tokens(
        "read bothReading both files." + ARGS_A + ARGS_B
    )


def test_tool_calls_interleaved_and_explicit_ids(server: FixtureServer) -> None:
    server.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("read_file", ARGS_A, id="call_x"),
                ToolCallSpec("read_file", ARGS_B),
            ],
            interleave_tool_calls=True,
            arg_chunk=4,
        )
    )
    frags = _tool_call_deltas(events(post(server, body(tools=TOOLS)).text)[:-1])
    indices = [f["index"] for f in frags]
    assert indices[:6] == [0, 1, 0, 1, 0, 1]
    calls = _assemble(frags)
    assert calls[0]["id"] == "call_x"
    assert (calls[0]["arguments"], calls[1]["arguments"]) == (ARGS_A, ARGS_B)


def test_finish_variants(server: FixtureServer) -> None:
    server.enqueue(
        Reply(
            reasoning="long thought",
            finish_reason="length",
            omit_delta_on_finish=True,
            model="deepseek-v4-flash",
        )
    )
    chunks = events(post(server, body()).text)[:-1]
    final = chunks[-1]
    assert "delta" not in final["choices"][0]
    assert final["choices"][0]["finish_reason"] == "length"
    assert all(c["model"] == "deepseek-v4-flash" for c in chunks)
    server.enqueue(Reply(usage={"prompt_tokens": 7}))
    assert events(post(server, body()).text)[-2]["usage"] == {"prompt_tokens": 7}


def test_openai_flavour_separate_usage_chunk(openai_server: FixtureServer) -> None:
    openai_server.enqueue(
        Reply(content="Hello!", reasoning="hidden", tool_calls=[ToolCallSpec("read_file", ARGS_A)])
    )
    r = post(
        openai_server, body(model="gpt-test", tools=TOOLS, stream_options={"include_usage": True})
    )
    evs = events(r.text)
    assert evs[-1] == "[DONE]"
    chunks = evs[:-1]
    assert chunks[0]["id"].startswith("chatcmpl-")
    for c in chunks:
        for choice in c["choices"]:
            assert "reasoning_content" not in choice.get("delta", {})
    finish, usage_chunk = chunks[-2], chunks[-1]
    assert finish["choices"][0]["finish_reason"] == "tool_calls"
    assert finish["usage"] is None
    assert all(c["usage"] is None for c in chunks[:-1])
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    assert "prompt_cache_hit_tokens" not in usage
    assert "prompt_cache_miss_tokens" not in usage
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["completion_tokens"] == count_tokens("Hello!" + ARGS_A)
    head = _tool_call_deltas(chunks)[0]
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", head["id"])
    # without include_usage: no usage anywhere
    openai_server.enqueue(Reply(content="Hi"))
    chunks = events(post(openai_server, body(model="gpt-test")).text)[:-1]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_openai_flavour_validation(openai_server: FixtureServer) -> None:
    r = post(openai_server, body(model="nope"))
    assert r.status_code == 404
    assert error_of(r)["code"] == "model_not_found"
    # no DeepSeek-only checks: no reasoning_content needed, tool_choice free
    openai_server.enqueue(Reply(content="ok"))
    msgs = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    r = post(
        openai_server, body(model="gpt-test", messages=msgs, tools=TOOLS, tool_choice="required")
    )
    assert r.status_code == 200
    r = post(openai_server, body(model="gpt-test"), headers={"Authorization": "Bearer nope-1234"})
    assert r.status_code == 401


def test_non_streaming_completion(server: FixtureServer) -> None:
    server.enqueue(
        Reply(reasoning="hmm", content="391", tool_calls=[ToolCallSpec("read_file", ARGS_A)])
    )
    r = post(server, body(stream=False, tools=TOOLS))
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    data = r.json()
    assert data["object"] == "chat.completion"
    message = data["choices"][0]["message"]
    assert message["role"] == "assistant"
    assert message["content"] == "391"
    assert message["reasoning_content"] == "hmm"
    assert message["tool_calls"][0]["function"] == {"name": "read_file", "arguments": ARGS_A}
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    check_usage_invariants(data["usage"])


# --------------------------------------------------------------------------- strictness


def test_reasoning_content_must_be_passed_back(server: FixtureServer) -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},  # no reasoning_content key
        {"role": "user", "content": "read setup.py"},
    ]
    r = post(server, body(messages=history, tools=TOOLS))
    assert r.status_code == 400
    err = error_of(r)
    assert err == {
        "message": "The reasoning_content in the thinking mode must be passed back to the API.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
    assert server.requests[-1].status == 400
    assert server.pending == 0
    # without tools, or with thinking off, the key is not required
    server.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    assert post(server, body(messages=history)).status_code == 200
    assert (
        post(server, body(messages=history, tools=TOOLS, thinking={"type": "disabled"})).status_code
        == 200
    )
    # an empty string passes the presence check
    history[1] = {**history[1], "reasoning_content": ""}
    assert post(server, body(messages=history, tools=TOOLS)).status_code == 200


def test_message_sequence_rules(server: FixtureServer) -> None:
    call = {
        "id": "call_00_a",
        "type": "function",
        "function": {"name": "read_file", "arguments": "{}"},
    }
    orphan = [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "call_00_a", "content": "r"},
    ]
    r = post(server, body(messages=orphan))
    assert r.status_code == 400
    assert error_of(r)["message"].startswith(
        "Messages with role 'tool' must be a response to a preceding message"
    )
    missing = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "",
            "tool_calls": [call, {**call, "id": "call_01_b"}],
        },
        {"role": "tool", "tool_call_id": "call_00_a", "content": "r"},
        {"role": "user", "content": "next"},
    ]
    r = post(server, body(messages=missing))
    assert r.status_code == 400
    message = error_of(r)["message"]
    assert message.startswith(
        "An assistant message with 'tool_calls' must be followed by tool messages"
    )
    assert message.endswith("did not have response messages: call_01_b")
    # a tool answering an id of an older assistant turn is rejected too
    stale = [
        *missing[:3],
        {"role": "tool", "tool_call_id": "call_01_b", "content": "r"},
        {"role": "assistant", "content": "done", "reasoning_content": ""},
        {"role": "tool", "tool_call_id": "call_00_a", "content": "again"},
    ]
    assert post(server, body(messages=stale)).status_code == 400
    server.enqueue(Reply(content="ok"))
    assert (
        post(server, body(messages=[*stale[:5], {"role": "user", "content": "q"}])).status_code
        == 200
    )


def test_auth(server: FixtureServer) -> None:
    r = post(server, body(), headers={"Authorization": "Bearer sk-wrongABCD"})
    assert r.status_code == 401
    err = error_of(r)
    assert err["message"] == "Authentication Fails, Your api key: ****ABCD is invalid"
    assert err["type"] == "authentication_error"
    assert post(server, body(), headers={}).status_code == 401
    with FixtureServer(api_key=None) as open_server:
        open_server.enqueue(Reply(content="ok"))
        assert post(open_server, body(), headers={}).status_code == 200


def test_model_n_and_deserialize_errors(server: FixtureServer) -> None:
    r = post(server, body(model="deepseek-chat"))
    assert (r.status_code, error_of(r)["message"]) == (400, "Model Not Exist")
    r = post(server, body(n=2))
    assert (r.status_code, error_of(r)["message"]) == (
        400,
        "Invalid n value (currently only n = 1 is supported)",
    )
    r = post(server, body(thinking=True))
    assert r.status_code == 422
    message = error_of(r)["message"]
    assert message.startswith(
        "Failed to deserialize the JSON body into the target type: thinking: invalid type: boolean `true`"
    )
    assert message.endswith("expected struct ThinkingOptions")
    r = post(server, body(reasoning_effort="extreme"))
    assert r.status_code == 422
    assert "reasoning_effort: unknown variant `extreme`" in error_of(r)["message"]
    for effort in ("minimal", "medium", "xhigh", "ultra"):
        server.enqueue(Reply(content="ok"))
        assert post(server, body(reasoning_effort=effort)).status_code == 200
    r = httpx.post(f"{server.base_url}/chat/completions", content=b'{"model": ', headers=AUTH)
    assert r.status_code == 400
    assert error_of(r)["message"].startswith(
        "Failed to deserialize the JSON body into the target type: "
    )
    assert server.requests[-1].json is None
    r = post(server, body(stream=False, stream_options={"include_usage": True}))
    assert r.status_code == 400
    server.models = {"deepseek-chat"}
    server.enqueue(Reply(content="ok"))
    assert post(server, body(model="deepseek-chat")).status_code == 200


def test_tool_choice_in_thinking_mode(server: FixtureServer) -> None:
    r = post(server, body(tools=TOOLS, tool_choice="required"))
    assert (r.status_code, error_of(r)["message"]) == (
        400,
        "Thinking mode does not support this tool_choice",
    )
    named = {"type": "function", "function": {"name": "read_file"}}
    assert post(server, body(tools=TOOLS, tool_choice=named)).status_code == 400
    server.enqueue(Reply(content="a"), Reply(content="b"))
    assert post(server, body(tools=TOOLS, tool_choice="auto")).status_code == 200
    assert (
        post(
            server, body(tools=TOOLS, tool_choice="required", thinking={"type": "disabled"})
        ).status_code
        == 200
    )


def test_unknown_route_and_v1_prefix(server: FixtureServer) -> None:
    server.enqueue(Reply(content="ok"))
    r = httpx.post(f"{server.base_url}/v1/chat/completions", json=body(), headers=AUTH)
    assert r.status_code == 200
    r = httpx.post(f"{server.base_url}/completions", json=body(), headers=AUTH)
    assert r.status_code == 404
    assert [rec.status for rec in server.requests] == [200, 404]


@pytest.mark.parametrize(
    ("dialect", "path", "foreign", "envelope_type"),
    [
        (ChatDialect("openai"), "/v1/chat/completions", "/v1/messages", "invalid_request_error"),
        (AnthropicDialect("anthropic"), "/v1/messages", "/v1/responses", "not_found_error"),
        (
            ResponsesDialect("openai"),
            "/v1/responses",
            "/v1/chat/completions",
            "invalid_request_error",
        ),
    ],
    ids=["chat", "anthropic", "responses"],
)
def test_one_server_routes_by_dialect(
    dialect: Dialect, path: str, foreign: str, envelope_type: str
) -> None:
    """The server is one class; the dialect decides the paths and the error envelope."""
    with FixtureServer(dialect, api_key=None) as srv:
        srv.enqueue(HttpError(418, "scripted"))
        r = httpx.post(srv.base_url + foreign, json={})
        assert r.status_code == 404  # another dialect's path consumes nothing
        assert r.json()["error"]["type"] == envelope_type
        assert srv.pending == 1
        assert httpx.post(srv.base_url + path, content=b"{").status_code == 400  # validation
        assert srv.pending == 1
        assert [rec.path for rec in srv.requests] == [foreign, path]
        assert [rec.status for rec in srv.requests] == [404, 400]


# --------------------------------------------------------------------------- scripted failures


def test_http_error_with_retry_after(server: FixtureServer) -> None:
    server.enqueue(
        HttpError(429, "Rate Limit Reached", type="rate_limit_error", retry_after=1),
        HttpError(503, "Server Overloaded", retry_after="0.25", headers={"X-Should-Retry": "true"}),
        Reply(content="finally"),
    )
    r = post(server, body())
    assert r.status_code == 429
    assert r.headers["retry-after"] == "1"
    assert r.headers["content-type"] == "application/json"
    assert error_of(r) == {
        "message": "Rate Limit Reached",
        "type": "rate_limit_error",
        "param": None,
        "code": "invalid_request_error",
    }
    r = post(server, body())
    assert (r.status_code, r.headers["retry-after"], r.headers["x-should-retry"]) == (
        503,
        "0.25",
        "true",
    )
    assert post(server, body()).status_code == 200
    assert [rec.status for rec in server.requests] == [429, 503, 200]


def test_empty_queue_answers_500(server: FixtureServer) -> None:
    r = post(server, body())
    assert r.status_code == 500
    assert r.json() == {
        "error": {
            "message": "fixture: no scripted reply",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }


def test_responder_used_when_queue_empty(server: FixtureServer) -> None:
    seen: list[RecordedRequest] = []

    def responder(request: RecordedRequest) -> Reply | HttpError:
        seen.append(request)
        assert request.json is not None
        return Reply(content=f"echo {len(request.json['messages'])}")

    server.responder = responder
    server.enqueue(Reply(content="queued first"))
    first = events(post(server, body()).text)
    second = events(post(server, body()).text)
    assert first[1]["choices"][0]["delta"]["content"] == "queued f"
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in second[:-1]) == "echo 2"
    assert len(seen) == 1


def test_drop_after_closes_without_done(server: FixtureServer) -> None:
    server.enqueue(Reply(reasoning="First, list the failing tests and then", drop_after=2))
    lines: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError):
        with httpx.stream(
            "POST", f"{server.base_url}/chat/completions", json=body(), headers=AUTH
        ) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                lines.append(line)
    data = [line for line in lines if line.startswith("data: ")]
    assert len(data) == 2
    assert "[DONE]" not in "".join(lines)
    assert all(json.loads(line[6:])["choices"][0]["finish_reason"] is None for line in data)


def test_in_band_error_and_garbage_end_without_done(server: FixtureServer) -> None:
    err = {
        "message": "Internal server error",
        "type": "server_error",
        "param": None,
        "code": "internal_error",
    }
    server.enqueue(
        Reply(content="Partial", error_event=err),
        Reply(content="x", garbage_line="upstream error: read ECONNRESET"),
    )
    raw = post(server, body()).text
    assert "[DONE]" not in raw and '"finish_reason":"stop"' not in raw
    assert raw.endswith('data: {"error":' + json.dumps(err, separators=(",", ":")) + "}\n\n")
    raw = post(server, body()).text
    assert raw.endswith("\n\nupstream error: read ECONNRESET\n\n")
    assert "[DONE]" not in raw


def test_stall_sends_only_keepalives(server: FixtureServer) -> None:
    server.enqueue(Stall(0.3, keepalive_every=0.1))
    start = time.monotonic()
    r = post(server, body())
    assert time.monotonic() - start >= 0.3
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert "data:" not in r.text
    assert 1 <= r.text.count(": keep-alive\n\n") <= 3


def test_stop_interrupts_a_long_stall() -> None:
    srv = FixtureServer(api_key=None).start()
    srv.enqueue(Stall(30))
    outcome: list[object] = []

    def client() -> None:
        try:
            outcome.append(post(srv, body(), headers={}, timeout=10).status_code)
        except httpx.HTTPError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 60
    while not srv.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    start = time.monotonic()
    srv.stop()
    thread.join(60)
    assert not thread.is_alive()
    assert time.monotonic() - start < 2
    assert outcome


# --------------------------------------------------------------------------- recording


def test_requests_recorded_byte_exact(server: FixtureServer) -> None:
    raw = b'{"model":"deepseek-flash",  "stream": true,\n"messages":[{"role":"user","content":"caf\xc3\xa9"}]}'
    server.enqueue(Reply(content="ok"))
    r = httpx.post(
        f"{server.base_url}/chat/completions?x=1",
        content=raw,
        headers={**AUTH, "Content-Type": "application/json", "X-Custom-Header": "Yes"},
    )
    assert r.status_code == 200
    rec = server.requests[-1]
    assert rec.body == raw
    assert rec.path == "/chat/completions?x=1"
    assert rec.headers["x-custom-header"] == "Yes"
    assert rec.headers["authorization"] == f"Bearer {KEY}"
    assert rec.json is not None and rec.json["messages"][0]["content"] == "café"
    assert rec.status == 200


# --------------------------------------------------------------------------- prompt cache


def test_render_prompt_preserves_tool_key_order() -> None:
    a = {"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": 2}}}
    b = {"function": {"name": "f", "parameters": {"a": 2, "b": 1}}, "type": "function"}
    msgs = [{"role": "user", "content": "x"}]
    assert render_prompt({"tools": [a], "messages": msgs}) != render_prompt(
        {"tools": [b], "messages": msgs}
    )
    assert (
        '{"type":"function","function":{"name":"f","parameters":{"b":1,"a":2}}}'
        in render_prompt({"tools": [a], "messages": msgs})
    )
    assert count_tokens("") == 0
    assert count_tokens("abcd") == 1
    assert count_tokens("abcde") == 2
    assert count_tokens("é") == 1


def _run(server: FixtureServer, payload: dict[str, Any]) -> dict[str, Any]:
    r = post(server, payload)
    assert r.status_code == 200, r.text
    return events(r.text)[-2]["usage"]


def test_cache_append_only_hits_previous_output_unit(server: FixtureServer) -> None:
    system = {"role": "system", "content": "You are a coding agent. " * 40}
    first_msgs = [system, {"role": "user", "content": "Compare setup.py and pyproject.toml."}]
    calls = [ToolCallSpec("read_file", ARGS_A), ToolCallSpec("read_file", ARGS_B)]
    server.enqueue(Reply(reasoning="I need both files.", content="Reading.", tool_calls=calls))
    r = post(server, body(messages=first_msgs, tools=TOOLS))
    chunks = events(r.text)[:-1]
    usage1 = chunks[-1]["usage"]
    assert usage1["prompt_cache_hit_tokens"] == 0
    assert usage1["prompt_cache_miss_tokens"] == usage1["prompt_tokens"]

    # the client appends the assistant turn exactly as streamed, then the results
    got = _assemble(_tool_call_deltas(chunks))
    assistant = {
        "role": "assistant",
        "content": "Reading.",
        "reasoning_content": "I need both files.",
        "tool_calls": [
            {
                "id": got[i]["id"],
                "type": "function",
                "function": {"name": got[i]["name"], "arguments": got[i]["arguments"]},
            }
            for i in (0, 1)
        ],
    }
    second_msgs = [
        *first_msgs,
        assistant,
        {"role": "tool", "tool_call_id": got[0]["id"], "content": "from setuptools import setup"},
        {"role": "tool", "tool_call_id": got[1]["id"], "content": "[project]\nname = 'x'"},
    ]
    server.enqueue(
        Reply(content="Done."), Reply(content="again"), Reply(content="x"), Reply(content="y")
    )
    usage2 = _run(server, body(messages=second_msgs, tools=TOOLS))
    check_usage_invariants(usage2)
    expected_unit = render_prompt(body(messages=[*first_msgs, assistant], tools=TOOLS))
    assert usage2["prompt_cache_hit_tokens"] == count_tokens(expected_unit)
    assert usage2["prompt_tokens"] == count_tokens(
        render_prompt(body(messages=second_msgs, tools=TOOLS))
    )
    assert usage2["prompt_cache_hit_tokens"] / usage2["prompt_tokens"] > 0.9

    # replayed reasoning altered: only the end-of-input unit of request 1 matches
    altered = [*first_msgs, {**assistant, "reasoning_content": ""}, *second_msgs[3:]]
    usage3 = _run(server, body(messages=altered, tools=TOOLS))
    assert usage3["prompt_cache_hit_tokens"] == count_tokens(
        render_prompt(body(messages=first_msgs, tools=TOOLS))
    )

    # an earlier byte changed (the system prompt): full miss
    changed = [{"role": "system", "content": system["content"] + "!"}, *second_msgs[1:]]
    usage4 = _run(server, body(messages=changed, tools=TOOLS))
    assert usage4["prompt_cache_hit_tokens"] == 0
    assert usage4["prompt_cache_miss_tokens"] == usage4["prompt_tokens"]

    # forgetting the cache: the same append-only request now misses
    server.reset_cache()
    assert _run(server, body(messages=second_msgs, tools=TOOLS))["prompt_cache_hit_tokens"] == 0


def test_cache_needs_whole_units_and_is_per_model(server: FixtureServer) -> None:
    msgs = [{"role": "system", "content": "s" * 400}, {"role": "user", "content": "first question"}]
    server.enqueue(*(Reply(content="answer") for _ in range(4)))
    _run(server, body(messages=msgs, thinking={"type": "disabled"}))
    # shares the system prompt but not the whole first unit: partial overlap doesn't count
    other = [msgs[0], {"role": "user", "content": "second question"}]
    assert (
        _run(server, body(messages=other, thinking={"type": "disabled"}))["prompt_cache_hit_tokens"]
        == 0
    )
    # no tools: replayed reasoning is not in the prompt, so it may be dropped
    follow = [
        *msgs,
        {"role": "assistant", "content": "answer"},
        {"role": "user", "content": "more"},
    ]
    usage = _run(server, body(messages=follow, thinking={"type": "disabled"}))
    assert usage["prompt_cache_hit_tokens"] == count_tokens(
        render_prompt(body(messages=follow[:3]))
    )
    # a different model has its own cache
    usage = _run(
        server, body(model="deepseek-v4-pro", messages=follow, thinking={"type": "disabled"})
    )
    assert usage["prompt_cache_hit_tokens"] == 0


def test_cache_persists_a_prefix_shared_by_several_requests(server: FixtureServer) -> None:
    """DeepSeek rule 2: A+B then A+C misses, but A is then persisted and A+D hits it."""
    system = {"role": "system", "content": "shared system prompt " * 40}
    server.enqueue(*(Reply(content="ok") for _ in range(3)))

    def ask(question: str) -> dict[str, Any]:
        msgs = [system, {"role": "user", "content": question}]
        return _run(server, body(messages=msgs, thinking={"type": "disabled"}))

    assert ask("Alpha question")["prompt_cache_hit_tokens"] == 0
    assert ask("Beta question")["prompt_cache_hit_tokens"] == 0  # reveals the shared prefix
    third = ask("Gamma question")
    shared = render_prompt(body(messages=[system, {"role": "user", "content": ""}]))
    assert third["prompt_cache_hit_tokens"] == count_tokens(shared)
    assert third["prompt_cache_miss_tokens"] > 0


def test_verbatim_answers_are_sent_byte_for_byte():
    from reasonix_testkit import Verbatim

    body = b'data: {"x": 1}\n\ndata: [DONE]\n\n'
    with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:
        server.enqueue(
            Verbatim(418, b'{"error": "teapot"}'),
            Verbatim(200, b"", "text/event-stream", chunks=iter([body[:7], body[7:]])),
        )
        url = server.base_url + "/chat/completions"
        payload = {"model": "deepseek-flash", "messages": [{"role": "user", "content": "hi"}]}
        first = httpx.post(url, json=payload)
        second = httpx.post(url, json=payload)
    assert first.status_code == 418 and first.content == b'{"error": "teapot"}'
    assert second.status_code == 200 and second.content == body
    assert second.headers["content-type"] == "text/event-stream"
    assert [r.status for r in server.requests] == [418, 200]
