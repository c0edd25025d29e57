"""The loopback HTTP layer e2ebench's replay server and recording proxy stand on
(stdlib only), and the test kit's fixture server too.

Real HTTP on 127.0.0.1 with chunked transfer, so a replayed run exercises the
byte paths it uses against a live API. :class:`LoopbackServer` runs a
:class:`RequestSink` on a thread; the handlers read a request
(:func:`read_request`) and answer with an error body (:func:`send_error_response`),
a relayed stream (:func:`send_chunks`) or bytes captured elsewhere
(:class:`Verbatim`, :func:`send_verbatim`). The test kit (``reasonix_testkit``,
not shipped) imports this layer and adds its scripted answers and faults.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, Self

#: The request paths each provider kind's endpoint answers on (with and without
#: a ``/v1`` prefix), as a cassette's ``kind`` names it.
ROUTES: Mapping[str, frozenset[str]] = {
    "openai": frozenset({"/chat/completions", "/v1/chat/completions"}),
    "anthropic": frozenset({"/v1/messages", "/anthropic/v1/messages"}),
    "responses": frozenset({"/responses", "/v1/responses"}),
}


@dataclass(frozen=True, slots=True)
class Verbatim:
    """An answer sent exactly as given: status, Content-Type and body bytes.

    For answers that were not scripted but captured (the e2ebench recording
    proxy relays the real provider's bytes, its replay server serves cassettes).
    """

    status: int
    body: bytes
    content_type: str = "application/json"
    # A 200 relayed as it arrives: these chunks over chunked transfer, ``body`` unused.
    chunks: Iterable[bytes] | None = None


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


class Aborted(Exception):
    """The stream must end now (server stopping or client gone)."""


class ChunkedWriter:
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
            raise Aborted
        if not data:
            return
        try:
            self._h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise Aborted from exc

    def sleep(self, seconds: float) -> None:
        if seconds > 0 and self._stop.wait(seconds):
            raise Aborted

    def end(self) -> None:
        try:
            self._h.wfile.write(b"0\r\n\r\n")
        except OSError as exc:
            raise Aborted from exc


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
def closed_on_failure(h: RequestHandler) -> Iterator[None]:
    """An answer cut short (client gone, server stopping) leaves its connection closed."""
    try:
        yield
    except (Aborted, OSError):
        h.close_connection = True


def format_retry_after(value: str | float) -> str:
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
    with closed_on_failure(h):
        h.send_response(status)
        extra = {k.lower(): v for k, v in (headers or {}).items()}
        if "content-type" not in extra:
            h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        for name, value in leading_headers:
            h.send_header(name, value)
        if retry_after is not None:
            h.send_header("Retry-After", format_retry_after(retry_after))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(payload)


def send_chunks(
    h: RequestHandler, stop: threading.Event, *, content_type: str, chunks: Iterable[bytes]
) -> None:
    """200 + chunked headers, then each chunk as it comes (a relayed stream)."""
    writer = ChunkedWriter(h, stop)
    with closed_on_failure(h):
        writer.start(content_type)
        for chunk in chunks:
            writer.write(chunk)
        writer.end()


def send_verbatim(h: RequestHandler, stop: threading.Event, answer: Verbatim) -> None:
    """Bytes captured from elsewhere: no framing of ours, no fault injection."""
    if answer.chunks is not None:
        send_chunks(h, stop, content_type=answer.content_type, chunks=answer.chunks)
    else:
        send_error_response(
            h, answer.status, answer.body, headers={"Content-Type": answer.content_type}
        )


class LoopbackServer:
    """A :class:`LoopbackHTTPServer` for ``sink`` on 127.0.0.1, served on a thread.

    ``stop`` is set when the server stops: every stream in flight ends then.
    """

    def __init__(
        self,
        sink: RequestSink,
        *,
        port: int = 0,
        keep_alive_streams: bool = False,
        stop: threading.Event | None = None,
    ) -> None:
        self.sink = sink
        self.keep_alive_streams = keep_alive_streams
        self.stop_event = stop if stop is not None else threading.Event()
        self._port = port
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def connections(self) -> int:
        """How many TCP connections the server has accepted since it started."""
        return self._httpd.accepted if self._httpd is not None else 0

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self.stop_event.clear()
        httpd = LoopbackHTTPServer(("127.0.0.1", self._port), self.sink)
        httpd.keep_alive_streams = self.keep_alive_streams
        thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"fixture-server-{httpd.server_port}",
            daemon=True,
        )
        self._httpd = httpd
        self._thread = thread
        thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self.stop_event.set()
        httpd.shutdown()
        httpd.abort_connections()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=2.0)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("fixture server is not running")
        return self._httpd.server_port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
