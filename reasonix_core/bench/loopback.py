"""The two loopback endpoints of e2ebench, both on :mod:`.loopback_http`.

:class:`RecordingProxy` sits between a run and the real provider: it relays each
request upstream unchanged, answers with the provider's bytes and keeps the pair
for the cassette. :class:`ReplayServer` serves a cassette: each request must equal
the recorded one after :func:`~reasonix_core.bench.cassette.normalise_body`, or it
is refused (HTTP 400, which the agent does not retry) and the mismatch is kept
with its first differing byte.

Both serve one provider kind's paths (:data:`~.loopback_http.ROUTES`) and answer
with bytes captured elsewhere; a refusal is an OpenAI-style JSON error, whose
message every kind's client reads the same way.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from reasonix_core.bench.cassette import (
    Cassette,
    CassetteRequest,
    CassetteResponse,
    Interaction,
    Mismatch,
    RunPlaces,
    compare_request,
    normalise_body,
)
from reasonix_core.bench.loopback_http import (
    ROUTES,
    LoopbackServer,
    RequestHandler,
    Verbatim,
    read_request,
    send_verbatim,
)

# Headers a proxy must not relay: hop-by-hop ones, and compression (the cassette
# keeps the plain bytes).
_DROPPED_HEADERS = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "accept-encoding", "keep-alive"}
)


# GET model listings (OpenAI shape): an endpoint that accepts any model lists none.
_MODELS_PATHS = frozenset({"/models", "/v1/models"})


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """One request a run sent: its path, headers (lower-cased names) and body."""

    path: str
    headers: dict[str, str]
    body: bytes


def refusal(status: int, message: str) -> Verbatim:
    """An error answer in the OpenAI-family envelope."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    error = {"message": message, "type": kind, "param": None, "code": None}
    return Verbatim(status, json.dumps({"error": error}, separators=(",", ":")).encode())


class _Endpoint:
    """One provider kind's paths on a :class:`LoopbackServer`, answered by ``answer``."""

    def __init__(self, kind: str, answer: Callable[[CapturedRequest], Verbatim]) -> None:
        self.routes = ROUTES.get(kind, ROUTES["openai"])
        self.answer = answer
        self.server = LoopbackServer(self)

    def route(self, path: str) -> str:
        """The path the run sends to: ``path`` when served here, else the first."""
        return path if path in self.routes else sorted(self.routes)[0]

    def handle_request(self, h: RequestHandler) -> None:
        request = read_request(h)
        if request is None:
            return
        route = urlsplit(h.path).path.rstrip("/") or "/"
        if h.command == "GET" and route in _MODELS_PATHS:
            answer = Verbatim(200, b'{"object":"list","data":[]}')
        elif h.command != "POST" or route not in self.routes:
            answer = refusal(404, f"Not Found: {h.command} {route}")
        else:
            try:
                answer = self.answer(CapturedRequest(h.path, request.headers, request.body))
            except Exception as exc:
                answer = refusal(500, f"bench loopback: {exc!r}")
        send_verbatim(h, self.server.stop_event, answer)


