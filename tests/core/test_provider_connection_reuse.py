"""A provider reuses its connection from one request to the next.

httpx puts a connection back in its pool only once the response body has been
read to the end. Each kind's parser stops at its terminal event (``[DONE]``,
``message_stop``, ``response.completed``); the rest of the body - the chunked
transfer's end - is read before the stream is finished, so a server that keeps
connections alive (every real API; the fixture with ``keep_alive_streams``)
serves a session's requests over one connection instead of a new TCP and TLS
handshake per step.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.messages import Message
from reasonix_core.provider.anthropic import AnthropicProvider
from reasonix_core.provider.base import Request, StreamEnd, TextChunk
from reasonix_core.provider.http import HttpProvider
from reasonix_core.provider.openai import OpenAIProvider
from reasonix_core.provider.responses import ResponsesProvider
from reasonix_testkit import (
    AnthropicDialect,
    ChatDialect,
    FixtureServer,
    Reply,
    ResponsesDialect,
    Verbatim,
)

KINDS: list[tuple[Any, type[HttpProvider], str]] = [
    (ChatDialect("deepseek"), OpenAIProvider, "openai"),
    (AnthropicDialect("anthropic"), AnthropicProvider, "anthropic"),
    (ResponsesDialect("deepseek"), ResponsesProvider, "responses"),
]


def provider_for(server: FixtureServer, cls: type[HttpProvider], kind: str) -> HttpProvider:
    config = ProviderConfig(name="fx", kind=kind, base_url=server.base_url, models=["m"])
    return cls(config, "k")


def request() -> Request:
    return Request(
        model="m",
        messages=(Message(role="system", content="be brief"), Message(role="user", content="hi")),
    )


async def answer(provider: HttpProvider) -> str:
    text, ended = "", False
    async for chunk in provider.stream(provider.prepare(request())):
        if isinstance(chunk, TextChunk):
            text += chunk.text
        ended = ended or isinstance(chunk, StreamEnd)
    assert ended
    return text


@pytest.mark.parametrize(("dialect", "cls", "kind"), KINDS, ids=[k for _, _, k in KINDS])
async def test_requests_share_one_connection(dialect: Any, cls: type[HttpProvider], kind: str):
    with FixtureServer(dialect, api_key=None, keep_alive_streams=True) as server:
        server.models = None
        server.responder = lambda _request: Reply(content="hello")
        provider = provider_for(server, cls, kind)
        try:
            assert [await answer(provider) for _ in range(3)] == ["hello"] * 3
        finally:
            await provider.aclose()
        assert server.connections == 1


async def test_a_stream_held_open_past_its_end_is_not_waited_for():
    # A server that sends [DONE] and then keeps the body open: the answer is
    # complete anyway, so the provider gives up on that connection after a
    # short wait, and stops waiting on the streams that follow.
    released = threading.Event()
    held_to_the_end: list[bool] = []

    def held_open() -> Iterator[bytes]:
        chunk = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "held"}, "finish_reason": "stop"}],
        }
        yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"
        held_to_the_end.append(not released.wait(30))

    with FixtureServer(ChatDialect("deepseek"), api_key=None, keep_alive_streams=True) as server:
        server.models = None
        script = iter(
            [Verbatim(200, b"", "text/event-stream", chunks=held_open())]
            + [Reply(content="hello")] * 2
        )
        server.responder = lambda _request: next(script)
        provider = provider_for(server, OpenAIProvider, "openai")
        try:
            assert await answer(provider) == "held"
            released.set()
            assert [await answer(provider) for _ in range(2)] == ["hello"] * 2
        finally:
            await provider.aclose()
        assert held_to_the_end == [False]
        # The provider no longer reads streams to their end: each closed its connection.
        assert server.connections == 3
