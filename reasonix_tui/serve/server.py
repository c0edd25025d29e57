"""The HTTP side of ``reasonix serve``: textual-serve's aiohttp app behind our rules.

textual-serve (Textualize) serves a Textual app to a browser: its page loads
xterm.js, and each websocket runs the app as a child process whose screen and
keys travel over it. We keep its page, static files and process protocol, and
put in front of them, as one aiohttp middleware, the checks of :mod:`.guard`:
Host, then authentication (token cookie, password login, or none), then Origin
for the websocket. A request that fails any of them is answered 401/403 before
a handler runs, so no app process starts for it. No CORS header is ever sent.

To take the app's start-up (Python imports, the first frame) off the critical path,
an authenticated page request starts that tab's app at once ("pre-spawn"); the
websocket the page opens a moment later claims it. Never for a request that failed a
check (the guard answers those before any handler), at most one waiting per signed-in
session, within the tab cap, and one that no websocket claims soon is ended.

Each child is ``python -m reasonix_tui`` in the served folder with the server's
environment (the same user config, trust and permissions as in a terminal), in a
session of its own: Ctrl+C in the server's terminal reaches the server only,
which then ends every child (quit, then terminate, then kill).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import aiohttp_jinja2
import jinja2
from aiohttp import WSMsgType, web
from aiohttp.web_runner import GracefulExit
from textual_serve.app_service import AppService
from textual_serve.server import Server

from reasonix_tui.serve.guard import Backoff, HostRule, Sessions, is_wildcard, same_origin
from reasonix_tui.serve.password import verify_password

__all__ = ["ReasonixServer", "ServeOptions", "bind_socket"]

log = logging.getLogger("reasonix.serve")

AuthMode = Literal["token", "password", "none"]
# Tabs at once: each is a whole app process (~100 MB); more is a mistake or abuse.
MAX_SESSIONS = 16
# How long a child gets to quit on its own before it is terminated, then killed.
QUIT_GRACE_SECONDS = 5.0
# How long a pre-spawned app waits for its page's websocket before it is ended (the
# page, its script and xterm load in well under this even on a busy machine).
PRESPAWN_WAIT_SECONDS = 10.0
# The size an app is pre-spawned at before its tab says its own: the last tab's.
_DEFAULT_SIZE = (80, 24)
_LOGIN_PATH = "/login"
_SECURITY_HEADERS = {
    # The page's own scripts and styles are inline; nothing may load from elsewhere
    # (textual-serve's page links a web font from Google: blocked, the bundled one is used).
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self' 'unsafe-inline'; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """What ``reasonix serve`` resolved from its flags and the user's ``[serve]``."""

    host: str
    port: int
    auth: AuthMode
    folder: Path
    # The app's command line; the resume flags go to one tab at a time (see below).
    app_argv: Sequence[str]
    resume_argv: Sequence[str] = ()
    password_hash: str = ""
    behind_proxy: bool = False
    hosts: Sequence[str] = ()
    max_sessions: int = MAX_SESSIONS
    # Start a tab's app when its page is requested (False: when its websocket opens).
    prespawn: bool = True


