"""Loopback fixture server for DeepSeek / OpenAI-compatible ``/chat/completions``.

Real HTTP on 127.0.0.1 with real SSE framing, so providers, benchmarks and TUI
tests exercise the same byte paths they use against the live API. Stdlib only.

Usage::

    with FixtureServer(flavour="deepseek", api_key="sk-test") as server:
        server.enqueue(Reply(content="hi"), HttpError(429, "Rate Limit Reached", retry_after=1))
        ...  # POST {server.base_url}/chat/completions
        server.requests[0].json

Each request that passes validation consumes one scripted item (FIFO); when the
queue is empty ``server.responder`` is asked; with neither the server answers 500.
Requests rejected by validation (auth, malformed body, DeepSeek's protocol
checks) consume nothing.

Wire details follow ``wire-formats.md`` §1–§3 and §5:

* streams use ``Transfer-Encoding: chunked`` and ``Connection: close``; a
  ``drop_after`` reply closes the socket without the terminating chunk (an
  abrupt mid-body close, which httpx reports as ``RemoteProtocolError``), while
  ``error_event`` / ``garbage_line`` / :class:`Stall` end the body cleanly but
  without ``finish_reason`` or ``[DONE]``;
* non-streamed answers carry ``Content-Length`` and keep the connection open;
* a simulated DeepSeek prompt cache persists two whole "cache prefix units" per
  successful request (end of input, end of output) keyed by (model, user_id);
  a hit is the longest persisted unit that is a prefix of the rendered prompt.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import random
import string
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Literal, Protocol, Self, TypeVar
from urllib.parse import urlsplit

from reasonix_core.jsontext import dumps_utf8
from reasonix_core.testing.fixture_http import (
    _Handler,
    _HTTPServer,
    read_request,
    send_error_response,
    send_json_body,
    send_sse_stream,
    send_stall,
)

__all__ = [
    "FixtureServer",
    "HttpError",
    "RecordedRequest",
    "Reply",
    "Stall",
    "ToolCallSpec",
    "count_tokens",
    "render_prompt",
]

Flavour = Literal["deepseek", "openai"]

DEEPSEEK_MODELS = frozenset({"deepseek-flash", "deepseek-v4-pro"})
OPENAI_MODELS = frozenset({"gpt-test", "deepseek-flash", "deepseek-v4-pro"})
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra")
MAX_OUTPUT_TOKENS = 393216
DEEPSEEK_FINGERPRINT = "fp_8b330d02d0_prod0820_fp8_kvcache_20260402"
CHAT_PATHS = frozenset({"/chat/completions", "/v1/chat/completions"})

MSG_REASONING_REQUIRED = (
    "The reasoning_content in the thinking mode must be passed back to the API."
)
MSG_TOOL_WITHOUT_CALL = (
    "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
)
MSG_MISSING_TOOL_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)
MSG_TOOL_CHOICE = "Thinking mode does not support this tool_choice"
MSG_DESERIALIZE = "Failed to deserialize the JSON body into the target type: "
MSG_OPENAI_BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means "
    "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
    "payload, but what was sent was not valid JSON.)"
)

_ALNUM = string.ascii_letters + string.digits


# --------------------------------------------------------------------------- script items


@dataclass(frozen=True, slots=True)
class ToolCallSpec:
    """One tool call the fixture "model" makes; ``arguments`` is streamed verbatim."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(slots=True, kw_only=True)
class Reply:
    """A scripted 200 answer (streamed or not, as the request asked)."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    # None: "tool_calls" when there are tool calls, else "stop". Any string goes.
    finish_reason: str | None = None
    chunk_size: int = 8  # characters per content / reasoning delta (<= 0: one delta)
    arg_chunk: int = 5  # characters per argument fragment (<= 0: one fragment)
    interleave_tool_calls: bool = False
    keepalives: int = 0  # ": keep-alive" comments before the first data event
    delay: float = 0.0  # seconds between data events
    drop_after: int | None = None  # close abruptly after this many data events
    error_event: dict[str, Any] | None = None  # in-band `data: {"error": ...}` then close
    garbage_line: str | None = None  # raw line after the content, then close
    usage: dict[str, Any] | None = None  # replaces the computed usage object
    model: str | None = None  # `model` field of the chunks (default: the requested one)
    omit_delta_on_finish: bool = False


@dataclass(frozen=True, slots=True)
class HttpError:
    """A scripted (or validation) HTTP error with DeepSeek's JSON error envelope."""

    status: int
    message: str
    type: str = "invalid_request_error"
    retry_after: str | float | None = None
    headers: dict[str, str] | None = None
    # Extensions: the envelope's `code` (None -> null) and a raw body that
    # replaces the envelope entirely (e.g. a proxy's HTML 502 page).
    code: str | None = "invalid_request_error"
    body: bytes | None = None

    def envelope(self) -> bytes:
        if self.body is not None:
            return self.body
        return _dumps(
            {
                "error": {
                    "message": self.message,
                    "type": self.type,
                    "param": None,
                    "code": self.code,
                }
            }
        ).encode()


