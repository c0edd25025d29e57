"""The official ``mcp`` SDK, imported once and off the event loop.

Importing the client side of the SDK builds hundreds of pydantic models and
takes about half a second. Doing that on the event loop would delay the first
model request of every session with an MCP server configured, so the host
imports it in a daemon thread while the session goes on (the import lock makes
a concurrent import elsewhere simply wait for this one), and a session that ends
first does not wait for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared.exceptions import MCPError


@dataclass(frozen=True, slots=True)
class Sdk:
    """The pieces of the SDK the host uses, typed (attribute access as on a module)."""

    httpx: ModuleType
    types: ModuleType
    ClientSession: type[ClientSession]
    sse_client: Callable[..., Any]
    StdioServerParameters: type[StdioServerParameters]
    stdio_client: Callable[..., Any]
    streamable_http_client: Callable[..., Any]
    MCPError: type[MCPError]
    # reasonix_core.mcp.oauth_provider: the SDK's OAuth provider on our token store.
    oauth_provider: ModuleType


_lock = threading.Lock()
_sdk: Sdk | None = None


def load() -> Sdk:
    """Import the pieces of the SDK the host uses (blocking)."""
    global _sdk
    with _lock:
        if _sdk is not None:
            return _sdk
        import httpx2
        import mcp_types as types
        from mcp.client.session import ClientSession
        from mcp.client.sse import sse_client
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.exceptions import MCPError

        from reasonix_core.mcp import oauth_provider

        _sdk = Sdk(
            httpx=httpx2,
            types=types,
            ClientSession=ClientSession,
            sse_client=sse_client,
            StdioServerParameters=StdioServerParameters,
            stdio_client=stdio_client,
            streamable_http_client=streamable_http_client,
            MCPError=MCPError,
            oauth_provider=oauth_provider,
        )
        return _sdk


#: How often :func:`aload` looks whether the import thread is done.
_POLL_SECONDS = 0.02


async def aload() -> Sdk:
    """:func:`load` in a daemon thread (immediate once loaded).

    Cancelling the wait abandons the import: a ``reasonix run`` that ends while
    its servers' SDK is still being imported exits at once, instead of waiting
    out the import (a worker thread of anyio's would be joined at exit)."""
    if _sdk is not None:
        return _sdk
    done = threading.Event()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            load()
        except BaseException as exc:  # handed to the awaiting task
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="mcp-sdk-import", daemon=True).start()
    # Polled: a thread outside anyio's pool cannot set an anyio.Event with anyio 4.6
    # (from_thread needs a token there), and the import takes ~25 polls.
    while not done.is_set():  # noqa: ASYNC110
        await anyio.sleep(_POLL_SECONDS)
    if failure:
        raise failure[0]
    assert _sdk is not None
    return _sdk