class ReplayServer:
    """Serves one cassette on 127.0.0.1; ``base_url`` is the provider address to use."""

    def __init__(self, cassette: Cassette, places: RunPlaces) -> None:
        self.cassette = cassette
        self.places = places
        self.served = 0
        self.mismatch: Mismatch | None = None
        self._lock = threading.Lock()
        self._endpoint = _Endpoint(cassette.kind, self._answer)
        first = cassette.interactions[0].request.path if cassette.interactions else ""
        self._path = self._endpoint.route(first)

    def _answer(self, request: CapturedRequest) -> Verbatim:
        with self._lock:
            index = self.served + 1
            if self.mismatch is not None:
                return refusal(400, f"bench replay: stopped at {self.mismatch.message}")
            body = normalise_body(request.body, self.places)
            if index > len(self.cassette.interactions):
                self.mismatch = Mismatch(
                    index,
                    None,
                    "",
                    body[:60],
                    f"request {index} is beyond the cassette's "
                    f"{len(self.cassette.interactions)} interaction(s)",
                )
                return refusal(400, f"bench replay: {self.mismatch.message}")
            recorded = self.cassette.interactions[index - 1]
            mismatch = compare_request(index, recorded.request, request.path, body)
            if mismatch is not None:
                self.mismatch = mismatch
                return refusal(400, f"bench replay: {mismatch.message}")
            self.served = index
            response = recorded.response
            return Verbatim(
                response.status,
                response.body.encode("utf-8", "surrogateescape"),
                response.content_type,
            )

    @property
    def request_url(self) -> str:
        """Where the run sends its requests: the path the recording used."""
        return self.base_url + self._path

    def unused_mismatch(self) -> Mismatch | None:
        """After the run: the first cassette interaction the run never asked for."""
        total = len(self.cassette.interactions)
        if self.mismatch is None and self.served < total:
            index = self.served + 1
            return Mismatch(
                index,
                None,
                self.cassette.interactions[index - 1].request.body[:60],
                "",
                f"the run made {self.served} request(s); the cassette has {total}",
            )
        return self.mismatch

    @property
    def base_url(self) -> str:
        return self._endpoint.server.base_url

    def __enter__(self) -> ReplayServer:
        self._endpoint.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._endpoint.server.stop()


class RecordingProxy:
    """Relays a run's requests to ``upstream`` (the provider's full request URL) and
    keeps each exchange for a cassette."""

    def __init__(self, upstream: str, kind: str, provider: dict[str, Any], places: RunPlaces):
        import httpx

        self.upstream = upstream
        self.places = places
        self.interactions: list[Interaction] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=httpx.Timeout(600.0, connect=30.0))
        self._endpoint = _Endpoint(kind, self._relay)
        self._path = self._endpoint.route(urlsplit(upstream).path.rstrip("/"))

    @property
    def request_url(self) -> str:
        """Where the run sends its requests (its provider's ``request_url``)."""
        return self.base_url + self._path

    def _relay(self, request: CapturedRequest) -> Verbatim:
        """Send the request upstream; stream a 200 back as it arrives (so the run's
        TTFT is the provider's), anything else whole. The exchange is kept once the
        answer is complete."""
        headers = {k: v for k, v in request.headers.items() if k not in _DROPPED_HEADERS}
        headers["accept-encoding"] = "identity"  # the cassette keeps plain bytes
        upstream = self._client.build_request(
            "POST", self.upstream, content=request.body, headers=headers
        )
        answer = self._client.send(upstream, stream=True)
        content_type = answer.headers.get("content-type", "application/json")
        if answer.status_code != 200:
            try:
                body = answer.read()
            finally:
                answer.close()
            self._keep(request, answer.status_code, content_type, body)
            return Verbatim(answer.status_code, body, content_type)

        def relay() -> Iterator[bytes]:
            parts: list[bytes] = []
            try:
                for chunk in answer.iter_raw():
                    parts.append(chunk)
                    yield chunk
            finally:
                answer.close()
                # A stream cut short is kept as far as it went: the replay serves the same.
                self._keep(request, 200, content_type, b"".join(parts))

        return Verbatim(200, b"", content_type, chunks=relay())

    def _keep(self, request: CapturedRequest, status: int, content_type: str, body: bytes) -> None:
        with self._lock:
            self.interactions.append(
                Interaction(
                    request=CassetteRequest(
                        path=request.path, body=normalise_body(request.body, self.places)
                    ),
                    response=CassetteResponse(
                        status=status,
                        content_type=content_type,
                        body=body.decode("utf-8", "surrogateescape"),
                    ),
                )
            )

    @property
    def base_url(self) -> str:
        return self._endpoint.server.base_url

    def __enter__(self) -> RecordingProxy:
        self._endpoint.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._endpoint.server.stop()
        self._client.close()