@dataclass(frozen=True, slots=True)
class Stall:
    """200 + stream headers, no data (optionally keep-alives), then close after ``seconds``."""

    seconds: float
    keepalive_every: float = 0.0


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as received. ``status`` is 0 while the request is still being decided."""

    path: str
    headers: dict[str, str]
    body: bytes
    json: dict[str, Any] | None
    status: int


ScriptItem = Reply | HttpError | Stall
Responder = Callable[[RecordedRequest], ScriptItem]


# --------------------------------------------------------------------------- prompt rendering


def count_tokens(text: str) -> int:
    """The fixture's tokenizer: one token per 4 UTF-8 bytes, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


def _bytes_to_tokens(n: int) -> int:
    return (n + 3) // 4


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _data_event(payload: Any) -> bytes:
    """One unnamed SSE event (``data: <json>``), as Chat Completions streams them.

    A lone surrogate in a scripted reply goes out as a ``\\ud800`` escape, as a
    real server's JSON encoder writes it, so the client decodes it back to the
    same lone surrogate (hostile-model tests rely on that)."""
    return b"data: " + dumps_utf8(payload, separators=(",", ":")).encode("utf-8") + b"\n\n"


def thinking_enabled(body: dict[str, Any]) -> bool:
    """DeepSeek: thinking is on unless disabled explicitly or via effort ``none``."""
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "disabled":
        return False
    return body.get("reasoning_effort") != "none"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        out: list[str] = []
        for part in value:
            if isinstance(part, dict) and part.get("type") == "text":
                out.append(str(part.get("text") or ""))
            else:
                out.append(_dumps(part))
        return "".join(out)
    return _dumps(value)


def _render_message(message: Any, with_reasoning: bool) -> str:
    if not isinstance(message, dict):
        return "<|invalid|>" + _dumps(message)
    role = str(message.get("role"))
    out = [f"<|{role}|>"]
    if role == "tool":
        out.append(_as_text(message.get("tool_call_id")) + "<|sep|>")
    if role == "assistant" and with_reasoning:
        out.append("<think>" + _as_text(message.get("reasoning_content")) + "</think>")
    out.append(_as_text(message.get("content")))
    calls = message.get("tool_calls") if role == "assistant" else None
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                out.append("<|tool_call|>" + _dumps(call))
                continue
            fn = call.get("function")
            fn = fn if isinstance(fn, dict) else {}
            out.append(
                "<|tool_call|>"
                + _as_text(call.get("id"))
                + "<|sep|>"
                + _as_text(fn.get("name"))
                + "<|sep|>"
                + _as_text(fn.get("arguments"))
            )
    return "".join(out)


def render_prompt(body: dict[str, Any], *, thinking: bool | None = None) -> str:
    """What the fixture "model" sees: tools (received key order kept), then messages.

    Assistant messages render as ``<|assistant|><think>reasoning</think>content``
    plus their tool calls (id, name, raw arguments); the ``<think>`` part is only
    present when the request has ``tools`` and thinking is on (DeepSeek drops
    replayed reasoning otherwise). Tool messages render their ``tool_call_id``.
    ``thinking=None`` derives the mode from the body (DeepSeek rules).
    """
    if thinking is None:
        thinking = thinking_enabled(body)
    tools = body.get("tools")
    with_reasoning = bool(tools) and thinking
    out: list[str] = []
    if isinstance(tools, list) and tools:
        out.append("<|tools|>" + "\n".join(_dumps(tool) for tool in tools) + "<|/tools|>")
    messages = body.get("messages")
    if isinstance(messages, list):
        out.extend(_render_message(m, with_reasoning) for m in messages)
    return "".join(out)


# --------------------------------------------------------------------------- prompt cache


# DeepSeek also persists a prefix that several requests share as a unit of its
# own (wire-formats.md §3.1 rule 2: "A+B then A+C misses, then A+D hits A").
# The fixture keeps the last few prompts to find such shared prefixes.
SHARED_PREFIX_HISTORY = 8
SHARED_PREFIX_MIN_BYTES = 256


