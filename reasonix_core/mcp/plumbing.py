"""The small pieces of the call path between callers and a server's owner task:
request objects, generation state, the watched read stream, errors, classifiers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, cast

import anyio

from reasonix_core.errors import ReasonixError
from reasonix_core.mcp import _sdk
from reasonix_core.mcp.oauth import McpAuthError
from reasonix_core.mcp.status import McpServerStatus

if TYPE_CHECKING:
    from types import TracebackType

    from anyio.streams.memory import MemoryObjectSendStream
    from httpx2 import HTTPStatusError
    from mcp.client.session import ClientSession
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage

    # What the session's read stream yields: a message, or the transport's error.
    Incoming = SessionMessage | Exception

_SESSION_TERMINATED = "Session terminated"  # the SDK's error for a 404 on an established session


class McpUnavailable(ReasonixError):
    """The server is not ready (failed, disabled, or did not start in time)."""

    def __init__(self, status: McpServerStatus) -> None:
        self.status = status
        why = f": {status.reason}" if status.reason else ""
        super().__init__(f"MCP server {status.name!r} is {status.phase}{why}")


class ConnectionLost(ReasonixError):
    """The connection ended while the call was in flight: it may or may not have run."""


class CallTimedOut(ReasonixError):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"no answer within {seconds:g}s")


class CallCancelled(ReasonixError):
    pass


class NotStarted(Exception):
    """The request never reached the server (its generation ended first): safe to resend."""


@dataclass(eq=False)
class Request:
    op: Callable[[ClientSession], Awaitable[object]]
    done: anyio.Event = field(default_factory=anyio.Event)
    result: object = None
    error: BaseException | None = None
    ok: bool = False
    cancelled: bool = False
    scope: anyio.CancelScope | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()

    def fail(self, error: BaseException) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


@dataclass(slots=True)
class GenState:
    """Mutable facts about one generation, set by transport callbacks."""

    # The server answered 404 to a request carrying our Mcp-Session-Id: it no
    # longer knows the session, so it did not act on the request.
    session_gone: bool = False


@dataclass(frozen=True, slots=True)
class Live:
    generation: int
    session: ClientSession
    send: MemoryObjectSendStream[Request]
    state: GenState


class WatchedStream:
    """The transport's read stream, noting end-of-stream: a stdio server that
    exits or an HTTP stream that closes ends the generation."""

    def __init__(self, inner: ReadStream[Incoming], closed: anyio.Event) -> None:
        self._inner = inner
        self._closed = closed

    async def receive(self) -> Incoming:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._closed.set()
            raise

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> object:  # e.g. `last_context`
        return getattr(self._inner, name)


def startup_reason(sdk: _sdk.Sdk, transport: str, cause: BaseException | None) -> str:
    """A short, redacted reason for a failed start-up (never the exception's text)."""
    found = leaf(cause)
    if found is None:
        return "start-up failed"
    if isinstance(found, McpAuthError):  # its message is written to be shown
        return str(found)
    if type(found).__module__.startswith("mcp.client.auth"):
        return "authorization failed (see its log)"
    if isinstance(found, sdk.MCPError):
        if found.code == sdk.types.CONNECTION_CLOSED:
            if transport == "stdio":
                return "the server process exited during start-up (see its log)"
            return "the server closed the connection during start-up"
        return f"the server answered start-up with error {found.code}"
    if isinstance(found, OSError):
        if transport == "stdio":
            return "could not start the server process"
        return "could not connect"
    if isinstance(found, sdk.httpx.HTTPStatusError):
        return f"HTTP {cast('HTTPStatusError', found).response.status_code}"
    if isinstance(found, sdk.httpx.TransportError):
        return "could not connect"
    if found.__class__.__name__ in ("ValidationError", "JSONDecodeError", "ValueError"):
        return "the server sent something that is not valid MCP (see its log)"
    if isinstance(found, RuntimeError) and "protocol version" in str(found):
        return "unsupported protocol version"
    return "start-up failed (see its log)"


def leaf(exc: BaseException | None) -> BaseException | None:
    """The first non-cancellation exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = next(
            (e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())),
            exc.exceptions[0],
        )
    return exc


def error_class(exc: BaseException | None) -> str:
    found = leaf(exc)
    return type(found).__name__ if found is not None else ""


def session_lost(error: BaseException | None) -> bool:
    sdk = _sdk.load()
    return (
        isinstance(error, sdk.MCPError)
        and error.code == sdk.types.INVALID_REQUEST
        and error.message == _SESSION_TERMINATED
    )


def connection_closed(error: BaseException | None) -> bool:
    sdk = _sdk.load()
    return isinstance(error, sdk.MCPError) and error.code == sdk.types.CONNECTION_CLOSED


def devnull() -> IO[str]:
    return open(os.devnull, "w")


async def cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


@asynccontextmanager
async def maybe_locked(lock: anyio.Lock | None) -> AsyncIterator[None]:
    if lock is None:
        yield
    else:
        async with lock:
            yield
