"""One loopback fixture server; a dialect per wire format.

Real HTTP on 127.0.0.1 with real SSE framing, so providers, benchmarks and TUI
tests exercise the same byte paths they use against a live API. Stdlib only.

Usage::

    with FixtureServer(ChatDialect("deepseek"), api_key="sk-test") as server:
        server.enqueue(Reply(content="hi"), HttpError(429, "Rate Limit Reached", retry_after=1))
        ...  # POST {server.base_url}/chat/completions
        server.requests[0].json

The server owns what every wire format shares: the lifecycle, the script
(FIFO of :class:`Reply` / :class:`HttpError` / :class:`Stall` /
:class:`Verbatim`, then
``responder``, else a 500), request recording, the optional context limit and
the byte paths of :mod:`reasonix_testkit.transport` (faults included). A
:class:`Dialect` owns only what differs: its paths, its validation and the
payloads of its answers and errors. Requests rejected by validation (auth,
malformed body, the provider's protocol checks) consume no scripted item, so
tests script exactly the answers their valid requests get.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from reasonix_core.bench.loopback_http import LoopbackServer, send_verbatim
from reasonix_testkit.dialects.chat import ChatDialect
from reasonix_testkit.prompt_cache import PromptCache
from reasonix_testkit.script import (
    HttpError,
    RecordedRequest,
    Reply,
    Responder,
    ScriptItem,
    Stall,
    Verbatim,
)
from reasonix_testkit.transport import (
    IncomingRequest,
    RequestHandler,
    read_request,
    send_json_body,
    send_stall,
)
from reasonix_testkit.wire import IdSource, RequestContext, Wire

# GET model listings (OpenAI shape) for model discovery, with or without the /v1 prefix.
MODELS_PATHS = frozenset({"/models", "/v1/models"})

__all__ = ["Dialect", "FixtureServer", "RequestContext"]


class Dialect(Protocol):
    """One wire format (and its flavours): paths, validation, payloads."""

    flavour: str
    routes: frozenset[str]
    # What a Stall sends now and then on a stream (non-streamed stalls send "\n").
    stream_keepalive: bytes

    @property
    def default_models(self) -> frozenset[str]:
        """The model ids the flavour accepts unless the server is told otherwise."""
        ...

    def authenticate(self, headers: dict[str, str], api_key: str) -> HttpError | None:
        """The credential check (run first, only when the server has a key); None to go on."""
        ...

    def validate(self, request: IncomingRequest, models: set[str] | None) -> HttpError | None:
        """The body checks after auth; the error to answer with, or None to go on."""
        ...

    def context_limit(self, body: dict[str, Any], limit: int) -> HttpError | None:
        """The provider's answer to a prompt (plus output budget) over ``limit`` tokens."""
        ...

    def context(self, body: dict[str, Any]) -> RequestContext: ...

    def fixture_error(self, status: int, message: str) -> HttpError:
        """An error of the fixture itself (unknown route, nothing scripted)."""
        ...

    def send_error(self, h: RequestHandler, err: HttpError, wire: Wire) -> None:
        """A scripted or validation error, in the dialect's envelope."""
        ...

    def send_reply(self, h: RequestHandler, reply: Reply, ctx: Any, wire: Wire) -> None:
        """A scripted answer; ``ctx`` is what this dialect's ``context`` returned."""
        ...