class _CacheSpace:
    __slots__ = ("digests", "lengths", "recent")

    def __init__(self) -> None:
        self.lengths: list[int] = []  # sorted distinct unit lengths (bytes)
        self.digests: dict[int, set[bytes]] = {}
        self.recent: deque[bytes] = deque(maxlen=SHARED_PREFIX_HISTORY)


def _common_prefix_length(a: bytes, b: bytes) -> int:
    """Longest common prefix by binary search over C-speed slice comparisons."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class _PromptCache:
    """Whole cache prefix units stored as (byte length, hash); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spaces: dict[tuple[str, str], _CacheSpace] = {}

    def reset(self) -> None:
        with self._lock:
            self._spaces.clear()

    def lookup_and_persist(self, space_key: tuple[str, str], prompt: bytes) -> int:
        """Length of the longest persisted unit prefixing ``prompt``; then persist ``prompt``."""
        with self._lock:
            space = self._spaces.setdefault(space_key, _CacheSpace())
            best = 0
            hasher = hashlib.blake2b(digest_size=16)
            view = memoryview(prompt)
            pos = 0
            for length in space.lengths:
                if length > len(prompt):
                    break
                hasher.update(view[pos:length])
                pos = length
                if length and hasher.copy().digest() in space.digests[length]:
                    best = length
            self._add(space, prompt)
            shared = max((_common_prefix_length(prompt, old) for old in space.recent), default=0)
            if shared >= SHARED_PREFIX_MIN_BYTES and shared > best:
                self._add(space, prompt[:shared])
            space.recent.append(prompt)
            return best

    def persist(self, space_key: tuple[str, str], unit: bytes) -> None:
        with self._lock:
            self._add(self._spaces.setdefault(space_key, _CacheSpace()), unit)

    @staticmethod
    def _add(space: _CacheSpace, unit: bytes) -> None:
        length = len(unit)
        bucket = space.digests.get(length)
        if bucket is None:
            bucket = space.digests[length] = set()
            bisect.insort(space.lengths, length)
        bucket.add(_digest(unit))


# --------------------------------------------------------------------------- helpers


def _serde_desc(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, list):
        return "sequence"
    if isinstance(value, dict):
        return "map"
    return "null"


def _split(text: str, size: int) -> list[str]:
    if not text:
        return []
    if size <= 0:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(slots=True)
class _Ctx:
    """Everything derived from a validated request."""

    body: dict[str, Any]
    model: str
    stream: bool
    include_usage: bool
    thinking: bool
    has_tools: bool


# --------------------------------------------------------------------------- scripted server base


class _StreamFlag(Protocol):
    stream: bool


CtxT = TypeVar("CtxT", bound=_StreamFlag)


