"""The MCP host: every configured server, each with one owner task, in one task group.

The host is an async context manager. Entering it starts an owner task per
enabled server and returns at once (start-up continues in the background);
leaving it cancels the owners, which close their sessions and reap their
subprocesses in the same tasks that opened them. Nothing outlives the host.

Server stderr and the host's own notes go to ``<log_dir>/mcp-<server>.log``;
the SDK's Python logging goes to ``<log_dir>/mcp.log`` while the host is open,
never to the terminal.
"""

from __future__ import annotations

import difflib
import logging
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from reasonix_core.fsutil import private_dir
from reasonix_core.mcp import _sdk
from reasonix_core.mcp.catalog import (
    McpPromptInfo,
    McpResourceInfo,
    prompt_text,
    resource_text,
)
from reasonix_core.mcp.config import McpConfigProblem, McpSetup
from reasonix_core.mcp.connection import Connector, McpUnavailable, ServerConnection
from reasonix_core.mcp.status import WAITABLE, McpServerStatus
from reasonix_core.mcp.tools import McpTool, ReadWriteGate

if TYPE_CHECKING:  # the SDK loads off the event loop (_sdk)
    from mcp.client.session import ClientSession
    from mcp_types import GetPromptResult, ReadResourceResult

    from reasonix_core.mcp.oauth import McpAuth

__all__ = ["McpHost"]

_SDK_LOGGERS = ("mcp", "mcp_types", "client", "server", "httpx2", "reasonix_core.mcp")
_RESOURCE_REF = re.compile(r"(?<![\w.@/])@([A-Za-z0-9_-]+):(\S+)")
_TRAILING = ".,;!?)]}'\""


