"""The fixture server's HTTP layer (stdlib only).

The wire formats (Chat Completions, Anthropic Messages, Responses) differ in
paths, bodies and event shapes, but they answer requests the same way: read
and parse a JSON body, write an error with a JSON body, stream SSE over
chunked transfer with scripted faults (delay, abrupt drop, in-band error,
garbage), send a non-streamed JSON body, or stall. Those byte paths live here
so every dialect exercises the same HTTP behaviour; the payloads are built by
each dialect. The HTTP server itself, reading a request, error bodies and relayed
streams are the product's (:mod:`reasonix_core.bench.loopback_http`, which
e2ebench's replay stands on); this module adds the scripted answers and faults.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from reasonix_core.bench.loopback_http import (
    ChunkedWriter,
    IncomingRequest,
    LoopbackHTTPServer,
    RequestHandler,
    closed_on_failure,
    read_request,
    send_chunks,
    send_error_response,
)
from reasonix_testkit.script import Reply

__all__ = [
    "SSE_KEEPALIVE",
    "IncomingRequest",
    "LoopbackHTTPServer",
    "RequestHandler",
    "read_request",
    "send_chunks",
    "send_error_response",
    "send_json_body",
    "send_sse_stream",
    "send_stall",
]

# An SSE comment line: what OpenAI-family servers send to keep a stream alive.
SSE_KEEPALIVE = b": keep-alive\n\n"


def send_json_body(
    h: RequestHandler,
    stop: threading.Event,
    data: bytes,
    *,
    delay: float,
    drop_after: int | None = None,
    before_body: Callable[[], None] | None = None,
) -> None:
    """A non-streamed 200 answer with Content-Length (keep-alive).

    ``drop_after`` (any value) sends half the body and closes, which clients
    see as a truncated response. ``delay`` waits between headers and body.
    ``before_body`` runs once the whole body is about to be written (the
    fixtures persist their simulated prompt cache there, so an aborted answer
    leaves no trace).
    """
    with closed_on_failure(h):
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        if drop_after is not None:
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(data[: len(data) // 2])
            h.close_connection = True
            return
        h.end_headers()
        if delay > 0 and stop.wait(delay):
            h.close_connection = True
            return
        if before_body is not None:
            before_body()
        h.wfile.write(data)


def send_sse_stream(
    h: RequestHandler,
    stop: threading.Event,
    reply: Reply,
    *,
    events: Sequence[bytes],
    tail: Sequence[bytes],
    error_event: bytes | None,
    content_type: str = "text/event-stream",
    keepalive_comments: int = 0,
    trailer: bytes | None = None,
    before_tail: Callable[[], None] | None = None,
) -> None:
    """Stream a scripted answer over chunked transfer, applying the reply's faults.

    Each element of ``events`` and ``tail`` is one framed SSE chunk.
    ``keepalive_comments`` :data:`SSE_KEEPALIVE` comments go first (not counted
    by ``drop_after``), then ``events`` with ``reply.delay`` between them. A
    ``drop_after`` reply stops after that many events and closes without the
    terminating chunk (an abrupt mid-body close). ``error_event`` (the framed
    in-band error for ``reply.error_event``) and ``reply.garbage_line`` end the
    body cleanly but without ``tail``. Otherwise ``before_tail`` runs (the
    response counts as complete: the prompt cache persists its output), each
    ``tail`` event follows after a delay, then ``trailer`` (e.g. ``[DONE]``).
    """
    writer = ChunkedWriter(h, stop)
    with closed_on_failure(h):
        writer.start(content_type)
        for _ in range(keepalive_comments):
            writer.write(SSE_KEEPALIVE)
        limit = None
        if reply.drop_after is not None:
            limit = max(0, min(reply.drop_after, len(events)))
        for sent, event in enumerate(events):
            if limit is not None and sent >= limit:
                break
            if sent:
                writer.sleep(reply.delay)
            writer.write(event)
        if limit is not None:
            h.close_connection = True
            return  # abrupt: no terminating chunk
        if reply.error_event is not None or reply.garbage_line is not None:
            if error_event is not None:
                writer.sleep(reply.delay)
                writer.write(error_event)
            if reply.garbage_line is not None:
                writer.sleep(reply.delay)
                writer.write(reply.garbage_line.encode("utf-8", "surrogatepass") + b"\n\n")
            writer.end()
            return
        if before_tail is not None:
            before_tail()
        for event in tail:
            writer.sleep(reply.delay)
            writer.write(event)
        if trailer is not None:
            writer.write(trailer)
        writer.end()


def send_stall(
    h: RequestHandler,
    stop: threading.Event,
    *,
    seconds: float,
    keepalive_every: float,
    content_type: str,
    keepalive: bytes,
) -> None:
    """200 + chunked headers, no data (``keepalive`` every so often), then close."""
    writer = ChunkedWriter(h, stop)
    with closed_on_failure(h):
        writer.start(content_type)
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            every = keepalive_every
            writer.sleep(min(remaining, every) if every > 0 else remaining)
            if every > 0 and time.monotonic() < deadline:
                writer.write(keepalive)
        writer.end()