class ScriptedFixtureServer(Generic[CtxT]):
    """Lifecycle, scripting and the request pipeline every fixture server shares.

    Each request is read, recorded (``requests``, status 0 until decided) and
    routed: a path outside ``ROUTES`` is a 404; then ``_validate`` and, with
    ``max_context_tokens`` set, ``_context_limit`` may reject it. Only a request
    that passes consumes a scripted item (FIFO, else ``responder``, else a 500),
    so tests can script exactly the answers their valid requests get.

    A wire format subclass supplies ``ROUTES``, the validation, ``_context``
    (what its answers need from the body), ``_fixture_error`` (the envelope of
    the fixture's own 404/500), ``_send_http_error`` and ``_send_reply``.
    """

    ROUTES: ClassVar[frozenset[str]] = frozenset()
    # The flavours a subclass speaks, each with the model ids it accepts by default.
    DEFAULT_MODELS: ClassVar[dict[str, frozenset[str]]] = {}
    THREAD_NAME: ClassVar[str] = "fixture-server"
    # What a Stall sends now and then on a stream (non-streamed stalls send "\n").
    STREAM_KEEPALIVE: ClassVar[bytes] = b": keep-alive\n\n"

    def __init__(
        self,
        flavour: str,
        api_key: str | None,
        *,
        models: Iterable[str] | None,
        port: int,
        seed: int | None,
        max_context_tokens: int | None,
    ) -> None:
        if flavour not in self.DEFAULT_MODELS:
            raise ValueError(f"unknown flavour {flavour!r}")
        self.flavour = flavour
        self.api_key = api_key
        # Assign None to accept any model.
        self.models: set[str] | None = set(
            models if models is not None else self.DEFAULT_MODELS[flavour]
        )
        self.responder: Responder | None = None
        # When set, a request whose rendered prompt plus its output budget
        # exceeds this many tokens is refused with the provider's "context
        # length" error (a validation rejection: it consumes no scripted item).
        self.max_context_tokens = max_context_tokens
        self.requests: list[RecordedRequest] = []
        self._queue: deque[ScriptItem] = deque()
        self._lock = threading.Lock()
        self._cache = _PromptCache()
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self._port = port
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stop.clear()
        httpd = _HTTPServer(("127.0.0.1", self._port), self)
        thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"{self.THREAD_NAME}-{httpd.server_port}",
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
        self._stop.set()
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

    # ---------------------------------------------------------------- scripting

    def enqueue(self, *items: ScriptItem) -> None:
        for item in items:
            if not isinstance(item, Reply | HttpError | Stall):
                raise TypeError(f"cannot script {item!r}")
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        """Scripted items not consumed yet."""
        with self._lock:
            return len(self._queue)

    def reset_cache(self) -> None:
        self._cache.reset()

    # ---------------------------------------------------------------- request handling

    def _handle(self, h: _Handler) -> None:
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

        outcome: ScriptItem
        ctx: CtxT | None = None
        route = urlsplit(h.path).path.rstrip("/") or "/"
        if h.command != "POST" or route not in self.ROUTES:
            outcome = self._fixture_error(404, f"Not Found: {h.command} {route}")
        else:
            rejection = self._validate(request.headers, parsed, request.parse_error)
            if rejection is None and self.max_context_tokens is not None:
                assert isinstance(parsed, dict)
                rejection = self._context_limit(parsed)
            if rejection is not None:
                outcome = rejection
            else:
                assert isinstance(parsed, dict)
                ctx = self._context(parsed)
                outcome = self._next_item(record)

        status = outcome.status if isinstance(outcome, HttpError) else 200
        with self._lock:
            self.requests[index] = replace(record, status=status)

        if isinstance(outcome, HttpError):
            self._send_http_error(h, outcome)
        elif isinstance(outcome, Stall):
            assert ctx is not None
            self._send_stall(h, outcome, ctx)
        else:
            assert ctx is not None
            self._send_reply(h, outcome, ctx)

    def _next_item(self, record: RecordedRequest) -> ScriptItem:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        responder = self.responder
        if responder is None:
            return self._fixture_error(500, "fixture: no scripted reply")
        try:
            item = responder(record)
        except Exception as exc:
            return self._fixture_error(500, f"fixture: responder raised {exc!r}")
        if not isinstance(item, Reply | HttpError | Stall):
            return self._fixture_error(500, f"fixture: responder returned {item!r}")
        return item

    def _send_stall(self, h: _Handler, stall: Stall, ctx: CtxT) -> None:
        send_stall(
            h,
            self._stop,
            seconds=stall.seconds,
            keepalive_every=stall.keepalive_every,
            content_type="text/event-stream" if ctx.stream else "application/json",
            keepalive=self.STREAM_KEEPALIVE if ctx.stream else b"\n",
        )

    # ---------------------------------------------------------------- wire format hooks

    def _validate(
        self, headers: dict[str, str], parsed: Any, parse_error: str | None
    ) -> HttpError | None:
        """Auth and body checks; the error to answer with, or None to go on."""
        raise NotImplementedError

    def _context_limit(self, body: dict[str, Any]) -> HttpError | None:
        """The provider's answer to a prompt over ``max_context_tokens``, or None."""
        raise NotImplementedError

    def _context(self, body: dict[str, Any]) -> CtxT:
        raise NotImplementedError

    def _fixture_error(self, status: int, message: str) -> HttpError:
        """An error of the fixture itself (unknown route, nothing scripted)."""
        raise NotImplementedError

    def _send_http_error(self, h: _Handler, err: HttpError) -> None:
        raise NotImplementedError

    def _send_reply(self, h: _Handler, reply: Reply, ctx: CtxT) -> None:
        raise NotImplementedError


# --------------------------------------------------------------------------- the server


