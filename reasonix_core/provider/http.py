"""The HTTP base every built-in provider kind shares.

:class:`HttpProvider` owns what the ``openai``, ``anthropic`` and ``responses``
kinds have in common: construction from a :class:`ProviderConfig`, ``prepare``
(the frozen bytes and headers the retry path replays), one lazily created
client, the POST of those bytes and the mapping of transport and HTTP failures
to :class:`ProviderError`. A kind supplies only its path (``endpoint``), its
headers, its body (``build_body``), the effort levels it accepts (``efforts``)
and its reading of one stream's events (``event_parser``, an
:class:`EventParser`); the stream loop around it (the idle watchdog, SSE framing
and JSON, draining the rest so the connection is reused) is written once here
(``_parse``). The helpers below (``count``,
``make_usage``) are what the kinds' usage parsers share.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from reasonix_core.efforts import DISABLED_EFFORTS
from reasonix_core.errors import ProviderError, StreamInterrupted
from reasonix_core.jsontext import dumps_utf8
from reasonix_core.provider.base import Chunk, PreparedRequest, Request, StreamEnd
from reasonix_core.provider.sse import SseEvent, iter_sse
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# Finish reasons that mean the server cut generation short: transient, retried.
TRANSIENT_FINISH = frozenset({"insufficient_system_resource", "aborted"})
# How long, and for how many events, a finished stream's remainder is read (see
# HttpProvider.drain).
DRAIN_SECONDS = 0.5
DRAIN_EVENTS = 16


def encode_body(value: object) -> bytes:
    """The request body's bytes: compact JSON, UTF-8 kept as is."""
    # dumps_utf8: a lone surrogate the model sent earlier must not make the request unsendable.
    return dumps_utf8(value, separators=(",", ":")).encode()


class EventParser:
    """A kind's reading of one stream's events (a new one for every request).

    The shared loop (:meth:`HttpProvider._parse`) hands it each event's JSON
    payload in order and yields what :meth:`feed` returns; once :attr:`finished`
    is set it drains the stream's remainder and asks :meth:`end` for the final
    chunk. :meth:`feed` and :meth:`end` raise :class:`ProviderError` for an
    in-band error and :class:`StreamInterrupted` for a stream cut short."""

    #: A data line that is no JSON and ends the stream (``[DONE]``), or None.
    sentinel: str | None = None
    #: Set once the terminal event has arrived: nothing after it is read but the drain.
    finished: bool = False

    def keepalive(self, event: str, payload: dict[str, Any]) -> bool:
        """Whether this event only keeps the stream alive (it does not reset the
        idle watchdog, which measures gaps between real events)."""
        return False

    def on_sentinel(self) -> None:
        """The sentinel line arrived; reading stops (``finished`` says whether it
        counts as the end of the answer)."""

    def feed(self, event: str, payload: dict[str, Any]) -> list[Chunk]:
        """The chunks one event adds (``event``: its SSE event name)."""
        raise NotImplementedError

    def end(self) -> StreamEnd:
        """The final chunk once reading stopped (raises if the answer is incomplete)."""
        raise NotImplementedError