class FixtureServer(LoopbackServer):
    """A scripted endpoint on 127.0.0.1 speaking ``dialect`` (see module docstring).

    ``dialect`` defaults to DeepSeek Chat Completions. ``api_key=None`` disables
    the auth check. ``models`` replaces the dialect's default set of accepted
    model ids; assign ``server.models = None`` to accept any model. ``seed``
    makes generated ids reproducible. With ``max_context_tokens`` set, a request
    whose rendered prompt plus its output budget exceeds it is refused with the
    provider's "context length" error (a validation rejection). With
    ``keep_alive_streams`` a streamed answer that ends cleanly keeps its
    connection open for the next request, as a real API does (the benchmarks
    use it; by default every stream closes its connection).
    """

    def __init__(
        self,
        dialect: Dialect | None = None,
        api_key: str | None = "sk-test",
        *,
        models: Iterable[str] | None = None,
        port: int = 0,
        seed: int | None = None,
        max_context_tokens: int | None = None,
        keep_alive_streams: bool = False,
    ) -> None:
        if dialect is None:
            dialect = ChatDialect("deepseek")
        self.dialect: Dialect = dialect
        self.api_key = api_key
        # Assign None to accept any model.
        self.models: set[str] | None = set(models if models is not None else dialect.default_models)
        self.responder: Responder | None = None
        self.max_context_tokens = max_context_tokens
        self.requests: list[RecordedRequest] = []
        self._queue: deque[ScriptItem] = deque()
        self._lock = threading.Lock()
        self._wire = Wire(stop=threading.Event(), cache=PromptCache(), ids=IdSource(seed))
        # The lifecycle, the port and the connection count are the loopback server's.
        super().__init__(
            self, port=port, keep_alive_streams=keep_alive_streams, stop=self._wire.stop
        )

    @property
    def flavour(self) -> str:
        return self.dialect.flavour

    # ---------------------------------------------------------------- scripting

    def enqueue(self, *items: ScriptItem) -> None:
        for item in items:
            if not isinstance(item, Reply | HttpError | Stall | Verbatim):
                raise TypeError(f"cannot script {item!r}")
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        """Scripted items not consumed yet."""
        with self._lock:
            return len(self._queue)

    def reset_cache(self) -> None:
        self._wire.cache.reset()

    # ---------------------------------------------------------------- request handling

    def handle_request(self, h: RequestHandler) -> None:
        """Read, record (status 0 until decided), route, validate, answer."""
        request = read_request(h)
        if request is None:
            return
        parsed = request.parsed
        record = RecordedRequest(
            path=h.path,
            headers=request.headers,
            body=request.body,
            json=parsed if isinstance(parsed, dict) else None,
            status=0,
        )
        with self._lock:
            index = len(self.requests)
            self.requests.append(record)

        dialect = self.dialect
        outcome: ScriptItem
        ctx: RequestContext | None = None
        route = urlsplit(h.path).path.rstrip("/") or "/"
        if h.command == "GET" and route in MODELS_PATHS:
            # Model discovery (/model): the accepted ids, in the OpenAI list shape
            # every preset's endpoint answers (auth still applies).
            rejection = None
            if self.api_key is not None:
                rejection = dialect.authenticate(request.headers, self.api_key)
            with self._lock:
                self.requests[index] = replace(
                    record, status=rejection.status if rejection else 200
                )
            if rejection is not None:
                dialect.send_error(h, rejection, self._wire)
                return
            listed = sorted(self.models or ())
            payload = {"object": "list", "data": [{"id": m, "object": "model"} for m in listed]}
            send_json_body(h, self._wire.stop, json.dumps(payload).encode(), delay=0)
            return
        if h.command != "POST" or route not in dialect.routes:
            outcome = dialect.fixture_error(404, f"Not Found: {h.command} {route}")
        else:
            rejection = None
            if self.api_key is not None:
                rejection = dialect.authenticate(request.headers, self.api_key)
            if rejection is None:
                rejection = dialect.validate(request, self.models)
            if rejection is None and self.max_context_tokens is not None:
                assert isinstance(parsed, dict)
                rejection = dialect.context_limit(parsed, self.max_context_tokens)
            if rejection is not None:
                outcome = rejection
            else:
                assert isinstance(parsed, dict)
                ctx = dialect.context(parsed)
                outcome = self._next_item(record)

        status = outcome.status if isinstance(outcome, HttpError | Verbatim) else 200
        with self._lock:
            self.requests[index] = replace(record, status=status)

        if isinstance(outcome, HttpError):
            dialect.send_error(h, outcome, self._wire)
        elif isinstance(outcome, Verbatim):
            send_verbatim(h, self._wire.stop, outcome)
        elif isinstance(outcome, Stall):
            assert ctx is not None
            send_stall(
                h,
                self._wire.stop,
                seconds=outcome.seconds,
                keepalive_every=outcome.keepalive_every,
                content_type="text/event-stream" if ctx.stream else "application/json",
                keepalive=dialect.stream_keepalive if ctx.stream else b"\n",
            )
        else:
            assert ctx is not None
            dialect.send_reply(h, outcome, ctx, self._wire)

    def _next_item(self, record: RecordedRequest) -> ScriptItem:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        responder = self.responder
        if responder is None:
            return self.dialect.fixture_error(500, "fixture: no scripted reply")
        try:
            item = responder(record)
        except Exception as exc:
            return self.dialect.fixture_error(500, f"fixture: responder raised {exc!r}")
        if not isinstance(item, Reply | HttpError | Stall | Verbatim):
            return self.dialect.fixture_error(500, f"fixture: responder returned {item!r}")
        return item
