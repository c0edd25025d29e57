"""The two loopback endpoints of e2ebench, both on the test kit's FixtureServer.

:class:`RecordingProxy` sits between a run and the real provider: it relays each
request upstream unchanged, answers with the provider's bytes and keeps the pair
for the cassette. :class:`ReplayServer` serves a cassette: each request must equal
the recorded one after :func:`~reasonix_core.bench.cassette.normalise_body`, or it
is refused (HTTP 400, which the agent does not retry) and the mismatch is kept
with its first differing byte.

The test kit (``reasonix_testkit``) ships with the source tree, not the wheel, so
recording and replaying need a checkout; a plain run against a real provider
does not come here.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
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
from reasonix_core.errors import BenchError

# Headers a proxy must not relay: hop-by-hop ones, and compression (the cassette
# keeps the plain bytes).
_DROPPED_HEADERS = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "accept-encoding", "keep-alive"}
)


def _testkit() -> Any:
    try:
        import reasonix_testkit
    except ImportError:
        pass
    else:
        return reasonix_testkit
    # An editable install runs from the checkout: the kit sits beside the package.
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "reasonix_testkit" / "__init__.py").is_file():
        sys.path.append(str(checkout))
    try:
        import reasonix_testkit
    except ImportError:
        raise BenchError(
            "--record and --replay need the Reasonix source tree (reasonix_testkit is not "
            "installed with the wheel); run them from a checkout"
        ) from None
    return reasonix_testkit


class _Unchecked:
    """A dialect that answers but does not judge: the recording proxy relays to the
    real provider, which validates for itself, and a replayed request is held to the
    recorded bytes, which the provider accepted. Paths and envelopes stay the dialect's."""

    def __init__(self, dialect: Any) -> None:
        self._dialect = dialect

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dialect, name)

    def validate(self, request: Any, models: Any) -> None:
        return None


def _dialect(kit: Any, kind: str, provider: dict[str, Any]) -> Any:
    deepseek = provider.get("reasoning_protocol", "deepseek") == "deepseek"
    if kind == "anthropic":
        return _Unchecked(kit.AnthropicDialect("deepseek" if deepseek else "anthropic"))
    if kind == "responses":
        return _Unchecked(kit.ResponsesDialect("deepseek" if deepseek else "openai"))
    return _Unchecked(kit.ChatDialect("deepseek" if deepseek else "openai"))


def _route(dialect: Any, path: str) -> str:
    """The path the run sends to: ``path`` when the dialect serves it, else its first."""
    return path if path in dialect.routes else sorted(dialect.routes)[0]


class ReplayServer:
    """Serves one cassette on 127.0.0.1; ``base_url`` is the provider address to use."""

    def __init__(self, cassette: Cassette, places: RunPlaces) -> None:
        kit = _testkit()
        self.cassette = cassette
        self.places = places
        self.served = 0
        self.mismatch: Mismatch | None = None
        self._lock = threading.Lock()
        dialect = _dialect(kit, cassette.kind, cassette.provider)
        first = cassette.interactions[0].request.path if cassette.interactions else ""
        self._path = _route(dialect, first)
        self._server = kit.FixtureServer(dialect, api_key=None, models=None)
        self._server.models = None
        self._server.responder = self._answer
        self._kit = kit

    def _answer(self, request: Any) -> Any:
        kit = self._kit
        with self._lock:
            index = self.served + 1
            if self.mismatch is not None:
                return kit.HttpError(400, f"bench replay: stopped at {self.mismatch.message}")
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
                return kit.HttpError(400, f"bench replay: {self.mismatch.message}")
            recorded = self.cassette.interactions[index - 1]
            mismatch = compare_request(index, recorded.request, request.path, body)
            if mismatch is not None:
                self.mismatch = mismatch
                return kit.HttpError(400, f"bench replay: {mismatch.message}")
            self.served = index
            response = recorded.response
            return kit.Verbatim(
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
        return str(self._server.base_url)

    def __enter__(self) -> ReplayServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


class RecordingProxy:
    """Relays a run's requests to ``upstream`` (the provider's full request URL) and
    keeps each exchange for a cassette."""

    def __init__(self, upstream: str, kind: str, provider: dict[str, Any], places: RunPlaces):
        import httpx

        kit = _testkit()
        self.upstream = upstream
        self.places = places
        self.interactions: list[Interaction] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=httpx.Timeout(600.0, connect=30.0))
        dialect = _dialect(kit, kind, provider)
        self._path = _route(dialect, urlsplit(upstream).path.rstrip("/"))
        self._server = kit.FixtureServer(dialect, api_key=None, models=None)
        self._server.models = None
        self._server.responder = self._relay
        self._kit = kit

    @property
    def request_url(self) -> str:
        """Where the run sends its requests (its provider's ``request_url``)."""
        return self.base_url + self._path

    def _relay(self, request: Any) -> Any:
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
        kit = self._kit
        if answer.status_code != 200:
            try:
                body = answer.read()
            finally:
                answer.close()
            self._keep(request, answer.status_code, content_type, body)
            return kit.Verbatim(answer.status_code, body, content_type)

        def relay() -> Any:
            parts: list[bytes] = []
            try:
                for chunk in answer.iter_raw():
                    parts.append(chunk)
                    yield chunk
            finally:
                answer.close()
                # A stream cut short is kept as far as it went: the replay serves the same.
                self._keep(request, 200, content_type, b"".join(parts))

        return kit.Verbatim(200, b"", content_type, chunks=relay())

    def _keep(self, request: Any, status: int, content_type: str, body: bytes) -> None:
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
        return str(self._server.base_url)

    def __enter__(self) -> RecordingProxy:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()
        self._client.close()