def bind_socket(host: str, port: int) -> socket.socket:
    """Listen on ``host:port`` (port 0: any free one) before the URL is printed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host or "0.0.0.0", port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class ReasonixAppService(AppService):
    """textual-serve's per-websocket app process, started without a shell, in the
    served folder and in its own session (a terminal's Ctrl+C is the server's)."""

    def __init__(self, argv: Sequence[str], folder: Path, **kwargs: Any) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = list(argv)
        self.folder = folder

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            cwd=self.folder,
            start_new_session=True,
        )
        self._stdin = process.stdin
        return process

    async def open(self, width: int, height: int) -> None:
        """Start the app process without relaying it yet: its output waits in the pipe
        until :meth:`relay_to` gives it a websocket."""
        await self._open_app_process(width, height)

    def relay_to(
        self,
        write_bytes: Callable[[bytes], Awaitable[object]],
        write_str: Callable[[str], Awaitable[object]],
        close: Callable[[], Awaitable[object]],
    ) -> None:
        """Give an opened app its websocket and start relaying its output there."""
        self.remote_write_bytes = write_bytes
        self.remote_write_str = write_str
        self.remote_close = close
        self._task = asyncio.create_task(self.run())

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def end(self) -> None:
        """Ask the app to quit, then terminate and kill it if it does not."""
        process = self._process
        if process is None:
            return
        if self._task is None:
            # Pre-spawned and never claimed: nothing to save, no quit to wait for.
            await self._kill(process)
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.stop(), QUIT_GRACE_SECONDS)
        # Its output ended; wait for the exit to be reported before any signal: a signal
        # to a dead child makes Popen reap it behind asyncio's child watcher.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), QUIT_GRACE_SECONDS)
        await self._kill(process)

    @staticmethod
    async def _kill(process: Any) -> None:
        if process.returncode is not None:
            return
        for send in (process.terminate, process.kill):
            with contextlib.suppress(ProcessLookupError):
                send()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_GRACE_SECONDS)
                return


@dataclass
class _Live:
    services: dict[str, ReasonixAppService] = field(default_factory=dict)
    sockets: set[web.WebSocketResponse] = field(default_factory=set)
    # The tab that was given the -c / -r flags, while it lives (one session, one tab).
    resume_holder: str | None = None
    # Pre-spawned apps waiting for their page's websocket, by signed-in session.
    pending: dict[str, _Pending] = field(default_factory=dict)
    size: tuple[int, int] = _DEFAULT_SIZE
    chores: set[asyncio.Task[None]] = field(default_factory=set)


@dataclass
class _Pending:
    service: ReasonixAppService
    size: tuple[int, int]
    opening: asyncio.Task[None]
    # Ends the app unless a websocket claims it first.
    timer: asyncio.TimerHandle | None = None


class ReasonixServer(Server):
    """textual-serve's :class:`Server` with authentication, Host and Origin checks,
    and child processes that are ours to end."""

    def __init__(self, options: ServeOptions, *, on_ready: Callable[[str], None]) -> None:
        super().__init__(" ".join(options.app_argv), host=options.host, port=options.port,
                         title="Reasonix")  # fmt: skip
        self.options = options
        self.on_ready = on_ready
        self.host_rule = HostRule.build(options.host, options.hosts)
        self.sessions = Sessions()
        self.backoff = Backoff()
        self.live = _Live()
        self.cookie_name = f"reasonix_serve_{options.port}"

    # --- the URL -------------------------------------------------------------------

    def url(self) -> str:
        host = "127.0.0.1" if is_wildcard(self.options.host) else self.options.host
        if ":" in host:
            host = f"[{host}]"
        base = f"http://{host}:{self.options.port}/"
        return f"{base}?token={self.sessions.token}" if self.options.auth == "token" else base

    # --- the application -----------------------------------------------------------

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=64 * 1024)
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.get(_LOGIN_PATH, self._login_page),
                web.post(_LOGIN_PATH, self._login),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        app.on_response_prepare.append(self._headers)
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        if request.path.startswith("/static/") and response.status == 200:
            # textual-serve's script, styles and fonts (half a megabyte): a reload or a
            # second tab takes them from the browser's cache. Private: they are served
            # only to a signed-in browser.
            response.headers["Cache-Control"] = "private, max-age=3600"
        for name, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        host = request.headers.get("Host")
        if not self.host_rule.allows(host):
            return _refuse(403, "this server does not answer to that Host name")
        if request.method not in ("GET", "HEAD", "POST"):
            return _refuse(405, "method not allowed")
        if request.method == "POST" and not same_origin(request.headers.get("Origin"), host):
            return _refuse(403, "cross-origin request refused")
        auth = self.options.auth
        if auth == "password" and request.path == _LOGIN_PATH:
            return await handler(request)
        if not self._signed_in(request):
            if auth == "token" and request.path == "/" and "token" in request.query:
                return self._exchange_token(request)
            if auth == "password" and request.path == "/" and request.method != "POST":
                return self._login_response(request, 401)
            return _refuse(401, "sign in first: open the URL `reasonix serve` printed")
        if request.path == "/ws" and not same_origin(request.headers.get("Origin"), host):
            return _refuse(403, "cross-origin websocket refused")
        return await handler(request)

    def _signed_in(self, request: web.Request) -> bool:
        return self.options.auth == "none" or self.sessions.valid(
            request.cookies.get(self.cookie_name)
        )

    def _secure(self, request: web.Request) -> bool:
        if self.options.behind_proxy:
            proto = request.headers.get("X-Forwarded-Proto", "").split(",")[-1].strip()
            return proto.lower() == "https"
        return request.secure

    def _signed_in_response(self, request: web.Request, location: str) -> web.Response:
        response = web.Response(status=303, headers={"Location": location})
        response.set_cookie(
            self.cookie_name, self.sessions.issue(), path="/", httponly=True,
            samesite="Strict", secure=self._secure(request),
        )  # fmt: skip
        return response

    def _exchange_token(self, request: web.Request) -> web.StreamResponse:
        if not self.sessions.token_matches(request.query.get("token")):
            return _refuse(401, "wrong token: open the URL `reasonix serve` printed")
        # Back to the same page without the token: it leaves the address bar and history.
        query = request.rel_url.query.copy()
        query.popall("token", None)
        location = str(request.rel_url.with_query(query)) if query else "/"
        return self._signed_in_response(request, location)

    # --- password ------------------------------------------------------------------

    def _client(self, request: web.Request) -> str:
        if self.options.behind_proxy:
            # The proxy appends the address it saw: the last entry is the one to trust.
            forwarded = request.headers.get("X-Forwarded-For", "").split(",")[-1].strip()
            if forwarded:
                return forwarded
        return request.remote or "?"

    def _login_response(self, request: web.Request, status: int, note: str = "") -> web.Response:
        return web.Response(status=status, text=_login_html(note), content_type="text/html")

    async def _login_page(self, request: web.Request) -> web.StreamResponse:
        if self._signed_in(request):
            raise web.HTTPSeeOther("/")
        return self._login_response(request, 200)

    async def _login(self, request: web.Request) -> web.StreamResponse:
        client = self._client(request)
        wait = self.backoff.retry_after(client)
        if wait > 0:
            response = self._login_response(
                request, 429, f"Too many failed attempts; try again in {int(wait) + 1} s."
            )
            response.headers["Retry-After"] = str(int(wait) + 1)
            return response
        # Counted as a failure when it starts, cleared if it succeeds: counted at its
        # end, 40 guesses sent at once all passed the check above before the first
        # 0.1 s scrypt check ended, and the backoff slowed none of them.
        self.backoff.failed(client)
        form = await request.post()
        password = form.get("password")
        ok = isinstance(password, str) and await asyncio.get_running_loop().run_in_executor(
            None, verify_password, password, self.options.password_hash
        )
        if not ok:
            return self._login_response(request, 401, "Wrong password.")
        self.backoff.succeeded(client)
        return self._signed_in_response(request, "/")

    # --- the page and the websocket ------------------------------------------------

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        # Only a request the guard let through gets here: signed in, right Host.
        if request.method == "GET":
            self._prespawn(self._session_key(request))
        # URLs from the request's own (checked) Host, so that a name behind a proxy
        # or a LAN address gets a websocket URL the browser can reach.
        scheme = "wss" if self._secure(request) else "ws"
        return {
            "font_size": _int(request.query.get("fontsize", ""), 16),
            "app_websocket_url": f"{scheme}://{request.host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": "Reasonix"},
        }

    def _session_key(self, request: web.Request) -> str:
        """Whose page this is: the signed-in session (its cookie), or, with no
        authentication, the one anonymous session."""
        if self.options.auth == "none":
            return ""
        return request.cookies.get(self.cookie_name, "")

    def _new_service(self) -> ReasonixAppService:
        live = self.live
        service = ReasonixAppService(
            list(self.options.app_argv), self.options.folder,
            write_bytes=_nowhere, write_str=_nowhere, close=_nothing,
            download_manager=self.download_manager,
        )  # fmt: skip
        if self.options.resume_argv and live.resume_holder is None:
            service.argv += self.options.resume_argv
            live.resume_holder = service.app_service_id
        live.services[service.app_service_id] = service
        return service

    def _prespawn(self, key: str) -> None:
        """Start the app this page's websocket will claim (one waiting per session)."""
        live = self.live
        if not self.options.prespawn or key in live.pending:
            return
        if len(live.services) >= self.options.max_sessions:
            return
        service = self._new_service()
        opening = asyncio.create_task(service.open(*live.size))
        pending = _Pending(service, live.size, opening)
        live.pending[key] = pending
        pending.timer = asyncio.get_running_loop().call_later(
            PRESPAWN_WAIT_SECONDS, self._expire, key, pending
        )

    def _take_pending(self, key: str) -> _Pending | None:
        pending = self.live.pending.pop(key, None)
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        return pending

    def _expire(self, key: str, pending: _Pending) -> None:
        """No websocket claimed the pre-spawned app in time: end it."""
        if self.live.pending.get(key) is pending:
            del self.live.pending[key]
            task = asyncio.create_task(self._discard(pending))
            self.live.chores.add(task)
            task.add_done_callback(self.live.chores.discard)

    async def _discard(self, pending: _Pending) -> None:
        with contextlib.suppress(Exception):
            await pending.opening
        try:
            await pending.service.end()
        finally:
            self._forget(pending.service)

    async def _claimed(self, pending: _Pending) -> ReasonixAppService | None:
        """The pre-spawned app, once its process is up, or None if it failed or died."""
        try:
            await pending.opening
        except Exception:
            log.exception("serve: a pre-spawned app failed to start")
        if pending.service.alive:
            return pending.service
        await self._discard(pending)
        return None

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        live = self.live
        pending = self._take_pending(self._session_key(request))
        if pending is None and len(live.services) >= self.options.max_sessions:
            raise web.HTTPServiceUnavailable(text="too many open tabs")
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
        service: ReasonixAppService | None = None
        try:
            await websocket.prepare(request)
            live.sockets.add(websocket)
            width = _int(request.query.get("width", ""), 80)
            height = _int(request.query.get("height", ""), 24)
            live.size = (width, height)
            guessed = pending.size if pending is not None else None
            if pending is not None:
                service = await self._claimed(pending)
                pending = None
            if service is None:
                service = self._new_service()
                await service.open(width, height)
                service.relay_to(websocket.send_bytes, websocket.send_str, websocket.close)
            else:
                service.relay_to(websocket.send_bytes, websocket.send_str, websocket.close)
                if guessed != (width, height):
                    # Started at a guessed size: the app redraws at the tab's own.
                    await service.set_terminal_size(width, height)
            await self._relay(websocket, service)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("serve: the tab's connection failed")
        finally:
            # The tab is gone (closed, reloaded, or the server stops): so is its app.
            if pending is not None:
                await asyncio.shield(self._discard(pending))
            if service is not None:
                await asyncio.shield(self._end(service, websocket))
            else:
                live.sockets.discard(websocket)
        return websocket

    async def _relay(self, websocket: web.WebSocketResponse, service: AppService) -> None:
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = message.json()
            except ValueError:
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                width, height = _int(str(data.get("width")), 80), _int(str(data.get("height")), 24)
                await service.set_terminal_size(width, height)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def _end(self, service: ReasonixAppService, websocket: web.WebSocketResponse) -> None:
        try:
            await service.end()
        finally:
            self._forget(service)
            self.live.sockets.discard(websocket)
            with contextlib.suppress(Exception):
                await websocket.close()

    def _forget(self, service: ReasonixAppService) -> None:
        live = self.live
        live.services.pop(service.app_service_id, None)
        if live.resume_holder == service.app_service_id:
            live.resume_holder = None

    # --- start and stop ------------------------------------------------------------

    async def on_startup(self, app: web.Application) -> None:
        self.on_ready(self.url())

    async def on_shutdown(self, app: web.Application) -> None:
        for key in list(self.live.pending):
            pending = self._take_pending(key)
            if pending is not None:
                with contextlib.suppress(Exception):
                    await pending.opening
        services = list(self.live.services.values())
        await asyncio.gather(*(s.end() for s in services), return_exceptions=True)
        for websocket in list(self.live.sockets):
            with contextlib.suppress(Exception):
                await websocket.close()

    def run(self, sock: socket.socket) -> None:
        """Serve on ``sock`` until SIGINT or SIGTERM, then end every child."""
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)

        def stop() -> None:
            raise GracefulExit()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop)
        web.run_app(
            self._make_app(), sock=sock, handle_signals=False, loop=loop,
            print=None, shutdown_timeout=QUIT_GRACE_SECONDS, access_log=None,
        )  # fmt: skip