class FixtureServer(ScriptedFixtureServer[_Ctx]):
    """A scripted ``/chat/completions`` endpoint on 127.0.0.1 (see module docstring).

    ``flavour`` is ``"deepseek"`` (strict DeepSeek validation, thinking on by
    default, usage on the finish chunk) or ``"openai"`` (no thinking, separate
    usage chunk). ``api_key=None`` disables the auth check. ``models`` replaces the
    default set of accepted model ids; assign ``server.models = None`` to accept
    any model. ``seed`` makes generated ids reproducible.
    """

    ROUTES = CHAT_PATHS
    DEFAULT_MODELS: ClassVar[dict[str, frozenset[str]]] = {
        "deepseek": DEEPSEEK_MODELS,
        "openai": OPENAI_MODELS,
    }
    flavour: Flavour

    def __init__(
        self,
        flavour: Flavour = "deepseek",
        api_key: str | None = "sk-test",
        *,
        models: Iterable[str] | None = None,
        port: int = 0,
        seed: int | None = None,
        max_context_tokens: int | None = None,
    ) -> None:
        super().__init__(
            flavour,
            api_key,
            models=models,
            port=port,
            seed=seed,
            max_context_tokens=max_context_tokens,
        )

    def _fixture_error(self, status: int, message: str) -> HttpError:
        kind = "server_error" if status >= 500 else "invalid_request_error"
        return HttpError(status, message, type=kind, code=None)

    def _context(self, body: dict[str, Any]) -> _Ctx:
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = (
            stream and isinstance(options, dict) and options.get("include_usage") is True
        )
        thinking = self.flavour == "deepseek" and thinking_enabled(body)
        return _Ctx(
            body=body,
            model=str(body.get("model")),
            stream=stream,
            include_usage=include_usage,
            thinking=thinking,
            has_tools=bool(body.get("tools")),
        )

    # ---------------------------------------------------------------- validation

    def _context_limit(self, body: dict[str, Any]) -> HttpError | None:
        """DeepSeek's answer to a request longer than the model's context."""
        limit = self.max_context_tokens
        assert limit is not None
        thinking = self.flavour == "deepseek" and thinking_enabled(body)
        prompt = count_tokens(render_prompt(body, thinking=thinking))
        max_tokens = body.get("max_tokens")
        completion = max_tokens if isinstance(max_tokens, int) else 0
        if prompt + completion <= limit:
            return None
        return _deepseek_context_error(limit, prompt, completion)

    def _validate(
        self, headers: dict[str, str], parsed: Any, parse_error: str | None
    ) -> HttpError | None:
        rejection = self._auth(headers)
        if rejection is not None:
            return rejection
        if self.flavour == "deepseek":
            return self._validate_deepseek(parsed, parse_error)
        return self._validate_openai(parsed, parse_error)

    def _auth(self, headers: dict[str, str]) -> HttpError | None:
        """The Bearer key check, worded as the flavour words its 401 (Chat and Responses)."""
        if self.api_key is None:
            return None
        key = self._presented_key(headers)
        if key == self.api_key:
            return None
        if self.flavour == "deepseek":
            return HttpError(
                401,
                f"Authentication Fails, Your api key: ****{(key or '')[-4:]} is invalid",
                type="authentication_error",
            )
        if not key:
            message = (
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
            )
        else:
            message = f"Incorrect API key provided: {key[:3]}****{key[-4:]}."
        return HttpError(401, message, code="invalid_api_key")

    def _presented_key(self, headers: dict[str, str]) -> str | None:
        auth = headers.get("authorization")
        if auth is None:
            return None
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer":
            return ""
        return token.strip()

    def _validate_deepseek(self, parsed: Any, parse_error: str | None) -> HttpError | None:
        if parse_error is not None:
            return HttpError(400, MSG_DESERIALIZE + parse_error)
        if not isinstance(parsed, dict):
            return _unprocessable(
                f"invalid type: {_serde_desc(parsed)}, expected struct ChatCompletionRequest"
            )
        body: dict[str, Any] = parsed
        # ---- type-level checks (422, like serde + axum's JsonDataError)
        model = body.get("model")
        if model is None:
            return _unprocessable("missing field `model`")
        if not isinstance(model, str):
            return _unprocessable(f"model: invalid type: {_serde_desc(model)}, expected a string")
        messages = body.get("messages")
        if messages is None:
            return _unprocessable("missing field `messages`")
        if not isinstance(messages, list):
            return _unprocessable(
                f"messages: invalid type: {_serde_desc(messages)}, expected a sequence"
            )
        for i, message in enumerate(messages):
            problem = _message_shape_problem(message)
            if problem is not None:
                return _unprocessable(f"messages[{i}]: {problem}")
        thinking = body.get("thinking")
        if thinking is not None:
            if not isinstance(thinking, dict):
                return _unprocessable(
                    f"thinking: invalid type: {_serde_desc(thinking)}, "
                    "expected struct ThinkingOptions"
                )
            kind = thinking.get("type")
            if kind is None:
                return _unprocessable("thinking: missing field `type`")
            if kind not in ("enabled", "disabled"):
                return _unprocessable(
                    f"thinking.type: unknown variant `{kind}`, expected `enabled` or `disabled`"
                )
        effort = body.get("reasoning_effort")
        if effort is not None:
            expected = ", ".join(f"`{e}`" for e in REASONING_EFFORTS)
            if not isinstance(effort, str):
                return _unprocessable(
                    f"reasoning_effort: invalid type: {_serde_desc(effort)}, "
                    "expected enum ReasoningEffort"
                )
            if effort not in REASONING_EFFORTS:
                return _unprocessable(
                    f"reasoning_effort: unknown variant `{effort}`, expected one of {expected}"
                )
        n = body.get("n")
        if n is not None and (not isinstance(n, int) or isinstance(n, bool)):
            return _unprocessable(f"n: invalid type: {_serde_desc(n)}, expected u32")
        max_tokens = body.get("max_tokens")
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool)
        ):
            return _unprocessable(
                f"max_tokens: invalid type: {_serde_desc(max_tokens)}, expected u32"
            )
        # ---- semantic checks (400)
        if self.models is not None and model not in self.models:
            return HttpError(400, "Model Not Exist")
        if n is not None and n != 1:
            return HttpError(400, "Invalid n value (currently only n = 1 is supported)")
        if not messages:
            return HttpError(400, "Invalid request: messages must not be empty")
        if max_tokens is not None and not 1 <= max_tokens <= MAX_OUTPUT_TOKENS:
            return HttpError(
                400,
                "Invalid max_tokens value, the valid range of max_tokens is "
                f"[1, {MAX_OUTPUT_TOKENS}]",
            )
        if body.get("stream_options") is not None and body.get("stream") is not True:
            return HttpError(400, "stream_options should be set along with stream = true")
        on = thinking_enabled(body)
        tool_choice = body.get("tool_choice")
        if on and (tool_choice == "required" or isinstance(tool_choice, dict)):
            return HttpError(400, MSG_TOOL_CHOICE)
        problem = _sequence_problem(messages)
        if problem is not None:
            return HttpError(400, problem)
        if on and body.get("tools"):
            for message in messages:
                if message.get("role") == "assistant" and message.get("reasoning_content") is None:
                    return HttpError(400, MSG_REASONING_REQUIRED)
        return None

    def _validate_openai(self, parsed: Any, parse_error: str | None) -> HttpError | None:
        if parse_error is not None or not isinstance(parsed, dict):
            return HttpError(400, MSG_OPENAI_BAD_JSON, code=None)
        body: dict[str, Any] = parsed
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return HttpError(400, "you must provide a model parameter", code=None)
        messages = body.get("messages")
        if not isinstance(messages, list):
            return HttpError(400, "Missing required parameter: 'messages'.", code=None)
        if not messages:
            return HttpError(
                400,
                "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                code="empty_array",
            )
        for i, message in enumerate(messages):
            problem = _message_shape_problem(message)
            if problem is not None:
                return HttpError(400, f"Invalid 'messages[{i}]': {problem}", code=None)
        if self.models is not None and model not in self.models:
            return HttpError(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                code="model_not_found",
            )
        if body.get("stream_options") is not None and body.get("stream") is not True:
            return HttpError(
                400,
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                code=None,
            )
        problem = _sequence_problem(messages)
        if problem is not None:
            return HttpError(400, problem, code=None)
        return None

    # ---------------------------------------------------------------- responses

    def _send_http_error(self, h: _Handler, err: HttpError) -> None:
        send_error_response(
            h, err.status, err.envelope(), retry_after=err.retry_after, headers=err.headers
        )

    def _new_ids(self) -> tuple[str, int]:
        with self._lock:
            if self.flavour == "deepseek":
                cid = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
            else:
                cid = "chatcmpl-" + "".join(self._rng.choices(_ALNUM, k=29))
        return cid, int(time.time())

    def _call_ids(self, calls: list[ToolCallSpec]) -> list[str]:
        ids: list[str] = []
        with self._lock:
            for i, spec in enumerate(calls):
                if spec.id is not None:
                    ids.append(spec.id)
                elif self.flavour == "deepseek":
                    ids.append(f"call_{i:02d}_" + "".join(self._rng.choices(_ALNUM, k=24)))
                else:
                    ids.append("call_" + "".join(self._rng.choices(_ALNUM, k=24)))
        return ids

    def _usage(
        self, ctx: _Ctx, prompt_bytes: int, hit_bytes: int, reasoning: str, output: str
    ) -> dict[str, Any]:
        prompt = _bytes_to_tokens(prompt_bytes)
        hit = _bytes_to_tokens(hit_bytes)
        completion = max(1, count_tokens(output))
        reasoning_tokens = count_tokens(reasoning)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if self.flavour == "deepseek":
            usage["prompt_tokens_details"] = {"cached_tokens": hit}
            if ctx.thinking:
                usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
            usage["prompt_cache_hit_tokens"] = hit
            usage["prompt_cache_miss_tokens"] = prompt - hit
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": hit, "audio_tokens": 0}
            usage["completion_tokens_details"] = {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            }
        return usage

    def _send_reply(self, h: _Handler, reply: Reply, ctx: _Ctx) -> None:
        deepseek = self.flavour == "deepseek"
        reasoning = reply.reasoning if ctx.thinking else ""
        call_ids = self._call_ids(reply.tool_calls)
        finish_reason = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

        # ---- simulated prompt cache and usage
        space = (ctx.model, str(ctx.body.get("user_id") or ""))
        with_reasoning = ctx.has_tools and ctx.thinking
        prompt = render_prompt(ctx.body, thinking=ctx.thinking).encode("utf-8", "surrogatepass")
        hit_bytes = self._cache.lookup_and_persist(space, prompt)
        assistant = {
            "role": "assistant",
            "content": reply.content,
            "reasoning_content": reasoning,
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": s.name, "arguments": s.arguments},
                }
                for cid, s in zip(call_ids, reply.tool_calls, strict=True)
            ],
        }
        output_unit = prompt + _render_message(assistant, with_reasoning).encode(
            "utf-8", "surrogatepass"
        )
        generated = reasoning + reply.content + "".join(s.arguments for s in reply.tool_calls)
        usage = (
            reply.usage
            if reply.usage is not None
            else self._usage(ctx, len(prompt), hit_bytes, reasoning, generated)
        )

        def persist_output() -> None:
            self._cache.persist(space, output_unit)

        chunk_id, created = self._new_ids()
        model = reply.model if reply.model is not None else ctx.model
        if not ctx.stream:
            self._send_completion(
                h,
                reply,
                ctx,
                chunk_id,
                created,
                model,
                reasoning,
                call_ids,
                finish_reason,
                usage,
                persist_output,
            )
            return

        missing = object()

        def chunk(
            delta: dict[str, Any] | None, finish: str | None = None, chunk_usage: Any = missing
        ) -> dict[str, Any]:
            choice: dict[str, Any] = {"index": 0}
            if delta is not None:
                choice["delta"] = delta
            choice["logprobs"] = None
            choice["finish_reason"] = finish
            out: dict[str, Any] = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": DEEPSEEK_FINGERPRINT if deepseek else None,
                "choices": [choice],
            }
            if chunk_usage is not missing:
                out["usage"] = chunk_usage
            elif ctx.include_usage:
                out["usage"] = None
            return out

        events: list[dict[str, Any]] = []
        if deepseek:
            if ctx.thinking:
                events.append(
                    chunk({"role": "assistant", "content": None, "reasoning_content": ""})
                )
            else:
                events.append(chunk({"role": "assistant", "content": ""}))
            for piece in _split(reasoning, reply.chunk_size):
                events.append(chunk({"content": None, "reasoning_content": piece}))
            for piece in _split(reply.content, reply.chunk_size):
                if ctx.thinking:
                    events.append(chunk({"content": piece, "reasoning_content": None}))
                else:
                    events.append(chunk({"content": piece}))
        else:
            events.append(chunk({"role": "assistant", "content": "", "refusal": None}))
            for piece in _split(reply.content, reply.chunk_size):
                events.append(chunk({"content": piece}))
        sequences: list[list[dict[str, Any]]] = []
        for i, (cid, spec) in enumerate(zip(call_ids, reply.tool_calls, strict=True)):
            head = {
                "index": i,
                "id": cid,
                "type": "function",
                "function": {"name": spec.name, "arguments": ""},
            }
            seq = [chunk({"tool_calls": [head]})]
            for frag in _split(spec.arguments, reply.arg_chunk):
                seq.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
            sequences.append(seq)
        if reply.interleave_tool_calls:
            for step in range(max((len(s) for s in sequences), default=0)):
                events.extend(s[step] for s in sequences if step < len(s))
        else:
            for seq in sequences:
                events.extend(seq)

        finish_delta: dict[str, Any] | None
        if reply.omit_delta_on_finish:
            finish_delta = None
        elif deepseek:
            finish_delta = (
                {"content": "", "reasoning_content": None} if ctx.thinking else {"content": ""}
            )
        else:
            finish_delta = {}
        tail: list[dict[str, Any]]
        if deepseek:
            tail = [chunk(finish_delta, finish_reason, usage)]
        else:
            tail = [chunk(finish_delta, finish_reason)]
            if ctx.include_usage:
                usage_chunk = chunk(None, chunk_usage=usage)
                usage_chunk["choices"] = []
                tail.append(usage_chunk)

        send_sse_stream(
            h,
            self._stop,
            reply,
            content_type="text/event-stream",
            preamble=[b": keep-alive\n\n"] * max(0, reply.keepalives),
            events=[_data_event(event) for event in events],
            error_event=(
                _data_event({"error": reply.error_event}) if reply.error_event is not None else None
            ),
            tail=[_data_event(event) for event in tail],
            trailer=b"data: [DONE]\n\n",
            before_tail=persist_output,
        )

    def _send_completion(
        self,
        h: _Handler,
        reply: Reply,
        ctx: _Ctx,
        completion_id: str,
        created: int,
        model: str,
        reasoning: str,
        call_ids: list[str],
        finish_reason: str,
        usage: dict[str, Any],
        persist_output: Callable[[], None],
    ) -> None:
        deepseek = self.flavour == "deepseek"
        message: dict[str, Any] = {"role": "assistant"}
        if deepseek:
            message["content"] = reply.content
            if ctx.thinking:
                message["reasoning_content"] = reasoning
        else:
            message["content"] = reply.content if (reply.content or not reply.tool_calls) else None
            message["refusal"] = None
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "index": i,
                    "id": cid,
                    "type": "function",
                    "function": {"name": spec.name, "arguments": spec.arguments},
                }
                for i, (cid, spec) in enumerate(zip(call_ids, reply.tool_calls, strict=True))
            ]
        payload: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "system_fingerprint": DEEPSEEK_FINGERPRINT if deepseek else None,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": usage,
        }
        complete = reply.error_event is None and reply.garbage_line is None
        if reply.error_event is not None:
            data = _dumps({"error": reply.error_event}).encode()
        elif reply.garbage_line is not None:
            data = reply.garbage_line.encode("utf-8", "surrogatepass")
        else:
            data = dumps_utf8(payload, separators=(",", ":")).encode("utf-8")
        send_json_body(
            h,
            self._stop,
            b"\n" * max(0, reply.keepalives) + data,
            delay=reply.delay,
            drop_after=reply.drop_after,
            before_body=persist_output if complete else None,
        )