class HttpProvider:
    """One vendor endpoint reached over HTTP, its answer streamed."""

    def __init__(
        self,
        config: ProviderConfig,
        api_key: str,
        *,
        stream_idle_timeout: float = 300.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = config.name
        self.config = config
        self._api_key = api_key
        self._protocol = config.effective_reasoning_protocol()
        self.stream_idle_timeout = stream_idle_timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        # Cleared once a stream is still open after its last event: from then on
        # its remainder is not waited for (see drain).
        self._drain_streams = True
        self.url = config.request_url or self.endpoint(config.base_url.rstrip("/"))

    @property
    def deepseek(self) -> bool:
        """DeepSeek's reasoning protocol (by host or ``reasoning_protocol``)."""
        return self._protocol == "deepseek"

    def takes_images(self, model: str) -> bool:
        """Whether ``model`` is sent images inline (else a note stands in for each)."""
        from reasonix_core.images import model_takes_images

        return model_takes_images(self.config, model)

    # -- what a kind supplies -------------------------------------------------

    def endpoint(self, base: str) -> str:
        """The request URL for ``base_url`` (without its trailing slash)."""
        raise NotImplementedError

    def kind_headers(self) -> list[tuple[str, str]]:
        """Headers after Content-Type and Accept, the key included (default: Bearer)."""
        return [("Authorization", f"Bearer {self._api_key}")] if self._api_key else []

    def build_body(self, request: Request) -> dict[str, Any]:
        raise NotImplementedError

    def efforts(self) -> tuple[str, ...]:
        """The reasoning-effort levels this provider accepts, ``auto`` first."""
        raise NotImplementedError

    def deepseek_thinking(self, effort: str) -> bool:
        """DeepSeek's protocol with thinking on at ``effort`` (on unless switched off)."""
        return self.deepseek and effort.lower() not in DISABLED_EFFORTS

    def calls_need_reasoning(self, request: Request) -> bool:
        """Whether the answer's tool calls must come with their reasoning: DeepSeek's
        protocol with thinking on, which every kind replays with the calls (a gateway
        model only detected as DeepSeek is not known to think, so not checked)."""
        return self.deepseek_thinking(request.effort or "auto")

    def event_parser(self) -> EventParser:
        """A fresh reader of one stream's events."""
        raise NotImplementedError

    def _observe(self, prepared: PreparedRequest, chunk: Chunk) -> None:
        """A kind's look at each chunk a request returned (default: none)."""

    def _reinterpret(self, prepared: PreparedRequest, error: ProviderError) -> ProviderError:
        """A kind's reading of an HTTP error for a request (default: as it is)."""
        return error

    # -- shared -----------------------------------------------------------------

    def prepare(self, request: Request) -> PreparedRequest:
        headers = [("Content-Type", "application/json"), ("Accept", "text/event-stream")]
        headers.extend(self.kind_headers())
        headers.extend(self.config.headers.items())
        return PreparedRequest(
            url=self.url,
            body=encode_body(self.build_body(request)),
            headers=tuple(headers),
            model=request.model,
            calls_need_reasoning=self.calls_need_reasoning(request),
        )

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            _remember_missing_sniffio()
            self._client = httpx.AsyncClient(
                transport=self._transport,
                timeout=httpx.Timeout(
                    connect=30.0, read=self.stream_idle_timeout, write=60.0, pool=30.0
                ),
                # A plain-http endpoint never makes a TLS connection (no proxy from the
                # environment, no redirects followed), so skip building a verifying TLS
                # context: loading the CA bundle is 15-30 ms of every local run.
                verify=not self._plain_http,
                trust_env=False,
            )
        return self._client

    @property
    def _plain_http(self) -> bool:
        """Whether every request goes to an ``http://`` URL (a local server)."""
        return httpx.URL(self.url).scheme == "http"

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def drain(self, events: AsyncIterator[Any]) -> None:
        """Read the rest of a stream whose last event has arrived, so its connection
        goes back to the pool.

        httpx reuses a connection only once its response body has been read to the
        end; a parser that stops at the terminal event leaves the chunked body's end
        unread, the connection is closed, and the next request pays a new TCP and TLS
        handshake (a fleet's children: one per step each). The rest is ignored. A
        server that holds the stream open past its end costs this wait once: the
        provider then stops waiting and lets such connections close."""
        if not self._drain_streams:
            return
        with anyio.move_on_after(DRAIN_SECONDS):
            try:
                for _ in range(DRAIN_EVENTS):
                    await events.__anext__()
            except (StopAsyncIteration, httpx.HTTPError, httpx.StreamError):
                return
        self._drain_streams = False

    async def _parse(self, response: httpx.Response) -> AsyncIterator[Chunk]:
        """The stream loop every kind shares around its :class:`EventParser`."""
        parser = self.event_parser()
        events = iter_sse(response.aiter_lines()).__aiter__()
        deadline, real = 0.0, True
        while True:
            if real:
                deadline = anyio.current_time() + self.stream_idle_timeout
            try:
                with anyio.fail_after(max(deadline - anyio.current_time(), 0.0)):
                    event = await events.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise ProviderError(
                    f"no data from the provider for {self.stream_idle_timeout:g} s",
                    retryable=True,
                    kind="idle_timeout",
                ) from None
            if event.event == "raw":
                raise StreamInterrupted(f"unexpected line in stream: {event.data[:200]}")
            if parser.sentinel is not None and event.data.strip() == parser.sentinel:
                parser.on_sentinel()
                if parser.finished:
                    await self.drain(events)
                break
            payload = _payload(event)
            real = not parser.keepalive(event.event, payload)
            for chunk in parser.feed(event.event, payload):
                yield chunk
            if parser.finished:
                await self.drain(events)
                break
        yield parser.end()

    async def stream(self, prepared: PreparedRequest) -> AsyncGenerator[Chunk, None]:
        client = self._http()
        try:
            async with client.stream(
                "POST", prepared.url, content=prepared.body, headers=list(prepared.headers)
            ) as response:
                if response.status_code != 200:
                    raw = await response.aread()
                    error = http_error(response.status_code, raw, response.headers)
                    raise self._reinterpret(prepared, error)
                async for chunk in self._parse(response):
                    self._observe(prepared, chunk)
                    yield chunk
        except ProviderError:
            raise
        except httpx.TimeoutException as exc:
            raise ProviderError(
                f"request timed out ({type(exc).__name__})", retryable=True, kind="timeout"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise StreamInterrupted(f"connection dropped mid-stream: {exc}") from None
        except httpx.TransportError as exc:
            raise ProviderError(
                f"cannot reach {prepared.url}: {exc}", retryable=True, kind="connection"
            ) from None


def _payload(event: SseEvent) -> dict[str, Any]:
    """An event's JSON object; anything else means the stream is broken."""
    try:
        payload = json.loads(event.data)
    except (ValueError, RecursionError):  # also too deep, or numbers too long to load
        raise StreamInterrupted(f"malformed JSON in stream: {event.data[:200]}") from None
    if not isinstance(payload, dict):
        raise StreamInterrupted(f"unexpected stream payload: {event.data[:200]}")
    return payload


# -- usage -----------------------------------------------------------------------


def count(value: object) -> int:
    """A token count from a usage report: absent, null, negative, boolean or
    non-integer values count as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def make_usage(
    prompt: int, completion: int, hit: int, *, reasoning: int = 0, miss: int | None = None
) -> Usage:
    """A :class:`Usage` from counts already read; miss defaults to prompt - hit."""
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_hit_tokens=hit,
        cache_miss_tokens=max(prompt - hit, 0) if miss is None else miss,
        reasoning_tokens=reasoning,
    )


# -- errors -----------------------------------------------------------------------


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _error_message(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):  # also too deep, or numbers too long to load
        return text[:500] or "(empty response body)"
    if isinstance(payload, dict):
        err = payload.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if payload.get("message"):
            return str(payload["message"])
    return text[:500]


def http_error(status: int, raw: bytes, headers: httpx.Headers) -> ProviderError:
    retryable = status in RETRYABLE_STATUS
    should = headers.get("x-should-retry")
    if should in ("true", "false"):
        retryable = should == "true"
    return ProviderError(
        _error_message(raw),
        status=status,
        retryable=retryable,
        retry_after=parse_retry_after(headers),
    )


__all__ = [
    "RETRYABLE_STATUS",
    "TRANSIENT_FINISH",
    "EventParser",
    "HttpProvider",
    "count",
    "encode_body",
    "http_error",
    "make_usage",
    "parse_retry_after",
]


def _remember_missing_sniffio() -> None:
    """httpcore runs ``import sniffio`` each time it takes a lock (about seven times a
    request). Without sniffio installed every one is a failed import that searches
    ``sys.path`` (about 0.1 ms each); recording the absence once makes the later ones
    fail from the module cache (``None`` in ``sys.modules`` means "not importable")."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]