async def _nowhere(data: Any) -> None:
    """Where a pre-spawned app's output would go before its websocket claims it
    (never called: its output is not read until then)."""


async def _nothing() -> None:
    pass


def _refuse(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text + "\n")


def _int(text: str, default: int) -> int:
    try:
        value = int(text)
    except ValueError:
        return default
    return value if 1 <= value <= 1000 else default


def _login_html(note: str) -> str:
    message = f'<p class="note">{html.escape(note)}</p>' if note else ""
    return _LOGIN_PAGE.replace("{note}", message)


_LOGIN_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Reasonix: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{background:#0c181f;color:#eee;font-family:menlo,monospace;display:flex;
justify-content:center;align-items:center;height:100vh;margin:0}
form{background:#12232d;padding:2em;display:flex;flex-direction:column;gap:1em;min-width:18em}
input,button{font:inherit;padding:.5em}.note{color:#f88;margin:0}
</style></head><body>
<form method="post" action="/login">
<h1>Reasonix</h1>{note}
<label>Password <input type="password" name="password" autofocus autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form></body></html>
"""


def app_argv(extra: Sequence[str] = ()) -> list[str]:
    """The command each tab runs: this Python's ``reasonix_tui`` with ``extra`` flags."""
    return [sys.executable, "-m", "reasonix_tui", *extra]