# --------------------------------------------------------------------------- validation helpers


def _deepseek_context_error(limit: int, prompt: int, completion: int) -> HttpError:
    """DeepSeek's 400 for a prompt plus output budget over the context length."""
    return HttpError(
        400,
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
        "completion). Please reduce the length of the messages or completion.",
    )


def _unprocessable(detail: str) -> HttpError:
    return HttpError(422, MSG_DESERIALIZE + detail)


def _message_shape_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return f"invalid type: {_serde_desc(message)}, expected internally tagged enum Message"
    role = message.get("role")
    if role is None:
        return "missing field `role`"
    if role not in ("system", "user", "assistant", "tool"):
        return f"unknown variant `{role}`, expected one of `system`, `user`, `assistant`, `tool`"
    if role in ("system", "user", "tool") and "content" not in message:
        return "missing field `content`"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "missing field `tool_call_id`"
    if role == "assistant":
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                return f"tool_calls: invalid type: {_serde_desc(calls)}, expected a sequence"
            for j, call in enumerate(calls):
                if not isinstance(call, dict):
                    return f"tool_calls[{j}]: invalid type: {_serde_desc(call)}, expected struct"
                if not isinstance(call.get("id"), str):
                    return f"tool_calls[{j}]: missing field `id`"
                fn = call.get("function")
                if not isinstance(fn, dict):
                    return f"tool_calls[{j}]: missing field `function`"
                if not isinstance(fn.get("name"), str):
                    return f"tool_calls[{j}].function: missing field `name`"
                if not isinstance(fn.get("arguments"), str):
                    return f"tool_calls[{j}].function: missing field `arguments`"
    return None


def _sequence_problem(messages: list[Any]) -> str | None:
    """Tool results must answer the nearest preceding assistant's tool calls, all of them."""
    open_ids: list[str] | None = None
    answered: set[str] = set()

    def unanswered() -> str | None:
        if open_ids is None:
            return None
        missing = [cid for cid in open_ids if cid not in answered]
        return MSG_MISSING_TOOL_RESULTS + ", ".join(missing) if missing else None

    for message in messages:
        role = message.get("role")
        if role == "tool":
            if open_ids is None or message.get("tool_call_id") not in open_ids:
                return MSG_TOOL_WITHOUT_CALL
            answered.add(message["tool_call_id"])
            continue
        problem = unanswered()
        if problem is not None:
            return problem
        open_ids = None
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            open_ids = [call["id"] for call in calls]
            answered = set()
    return unanswered()
