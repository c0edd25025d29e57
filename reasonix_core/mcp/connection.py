"""One MCP server: its owner task (a generation-aware supervisor) and the call path.

The SDK requires a client session to be entered and left in the same task, so
:meth:`ServerConnection.run` - started in the host's task group - is the only
task that opens and closes transports and sessions. Each connection attempt is
a *generation*. Only a generation that finished ``initialize`` and every
listing is published (``_live``); callers hand it :class:`~reasonix_core.mcp.plumbing.Request` objects
through a memory stream and wait on the request's event. The owner serves each
request in a task of the generation's own task group, so when a generation
ends every call in flight ends with it.

- start-up (transport, ``initialize``, ``notifications/initialized``, the
  listings) is bounded by the server's start-up timeout;
- a ``404`` on an established HTTP session ("Session terminated") makes the
  callers of that generation share one rebuild, and each replays at most once
  (the server never saw the session, so it did not act);
- a drop while a call is in flight is reported as an unknown outcome and never
  replayed (the server may have acted);
- a ready session that drops reconnects with bounded exponential backoff;
- status changes and callbacks carry their generation and are ignored when a
  newer generation exists.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import anyio
import anyio.lowlevel

from reasonix_core import __version__
from reasonix_core.fsutil import open_private, private_dir
from reasonix_core.mcp import _sdk
from reasonix_core.mcp.catalog import Catalog, all_pages, build_catalog
from reasonix_core.mcp.config import McpServerConfig
from reasonix_core.mcp.environment import server_environment
from reasonix_core.mcp.plumbing import (
    CallCancelled,
    CallTimedOut,
    ConnectionLost,
    GenState,
    Live,
    McpUnavailable,
    NotStarted,
    Request,
    WatchedStream,
    cancel_when,
    connection_closed,
    devnull,
    error_class,
    maybe_locked,
    session_lost,
    startup_reason,
)
from reasonix_core.mcp.status import WAITABLE, McpServerStatus

if TYPE_CHECKING:  # the SDK loads off the event loop (_sdk)
    import httpx2
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
    from mcp_types import InitializeResult, ListRootsResult, LoggingMessageNotificationParams

    from reasonix_core.mcp.oauth import McpAuth

T = TypeVar("T")

__all__ = [
    "CallCancelled",
    "CallTimedOut",
    "ConnectionLost",
    "Connector",
    "McpUnavailable",
    "ServerConnection",
]

log = logging.getLogger(__name__)

Connector = Callable[[], AbstractAsyncContextManager[Any]]

#: Exponential backoff between reconnect attempts of a dropped server.
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
MAX_RECONNECT_ATTEMPTS = 5


class ServerConnection:
    """Supervisor and call path of one declared server. Create inside an event loop."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        workspace: Path,
        log_dir: Path | None,
        connector: Connector | None = None,
        backoff: tuple[float, float] = (BACKOFF_BASE, BACKOFF_MAX),
        max_attempts: int = MAX_RECONNECT_ATTEMPTS,
        on_status: Callable[[McpServerStatus], None] | None = None,
        auth: McpAuth | None = None,
    ) -> None:
        self.config = config
        self._auth = auth
        self.catalog = Catalog()
        self._workspace = workspace
        self._log_dir = log_dir
        self._connector = connector
        self._backoff = backoff
        self._max_attempts = max_attempts
        self._on_status = on_status
        self._status = McpServerStatus(
            name=config.name,
            transport=config.transport,
            phase="pending" if config.enabled else "disabled",
            source=config.source,
            concurrency=config.concurrency,
        )
        self._changed = anyio.Event()
        self._wake = anyio.Event()
        self._serial = anyio.Lock() if config.serial else None
        self._live: Live | None = None
        self._generation = 0
        self._reconnects = 0
        self._manual = False
        self._rebuild_gen = 0
        self._serve_scope: anyio.CancelScope | None = None
        self._gen_scope: anyio.CancelScope | None = None
        self._log_file: IO[str] | None = None

    # -- status -------------------------------------------------------------

    @property
    def status(self) -> McpServerStatus:
        return self._status

    @property
    def ready(self) -> bool:
        return self._live is not None

    def _set(self, gen: int | None, /, **changes: object) -> None:
        """Update the status; a callback of an older generation is ignored."""
        if gen is not None and gen != self._generation:
            return
        self._status = self._status.evolve(**changes)
        self._changed.set()
        self._changed = anyio.Event()
        if self._on_status is not None:
            try:
                self._on_status(self._status)
            except Exception:  # an observer must not break the owner task
                log.exception("MCP status observer failed")

    async def wait_settled(self) -> McpServerStatus:
        """Until the server is ready or has given up (bounded by its start-up timeout)."""
        with anyio.move_on_after(self.config.startup_timeout + 1.0):
            while self._status.phase in WAITABLE:
                await self._changed.wait()
        return self._status

    # -- control ------------------------------------------------------------

    def mark_starting(self) -> None:
        """Called by the host as it schedules :meth:`run`: from now on the server is starting."""
        if self.config.enabled and self._status.phase == "pending":
            self._set(None, phase="starting")

    def reconnect(self) -> None:
        """Start a fresh generation now (a ready session is closed first)."""
        if not self.config.enabled:
            return
        self._manual = True
        if self._serve_scope is not None:
            self._serve_scope.cancel()
        elif self._gen_scope is not None:
            self._gen_scope.cancel()
        self._wake.set()

    def _request_rebuild(self, generation: int) -> None:
        """One shared rebuild per generation, however many callers hit the 404."""
        if self._generation == generation and self._rebuild_gen != generation:
            self._rebuild_gen = generation
            if self._serve_scope is not None:
                self._serve_scope.cancel()

    # -- the owner task -----------------------------------------------------

    async def run(self) -> None:
        """Own the server until cancelled (the host closing)."""
        if not self.config.enabled:
            return
        ever_ready = False
        attempts = 0
        self._open_log()
        try:
            while True:
                try:
                    was_ready, kind = await self._generation_once(reconnecting=ever_ready)
                except Exception as exc:  # a bug here must not take the host down
                    log.exception("MCP owner task of %s failed", self.config.name)
                    self._set(
                        None, error_class=type(exc).__name__, reason="internal error (see the log)"
                    )
                    was_ready, kind = False, "failed"
                ever_ready = ever_ready or was_ready
                if kind in ("manual", "rebuild"):
                    attempts = 0
                    self._reconnects += 1
                    continue
                if was_ready:
                    attempts = 0
                if not ever_ready or attempts >= self._max_attempts:
                    if attempts >= self._max_attempts:
                        self._set(
                            None,
                            phase="failed",
                            reason=f"{self._status.reason}; gave up after {attempts} reconnect attempts",
                        )
                    else:
                        self._set(None, phase="failed")
                    await self._wake.wait()  # /mcp reconnect
                    attempts = 0
                    self._reconnects += 1
                    continue
                attempts += 1
                base, cap = self._backoff
                self._set(None, phase="reconnecting")
                with anyio.move_on_after(min(base * 2 ** (attempts - 1), cap)):
                    await self._wake.wait()
                self._reconnects += 1
        finally:
            self._live = None
            self._set(None, phase="stopped")
            self._close_log()

    async def _generation_once(self, *, reconnecting: bool) -> tuple[bool, str]:
        self._manual = False
        self._wake = anyio.Event()
        sdk = await self._load_sdk()
        if sdk is None:
            return False, "failed"
        self._generation += 1
        gen = self._generation
        self._set(
            gen,
            phase="reconnecting" if reconnecting else "starting",
            generation=gen,
            reconnects=self._reconnects,
        )
        send, receive = anyio.create_memory_object_stream[Request](math.inf)
        dropped = anyio.Event()
        stream_errors: list[BaseException] = []
        state = GenState()
        ready = [False]
        failure: BaseException | None = None
        timeout = self.config.startup_timeout
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
            self._gen_scope = scope
            try:
                await self._serve_generation(
                    sdk, gen, scope, send, receive, dropped, stream_errors, ready, state
                )
            except Exception as exc:
                failure = exc
            except BaseExceptionGroup as group:  # a cancellation mixed with errors
                if not scope.cancel_called:
                    raise
                failure = group
            finally:
                self._live = None
                self._serve_scope = None
                self._gen_scope = None
                _refuse_queued(send, receive)
        if failure is not None:
            self._note(f"generation {gen} ended with {failure!r}")
        return self._generation_end(
            sdk, gen, ready=ready[0], failure=failure, stream_errors=stream_errors,
            timed_out=scope.cancelled_caught, timeout=timeout,
        )  # fmt: skip

    async def _load_sdk(self) -> _sdk.Sdk | None:
        """The mcp SDK, imported on first use; None (status failed) if it cannot be."""
        try:
            return await _sdk.aload()
        except Exception as exc:
            self._note(f"importing the mcp SDK failed: {exc!r}")
            self._set(
                None,
                phase="failed",
                error_class=type(exc).__name__,
                reason="the mcp SDK could not be imported",
            )
            return None

    async def _serve_generation(
        self,
        sdk: _sdk.Sdk,
        gen: int,
        scope: anyio.CancelScope,
        send: MemoryObjectSendStream[Request],
        receive: MemoryObjectReceiveStream[Request],
        dropped: anyio.Event,
        stream_errors: list[BaseException],
        ready: list[bool],
        state: GenState,
    ) -> None:
        """Connect, initialise and discover within ``scope``'s start-up deadline,
        then serve the queued requests until the connection drops or is closed."""
        async with AsyncExitStack() as stack:
            self._note(f"--- generation {gen}: connecting ({self.config.transport})")
            session = await self._connect(
                sdk, stack, gen, dropped, stream_errors, ready, scope, state
            )
            init = await session.initialize()
            catalog = await self._discover(sdk, session, init)
            scope.deadline = math.inf
            self.catalog = catalog
            self._live = Live(gen, session, send, state)
            ready[0] = True
            self._mark_ready(gen, catalog)
            async with anyio.create_task_group() as tg:
                self._serve_scope = tg.cancel_scope
                tg.start_soon(cancel_when, dropped, tg.cancel_scope)
                async for request in receive:
                    tg.start_soon(self._serve, session, request)

    def _mark_ready(self, gen: int, catalog: Catalog) -> None:
        self._set(
            gen,
            phase="ready",
            tools=len(catalog.tools),
            prompts=len(catalog.prompts),
            resources=len(catalog.resources),
            error_class="",
            reason="",
        )
        self._note(
            f"ready: {len(catalog.tools)} tools, {len(catalog.prompts)} prompts, "
            f"{len(catalog.resources)} resources"
        )

    def _generation_end(
        self,
        sdk: _sdk.Sdk,
        gen: int,
        *,
        ready: bool,
        failure: BaseException | None,
        stream_errors: list[BaseException],
        timed_out: bool,
        timeout: float,
    ) -> tuple[bool, str]:
        """How generation ``gen`` ended: (it had been ready, why it ended); the status
        says why when that is a failure."""
        if self._manual:
            return ready, "manual"
        if ready and self._rebuild_gen == gen:
            self._note("session not found by the server (404): rebuilding it")
            return True, "rebuild"
        if ready:
            self._set(
                gen,
                error_class=error_class(failure) or "ConnectionLost",
                reason="the connection dropped",
            )
            return True, "dropped"
        if timed_out and not stream_errors:
            self._set(
                gen, error_class="TimeoutError", reason=f"start-up timed out after {timeout:g}s"
            )
        else:
            cause = stream_errors[0] if stream_errors else failure
            self._set(
                gen,
                error_class=error_class(cause) or "Error",
                reason=startup_reason(sdk, self.config.transport, cause),
            )
        return False, "failed"

    async def _connect(
        self,
        sdk: _sdk.Sdk,
        stack: AsyncExitStack,
        gen: int,
        dropped: anyio.Event,
        stream_errors: list[BaseException],
        ready: list[bool],
        scope: anyio.CancelScope,
        state: GenState,
    ) -> ClientSession:
        streams = await self._open_transport(sdk, stack, state)
        read, write = streams[0], streams[1]
        workspace = self._workspace

        async def list_roots(context: ClientRequestContext) -> ListRootsResult:
            return sdk.types.ListRootsResult(
                roots=[
                    sdk.types.Root(uri=workspace.as_uri(), name=workspace.name or str(workspace))
                ]
            )

        async def on_message(message: IncomingMessage) -> None:
            if isinstance(message, Exception):
                self._note(f"transport error: {message!r}", gen)
                if not ready[0]:
                    # Garbage or a broken transport during start-up: fail now, not at the timeout.
                    stream_errors.append(message)
                    scope.cancel()
                return
            method = getattr(message, "method", "")
            if (
                method.endswith("/list_changed")
                and gen == self._generation
                and self._live is not None
            ):
                # Refresh the catalog for `use_capability list`; the request prefix never changes.
                self._live.send.send_nowait(Request(op=self._refresh_op(sdk)))
            await anyio.lowlevel.checkpoint()

        async def on_log(params: LoggingMessageNotificationParams) -> None:
            self._note(f"server log [{params.level}] {params.data}", gen)

        session = sdk.ClientSession(
            WatchedStream(read, dropped),
            write,
            list_roots_callback=list_roots,
            logging_callback=on_log,
            message_handler=on_message,
            client_info=sdk.types.Implementation(name="reasonix", version=__version__),
        )
        return await stack.enter_async_context(session)

    async def _open_transport(
        self, sdk: _sdk.Sdk, stack: AsyncExitStack, state: GenState
    ) -> Sequence[Any]:
        """The transport's streams, read and write first (HTTP adds a third), entered on
        ``stack``."""
        cfg = self.config
        if self._connector is not None:
            return await stack.enter_async_context(self._connector())
        elif cfg.transport == "stdio":
            params = sdk.StdioServerParameters(
                command=cfg.command,
                args=list(cfg.args),
                env=server_environment(cfg.env, self._workspace),
                cwd=str(cfg.cwd) if cfg.cwd else None,
            )
            errlog = self._log_file
            if errlog is None:
                errlog = devnull()
                stack.callback(errlog.close)
            return await stack.enter_async_context(sdk.stdio_client(params, errlog=errlog))
        elif cfg.transport == "http":

            async def on_response(response: httpx2.Response) -> None:
                if response.status_code == 404 and response.request.headers.get("mcp-session-id"):
                    state.session_gone = True

            client = await stack.enter_async_context(
                sdk.httpx.AsyncClient(
                    auth=sdk.oauth_provider.provider_for(cfg, self._auth),
                    headers=dict(cfg.headers),
                    timeout=sdk.httpx.Timeout(30.0, read=300.0),
                    event_hooks={"response": [on_response]},
                )
            )
            return await stack.enter_async_context(
                sdk.streamable_http_client(cfg.url, http_client=client)
            )
        else:
            return await stack.enter_async_context(
                sdk.sse_client(
                    cfg.url,
                    headers=dict(cfg.headers) or None,
                    auth=sdk.oauth_provider.provider_for(cfg, self._auth),
                )
            )

    async def _discover(
        self, sdk: _sdk.Sdk, session: ClientSession, init: InitializeResult
    ) -> Catalog:
        caps = init.capabilities
        tools = await all_pages(session.list_tools, "tools", sdk.types) if caps.tools else []
        prompts: list[Any] = []
        resources: list[Any] = []
        # A broken optional listing costs only that listing; a broken tools/list fails start-up.
        if caps.prompts:
            try:
                prompts = await all_pages(session.list_prompts, "prompts", sdk.types)
            except Exception as exc:
                self._note(f"prompts/list failed: {exc!r}")
        if caps.resources:
            try:
                resources = await all_pages(session.list_resources, "resources", sdk.types)
            except Exception as exc:
                self._note(f"resources/list failed: {exc!r}")
        return build_catalog(self.config.key, tools, prompts, resources)

    def _refresh_op(self, sdk: _sdk.Sdk) -> Callable[[ClientSession], Awaitable[None]]:
        gen = self._generation

        async def refresh(session: ClientSession) -> None:
            init = session.initialize_result
            if init is None:
                return
            catalog = await self._discover(sdk, session, init)
            if gen == self._generation:
                self.catalog = catalog
                self._set(
                    gen,
                    tools=len(catalog.tools),
                    prompts=len(catalog.prompts),
                    resources=len(catalog.resources),
                )

        return refresh

    async def _serve(self, session: ClientSession, request: Request) -> None:
        if request.cancelled:
            request.fail(CallCancelled())
            return
        try:
            with anyio.CancelScope() as scope:
                request.scope = scope
                request.result = await request.op(session)
                request.ok = True
        except Exception as exc:
            request.error = exc
        finally:
            if not request.ok and request.error is None:
                request.error = (
                    CallCancelled()
                    if request.cancelled
                    else ConnectionLost(
                        f"the connection to MCP server {self.config.name!r} ended during the call"
                    )
                )
            request.done.set()

    # -- the call path ------------------------------------------------------

    async def request(
        self, op: Callable[[ClientSession], Awaitable[T]], *, limit: float | None = None
    ) -> T:
        """Run ``op(session)`` on the owner's current generation.

        Waits for the server to be ready (bounded by its start-up timeout), then
        for the answer (bounded by ``limit`` seconds, default the call timeout).
        Serial servers take one request at a time; a queued request still
        honours cancellation.
        """
        limit = limit if limit is not None else self.config.call_timeout
        async with maybe_locked(self._serial):
            replayed = False
            min_gen = 0
            for _ in range(4):
                live = await self._wait_live(min_gen)
                request = Request(op=op)
                try:
                    live.send.send_nowait(request)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    min_gen = live.generation + 1
                    continue
                try:
                    with anyio.fail_after(limit):
                        await request.done.wait()
                except TimeoutError:
                    request.cancel()
                    raise CallTimedOut(limit) from None
                except BaseException:
                    request.cancel()
                    raise
                if request.ok:
                    return cast(T, request.result)  # what `op` returned
                error = request.error
                if isinstance(error, NotStarted):
                    min_gen = live.generation + 1
                    continue
                if (live.state.session_gone or session_lost(error)) and not replayed:
                    replayed = True
                    self._request_rebuild(live.generation)
                    min_gen = live.generation + 1
                    continue
                if connection_closed(error):
                    raise ConnectionLost(
                        f"the connection to MCP server {self.config.name!r} ended during the call"
                    ) from error
                assert error is not None
                raise error
            raise McpUnavailable(self._status)

    async def _wait_live(self, min_gen: int = 0) -> Live:
        with anyio.move_on_after(self.config.startup_timeout):
            while True:
                live = self._live
                if live is not None and live.generation >= min_gen:
                    return live
                if self._status.phase not in WAITABLE and self._status.phase != "ready":
                    raise McpUnavailable(self._status)
                await self._changed.wait()
        raise McpUnavailable(self._status)

    # -- logging ------------------------------------------------------------

    def _open_log(self) -> None:
        """``<log_dir>/mcp-<server>.log``: the server's stderr and our notes."""
        if self._log_dir is None:
            return
        try:
            private_dir(self._log_dir)
            path = self._log_dir / f"mcp-{self.config.key}.log"
            self._log_file = open_private(path, buffering=1)
        except OSError:
            self._log_file = None

    def _close_log(self) -> None:
        handle, self._log_file = self._log_file, None
        if handle is not None:
            handle.close()

    def _note(self, text: str, gen: int | None = None) -> None:
        handle = self._log_file
        if handle is None or handle.closed:
            log.debug("mcp %s: %s", self.config.name, text)
            return
        stamp = _dt.datetime.now().isoformat(timespec="milliseconds")
        prefix = f"[{stamp}] [reasonix]" + (f" gen {gen}" if gen else "")
        try:
            handle.write(f"{prefix} {text}\n")
        except (OSError, ValueError):
            pass


def _refuse_queued(
    send: MemoryObjectSendStream[Request], receive: MemoryObjectReceiveStream[Request]
) -> None:
    """Close a generation's request queue; what is still queued never reached the
    server, so its callers may resend it (NotStarted)."""
    send.close()
    while True:
        try:
            receive.receive_nowait().fail(NotStarted())
        except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
            break
    receive.close()
