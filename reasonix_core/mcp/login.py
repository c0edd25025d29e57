"""An interactive login to one remote MCP server (``reasonix mcp auth NAME`` and
``/mcp``): the server is connected once through the ordinary connection path
with a :class:`~reasonix_core.mcp.oauth.LoopbackLogin`, so its 401 runs the
SDK's authorization flow and the tokens land in the store; the connection is
then closed (sessions reconnect with the stored tokens)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from reasonix_core.mcp.config import McpServerConfig, McpSetup
from reasonix_core.mcp.host import McpHost
from reasonix_core.mcp.oauth import LoopbackLogin, McpAuth
from reasonix_core.mcp.status import McpServerStatus
from reasonix_core.mcp.tokens import TokenStore

__all__ = ["login"]


async def login(
    server: McpServerConfig,
    home: Path,
    *,
    workspace: Path,
    browser_timeout: float = 300.0,
    announce: Callable[[str], None] | None = None,
    open_url: Callable[[str], object] | None = None,
) -> McpServerStatus:
    """Log in to ``server`` (a stored grant that still works, or refreshes, is
    used as it is); its status afterwards: ``ready`` when logged in, otherwise
    ``failed`` with the reason. ``browser_timeout``: how long the browser may take."""
    store = TokenStore(home)
    status = await _connect_once(
        server, home, workspace, store, browser_timeout, announce, open_url
    )
    if status.phase != "ready" and store.record(server.url) and not store.logged_in(server.url):
        # A refused refresh forgot the dead grant during the first attempt; the
        # SDK cannot start a new authorization in that same request, so log in now.
        status = await _connect_once(
            server, home, workspace, store, browser_timeout, announce, open_url
        )
    return status


async def _connect_once(
    server: McpServerConfig,
    home: Path,
    workspace: Path,
    store: TokenStore,
    browser_timeout: float,
    announce: Callable[[str], None] | None,
    open_url: Callable[[str], object] | None,
) -> McpServerStatus:
    async with LoopbackLogin(
        timeout=browser_timeout, port=server.callback_port, announce=announce, open_url=open_url
    ) as loopback:
        # The start-up bound covers the person at the browser; the listener's own
        # timeout fires first, with a clearer message.
        config = replace(server, enabled=True, startup_timeout=browser_timeout + 30.0)
        host = McpHost(
            McpSetup(servers=(config,)),
            workspace=workspace,
            log_dir=home / "logs",
            auth=McpAuth(store, loopback),
        )
        async with host:
            statuses = await host.wait_ready()
    return statuses[0]
