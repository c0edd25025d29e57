"""MCP authorization (OAuth 2.1 for remote servers; seed 000 §3.3), SDK-free parts.

The flow itself is the ``mcp`` SDK's client-side OAuth (discovery from the 401's
``WWW-Authenticate`` ``resource_metadata`` (RFC 9728), authorization-server
metadata (RFC 8414 with the OpenID fallback), dynamic registration (RFC 7591),
PKCE S256, ``resource`` (RFC 8707)); :mod:`.oauth_provider` adapts it to our
token store. This module holds what needs no SDK:

- :class:`McpAuth`: how a connection authorizes (the store, and for a login the
  loopback listener); sessions use it non-interactively, so a server that needs a
  login fails at once with :class:`McpLoginRequired`, never opening a browser;
- :class:`LoopbackLogin`: the redirect listener on 127.0.0.1 (random port) that
  receives the authorization code, checking ``state``, with a timeout; and the
  browser (``$BROWSER`` / :mod:`webbrowser`) with the URL announced for
  machines without one.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc

from reasonix_core.errors import ReasonixError
from reasonix_core.mcp.tokens import TokenStore

__all__ = [
    "CALLBACK_PATH",
    "LoginFailed",
    "LoopbackLogin",
    "McpAuth",
    "McpAuthError",
    "McpLoginRequired",
]

CALLBACK_PATH = "/callback"
_MAX_REQUEST = 16 * 1024


class McpAuthError(ReasonixError):
    """An authorization failure whose message is safe to show (no token, no code)."""


class McpLoginRequired(McpAuthError):
    """The server needs a login the user has not done (or whose grant ended)."""

    def __init__(self, server: str) -> None:
        self.server = server
        super().__init__(f"needs a login: run `reasonix mcp auth {server}`")


class LoginFailed(McpAuthError):
    pass


@dataclass(frozen=True, slots=True)
class CallbackResult:
    code: str
    state: str
    iss: str | None


@dataclass(slots=True)
class McpAuth:
    """How connections authorize: the token store, and ``login`` only for an
    interactive login (``reasonix mcp auth``, ``/mcp``)."""

    store: TokenStore
    login: LoopbackLogin | None = None


class LoopbackLogin:
    """The loopback redirect listener and browser of one interactive login.

    Enter it in a task group's scope (it serves there); :attr:`redirect_uri` is
    known once entered. :meth:`open_browser` takes the SDK's authorization URL
    (and learns the ``state`` to expect from it); :meth:`wait` returns the
    callback whose ``state`` matches, within ``timeout`` seconds. A request with
    another state or path is answered and ignored (anything on this machine can
    connect to the port)."""

    def __init__(
        self,
        *,
        timeout: float = 300.0,
        port: int = 0,
        announce: Callable[[str], None] | None = None,
        open_url: Callable[[str], object] | None = None,
    ) -> None:
        self.timeout = timeout
        self._want_port = port  # 0: any free port
        self._announce = announce
        self._open_url = open_url if open_url is not None else _open_in_browser
        self._state: str | None = None
        self._result: CallbackResult | LoginFailed | None = None
        self._arrived = anyio.Event()
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackLogin:
        try:
            listener = await anyio.create_tcp_listener(
                local_host="127.0.0.1", local_port=self._want_port
            )
        except OSError as exc:
            raise LoginFailed(
                f"cannot listen on 127.0.0.1:{self._want_port} for the login: {exc.strerror or exc}"
            ) from None
        self._listener = listener
        self.port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tg, self._tg = self._tg, None
        if tg is not None:
            tg.cancel_scope.cancel()
            await tg.__aexit__(exc_type, exc, tb)
        if self._listener is not None:
            await self._listener.aclose()
        return None

    async def open_browser(self, authorization_url: str) -> None:
        """Announce the URL and open it in the browser (never waiting for the browser)."""
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        if not state:
            raise LoginFailed("the authorization URL has no state parameter")
        self._state = state
        if self._announce is not None:
            self._announce(authorization_url)
        threading.Thread(target=self._open_url, args=(authorization_url,), daemon=True).start()

    async def wait(self) -> CallbackResult:
        try:
            with anyio.fail_after(self.timeout):
                await self._arrived.wait()
        except TimeoutError:
            raise LoginFailed(
                f"no answer from the browser within {self.timeout:g}s (the login timed out)"
            ) from None
        result = self._result
        if isinstance(result, LoginFailed):
            raise result
        assert result is not None
        return result

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(10):
                    head = await _read_head(stream)
            except (TimeoutError, OSError, anyio.EndOfStream, anyio.BrokenResourceError):
                return
            status, page = self._answer(head)
            body = page.encode()
            reply = (
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode() + body
            try:
                await stream.send(reply)
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    def _answer(self, head: bytes) -> tuple[str, str]:
        """The reply to one request, recording a matching callback."""
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", _page("Not a login callback.")
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return "404 Not Found", _page("Not a login callback.")
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        state = query.get("state", "")
        if self._state is None or not secrets.compare_digest(state, self._state):
            return "400 Bad Request", _page("This login link is not the one Reasonix opened.")
        if self._arrived.is_set():
            return "200 OK", _page("Already logged in; you can close this tab.")
        if "error" in query:
            # The error code is from a fixed vocabulary (RFC 6749 §4.1.2.1); keep it short.
            reason = "".join(c for c in query["error"][:40] if c.isalnum() or c in "_-")
            self._result = LoginFailed(f"the authorization server refused: {reason}")
            self._arrived.set()
            return "200 OK", _page("The login was refused. You can close this tab.")
        if not query.get("code"):
            return "400 Bad Request", _page("No authorization code.")
        self._result = CallbackResult(query["code"], state, query.get("iss"))
        self._arrived.set()
        return "200 OK", _page("Logged in. You can close this tab and return to Reasonix.")


async def _read_head(stream: anyio.abc.SocketStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
        if len(data) > _MAX_REQUEST:
            break
    return data


def _page(text: str) -> str:
    return f"<!doctype html><title>Reasonix</title><p>{text}</p>"


def _open_in_browser(url: str) -> None:
    """``$BROWSER`` (a command, or a list separated by ``os.pathsep``) or the
    system browser; the URL was already printed, so a machine without one is fine."""
    import webbrowser

    try:
        webbrowser.open(url)
    except Exception:  # no browser at all: the printed URL is the way
        pass
