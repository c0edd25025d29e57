"""The fixture server's HTTP layer (stdlib only).

The wire formats (Chat Completions, Anthropic Messages, Responses) differ in
paths, bodies and event shapes, but they answer requests the same way: read
and parse a JSON body, write an error with a JSON body, stream SSE over
chunked transfer with scripted faults (delay, abrupt drop, in-band error,
garbage), send a non-streamed JSON body, or stall. Those byte paths live here
so every dialect exercises the same HTTP behaviour; the payloads are built by
each dialect.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from reasonix_testkit.script import Reply

# An SSE comment line: what OpenAI-family servers send to keep a stream alive.
SSE_KEEPALIVE = b": keep-alive\n\n"


class RequestSink(Protocol):
    """What the HTTP server hands each request to (the fixture server)."""

    def handle_request(self, h: RequestHandler) -> None: ...


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    fixture: RequestSink
    # Whether a streamed answer that ends cleanly leaves its connection open for
    # the next request (as a real API's does); by default each stream closes it.
    keep_alive_streams = False

    def __init__(self, address: tuple[str, int], fixture: RequestSink) -> None:
        self.fixture = fixture
        self._conn_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self.accepted = 0  # connections accepted so far
        super().__init__(address, RequestHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup; skip it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._conns.add(request)
            self.accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conn_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def abort_connections(self) -> None:
        with self._conn_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            return  # client went away; expected in cancellation tests
        super().handle_error(request, client_address)


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 120.0  # idle keep-alive connections
    server_version = "reasonix-fixture/1"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _fixture(self) -> RequestSink:
        server = self.server
        assert isinstance(server, LoopbackHTTPServer)
        return server.fixture

    def do_POST(self) -> None:
        self._fixture().handle_request(self)

    def do_GET(self) -> None:
        self._fixture().handle_request(self)


class _Aborted(Exception):
    """The stream must end now (server stopping or client gone)."""


class _Writer:
    """Chunked-transfer writer for one response body."""

    def __init__(self, handler: RequestHandler, stop: threading.Event) -> None:
        self._h = handler
        self._stop = stop

    def start(self, content_type: str) -> None:
        h = self._h
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        server = h.server
        if isinstance(server, LoopbackHTTPServer) and server.keep_alive_streams:
            # Kept open only if the body ends cleanly (``end``); every early
            # exit marks the connection closed.
            h.end_headers()
            return
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

    def write(self, data: bytes) -> None:
        if self._stop.is_set():
            raise _Aborted
        if not data:
            return
        try:
            self._h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise _Aborted from exc

    def sleep(self, seconds: float) -> None:
        if seconds > 0 and self._stop.wait(seconds):
            raise _Aborted

    def end(self) -> None:
        try:
            self._h.wfile.write(b"0\r\n\r\n")
        except OSError as exc:
            raise _Aborted from exc


# --------------------------------------------------------------------------- reading


def _read_body(handler: RequestHandler) -> bytes:
    if "chunked" in (handler.headers.get("Transfer-Encoding") or "").lower():
        parts: list[bytes] = []
        while True:
            line = handler.rfile.readline(65537)
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline(65537)
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length > 0 else b""


@dataclass(frozen=True, slots=True)
class IncomingRequest:
    """A request's headers (lower-cased names, repeats joined) and its body.

    ``parsed`` is the decoded JSON (any type, None when it failed) and
    ``parse_error`` says why decoding failed; each fixture words that error
    in its own envelope.
    """

    headers: dict[str, str]
    body: bytes
    parsed: Any
    parse_error: str | None


def read_request(h: RequestHandler) -> IncomingRequest | None:
    """Read and parse one request; None (connection marked closed) if unreadable."""
    headers: dict[str, str] = {}
    for name, value in h.headers.items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    try:
        body = _read_body(h)
    except (OSError, ValueError):
        h.close_connection = True
        return None
    parsed: Any = None
    parse_error: str | None = None
    try:
        parsed = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        parse_error = f"invalid UTF-8 at byte {exc.start}"
    except json.JSONDecodeError as exc:
        parse_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return IncomingRequest(headers, body, parsed, parse_error)


# --------------------------------------------------------------------------- writing


@contextmanager
def _closed_on_failure(h: RequestHandler) -> Iterator[None]:
    """An answer cut short (client gone, server stopping) leaves its connection closed."""
    try:
        yield
    except (_Aborted, OSError):
        h.close_connection = True


def _format_retry_after(value: str | float) -> str:
    if isinstance(value, str):
        return value
    return f"{value:g}"


def send_error_response(
    h: RequestHandler,
    status: int,
    payload: bytes,
    *,
    retry_after: str | float | None = None,
    headers: Mapping[str, str] | None = None,
    leading_headers: Iterable[tuple[str, str]] = (),
) -> None:
    """An error status with a JSON body (keep-alive).

    ``leading_headers`` go right after Content-Length (e.g. Anthropic's
    ``request-id``); ``headers`` are the script's own, sent last, and a
    Content-Type among them replaces the JSON one.
    """
    with _closed_on_failure(h):
        h.send_response(status)
        extra = {k.lower(): v for k, v in (headers or {}).items()}
        if "content-type" not in extra:
            h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        for name, value in leading_headers:
            h.send_header(name, value)
        if retry_after is not None:
            h.send_header("Retry-After", _format_retry_after(retry_after))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(payload)


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
    with _closed_on_failure(h):
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
    writer = _Writer(h, stop)
    with _closed_on_failure(h):
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
    writer = _Writer(h, stop)
    with _closed_on_failure(h):
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


def send_chunks(
    h: RequestHandler, stop: threading.Event, *, content_type: str, chunks: Iterable[bytes]
) -> None:
    """200 + chunked headers, then each chunk as it comes (a relayed stream)."""
    writer = _Writer(h, stop)
    with _closed_on_failure(h):
        writer.start(content_type)
        for chunk in chunks:
            writer.write(chunk)
        writer.end()