class McpHost:
    def __init__(
        self,
        setup: McpSetup,
        *,
        workspace: Path,
        log_dir: Path | None = None,
        connectors: Mapping[str, Connector] | None = None,
        backoff: tuple[float, float] | None = None,
        max_attempts: int | None = None,
        deferred: bool = False,
        auth: McpAuth | None = None,
    ) -> None:
        self.setup = setup
        # OAuth for remote servers (None: no token store, e.g. in unit tests).
        self.auth = auth
        # Deferred: the servers start at start_now() (or at the first use) instead of
        # on entry, so `reasonix run`'s first request does not share the CPU with them.
        self.deferred = deferred
        self._go: anyio.Event | None = None
        self.workspace = workspace
        self.log_dir = log_dir
        self._connectors = dict(connectors or {})
        self._options: dict[str, Any] = {}
        if backoff is not None:
            self._options["backoff"] = backoff
        if max_attempts is not None:
            self._options["max_attempts"] = max_attempts
        self._connections: dict[str, ServerConnection] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._saved_loggers: list[tuple[logging.Logger, bool, logging.Handler]] = []
        self.gate: ReadWriteGate | None = None
        self._observers: list[Callable[[McpServerStatus], None]] = []

    @property
    def configured(self) -> bool:
        return self.setup.configured

    @property
    def problems(self) -> tuple[McpConfigProblem, ...]:
        return self.setup.problems

    # -- lifetime -------------------------------------------------------------

    async def __aenter__(self) -> McpHost:
        self.gate = ReadWriteGate()
        for server in self.setup.servers:
            self._connections[server.key] = ServerConnection(
                server,
                workspace=self.workspace,
                log_dir=self.log_dir,
                connector=self._connectors.get(server.name) or self._connectors.get(server.key),
                on_status=self._notify,
                auth=self.auth,
                **self._options,
            )
        if not any(s.enabled for s in self.setup.servers):
            return self
        self._quiet_sdk_logging()
        self._go = anyio.Event()
        if not self.deferred:
            self._go.set()
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        for connection in self._connections.values():
            if connection.config.enabled:
                connection.mark_starting()
                tg.start_soon(self._own, connection, name=f"mcp-owner-{connection.config.key}")
        return self

    async def _own(self, connection: ServerConnection) -> None:
        assert self._go is not None
        await self._go.wait()
        await connection.run()

    def start_now(self) -> None:
        """Let deferred servers start (at once when not deferred; idempotent)."""
        if self._go is not None:
            self._go.set()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tg, self._tg = self._tg, None
        try:
            if tg is not None:
                tg.cancel_scope.cancel()
                await tg.__aexit__(exc_type, exc, tb)
        finally:
            self._restore_logging()
        return None

    def _quiet_sdk_logging(self) -> None:
        """Route the SDK's records to a file so none reaches the terminal."""
        if self.log_dir is None:
            handler: logging.Handler = logging.NullHandler()
        else:
            try:
                private_dir(self.log_dir)
                handler = logging.FileHandler(
                    self.log_dir / "mcp.log", encoding="utf-8", delay=True
                )
                handler.setFormatter(
                    logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
                )
            except OSError:
                handler = logging.NullHandler()
        for name in _SDK_LOGGERS:
            logger = logging.getLogger(name)
            self._saved_loggers.append((logger, logger.propagate, handler))
            logger.addHandler(handler)
            logger.propagate = False

    def _restore_logging(self) -> None:
        handlers = set()
        for logger, propagate, handler in self._saved_loggers:
            logger.removeHandler(handler)
            logger.propagate = propagate
            handlers.add(handler)
        for handler in handlers:
            handler.close()
        self._saved_loggers.clear()

    # -- status -----------------------------------------------------------------

    def status(self) -> list[McpServerStatus]:
        """One immutable record per declared server (invalid declarations included)."""
        out = []
        for server in self.setup.servers:
            connection = self._connections.get(server.key)
            if connection is not None:
                out.append(connection.status)
            else:
                out.append(
                    McpServerStatus(
                        name=server.name,
                        transport=server.transport,
                        phase="pending" if server.enabled else "disabled",
                        source=server.source,
                        concurrency=server.concurrency,
                    )
                )
        for problem in self.setup.problems:
            out.append(
                McpServerStatus(
                    name=problem.name.strip("'\""),
                    transport="-",
                    phase="invalid",
                    error_class="ConfigError",
                    reason=problem.message,
                    source=problem.source,
                )
            )
        return out

    def subscribe(self, observer: Callable[[McpServerStatus], None]) -> None:
        """Call ``observer`` with every status change (on the event loop)."""
        self._observers.append(observer)

    def _notify(self, status: McpServerStatus) -> None:
        for observer in list(self._observers):
            observer(status)

    async def wait_ready(self) -> list[McpServerStatus]:
        """Wait until every enabled server is ready or has given up, each bounded by
        its own start-up timeout (they start concurrently)."""
        self.start_now()
        async with anyio.create_task_group() as tg:
            for connection in self._connections.values():
                if connection.config.enabled and connection.status.phase in WAITABLE:
                    tg.start_soon(connection.wait_settled)
        return self.status()

    def reconnect(self, name: str) -> bool:
        self.start_now()
        connection = self.connection(name)
        if connection is None:
            return False
        connection.reconnect()
        return True

    def connection(self, name: str) -> ServerConnection | None:
        if name in self._connections:
            return self._connections[name]
        for connection in self._connections.values():
            if connection.config.name == name:
                return connection
        return None

    # -- tools ----------------------------------------------------------------------

    def tools(self) -> list[McpTool]:
        """The tools of every ready server, in declaration order."""
        out = []
        for connection in self._connections.values():
            if connection.ready:
                out.extend(McpTool(info, connection) for info in connection.catalog.tools)
        return out

    def _owner_of(self, full_name: str) -> ServerConnection | None:
        best: ServerConnection | None = None
        for key, connection in self._connections.items():
            if full_name.startswith(f"mcp__{key}__") and (
                best is None or len(key) > len(best.config.key)
            ):
                best = connection
        return best

    async def resolve_tool(self, full_name: str) -> McpTool:
        """The tool called ``full_name``, waiting (bounded) for its server to be ready.

        Raises ``LookupError`` with a message for the model when there is no such tool,
        :class:`McpUnavailable` when its server is not available.
        """
        self.start_now()
        connection = self._owner_of(full_name)
        if connection is None:
            servers = ", ".join(c.config.key for c in self._connections.values()) or "(none)"
            raise LookupError(
                f"no MCP server matches {full_name!r}; names look like mcp__<server>__<tool> "
                f"and the servers are: {servers}"
            )
        if not connection.ready:
            await connection._wait_live()
        info = connection.catalog.tool(full_name)
        if info is None:
            known = [t.full_name for t in connection.catalog.tools]
            close = difflib.get_close_matches(full_name, known, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise LookupError(
                f"MCP server {connection.config.name!r} has no tool {full_name!r}.{hint} "
                'Use action "list" to see what is available.'
            )
        return McpTool(info, connection)

    @property
    def connections(self) -> Sequence[ServerConnection]:
        return list(self._connections.values())

    # -- prompts: /mcp__<server>__<prompt> args --------------------------------------

    def prompts(self) -> list[McpPromptInfo]:
        return [p for c in self._connections.values() if c.ready for p in c.catalog.prompts]

    async def render_prompt(self, command: str, args_text: str = "") -> str:
        """The text of slash command ``/mcp__<server>__<prompt> args`` as a user turn.

        ``args_text`` maps onto the prompt's declared arguments: ``key=value``
        words by name, other words positionally; a single declared argument
        takes the whole text.
        """
        self.start_now()
        name = command.removeprefix("/")
        connection = self._owner_of(name)
        if connection is None:
            raise LookupError(f"no MCP server provides /{name}")
        if not connection.ready:
            await connection._wait_live()
        info = connection.catalog.prompt(name)
        if info is None:
            raise LookupError(f"MCP server {connection.config.name!r} has no prompt /{name}")
        arguments = map_prompt_arguments(info, args_text)
        remote = info.remote_name

        async def op(session: ClientSession) -> GetPromptResult:
            return await session.get_prompt(remote, arguments)

        return prompt_text(await connection.request(op))

    # -- resources: @<server>:<uri> ---------------------------------------------------

    def resources(self) -> list[McpResourceInfo]:
        return [r for c in self._connections.values() if c.ready for r in c.catalog.resources]

    async def read_resource(self, server: str, uri: str) -> str:
        self.start_now()
        connection = self.connection(server)
        if connection is None:
            raise LookupError(f"no MCP server named {server!r}")

        async def op(session: ClientSession) -> ReadResourceResult:
            return await session.read_resource(uri)

        result = await connection.request(op)
        return "\n".join(resource_text(c) for c in result.contents)

    async def expand_resource_references(self, text: str) -> tuple[str, list[str]]:
        """Append ``<resource>`` blocks for each ``@<server>:<uri>`` in ``text``.

        Returns the new text and notices for references that could not be read.
        Tokens whose ``<server>`` is not a configured server stay plain text.
        """
        blocks: list[str] = []
        notices: list[str] = []
        for server, raw_uri in dict.fromkeys(_RESOURCE_REF.findall(text)):
            if self.connection(server) is None:
                continue
            uri = raw_uri.rstrip(_TRAILING) or raw_uri
            try:
                body = await self.read_resource(server, uri)
            except (McpUnavailable, LookupError) as exc:
                notices.append(f"@{server}:{uri}: {exc}")
                continue
            except Exception as exc:
                sdk = _sdk.load()
                why = exc.message if isinstance(exc, sdk.MCPError) else type(exc).__name__
                notices.append(f"@{server}:{uri}: could not be read ({why})")
                continue
            blocks.append(f'<resource ref="{server}:{uri}">\n{body}\n</resource>')
        if not blocks:
            return text, notices
        return text + "\n\n" + "\n\n".join(blocks), notices


def map_prompt_arguments(info: McpPromptInfo, args_text: str) -> dict[str, str]:
    declared = [a.name for a in info.arguments]
    text = args_text.strip()
    if not declared or not text:
        out: dict[str, str] = {}
    elif len(declared) == 1 and not re.match(rf"{re.escape(declared[0])}=", text):
        out = {declared[0]: text}
    else:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        out = {}
        positional: list[str] = []
        for word in words:
            key, sep, value = word.partition("=")
            if sep and key in declared:
                out[key] = value
            else:
                positional.append(word)
        free = [n for n in declared if n not in out]
        for i, name in enumerate(free):
            if i >= len(positional):
                break
            # Extra words go to the last free argument.
            out[name] = " ".join(positional[i:]) if i == len(free) - 1 else positional[i]
    missing = [a.name for a in info.arguments if a.required and a.name not in out]
    if missing:
        raise ValueError(
            f"/{info.full_name} needs {', '.join(missing)} (usage: /{info.full_name} {info.argument_hint})"
        )
    return out
