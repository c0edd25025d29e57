"""Remote MCP tools as :class:`~reasonix_core.tool.base.Tool` objects.

Each remote tool becomes an :class:`McpTool` named ``mcp__<server>__<tool>``.
``read_only`` is true only when the server explicitly sets
``annotations.readOnlyHint``. Errors the server reports (``isError``) come
back to the model as results; so do transport failures, with outcome
``unknown`` when the call may have run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from reasonix_core.events import ToolProgress
from reasonix_core.mcp import _sdk
from reasonix_core.mcp.catalog import McpToolInfo, call_result_text
from reasonix_core.mcp.connection import (
    CallCancelled,
    CallTimedOut,
    ConnectionLost,
    McpUnavailable,
    ServerConnection,
)
from reasonix_core.tool.base import ToolContext, ToolFamily, ToolResult, current_call_id

if TYPE_CHECKING:  # the SDK loads off the event loop (_sdk)
    from mcp.client.session import ClientSession
    from mcp_types import CallToolResult


class McpTool:
    """One remote tool, called through its server's owner task."""

    def __init__(self, info: McpToolInfo, connection: ServerConnection) -> None:
        self.info = info
        self.connection = connection
        self.name = info.full_name
        self.description = (
            info.description or f"{info.remote_name} (MCP server {connection.config.name})"
        )
        self.read_only = info.read_only
        self.family = ToolFamily.OTHER
        self.parameters = info.input_schema

    async def execute(
        self, args: dict[str, Any], ctx: ToolContext, *, call_id: str = ""
    ) -> ToolResult:
        sink = ctx.tool_progress
        name = self.name
        call_id = call_id or current_call_id.get()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            # Always passed, so every tools/call carries _meta.progressToken.
            if sink is not None:
                sink(
                    ToolProgress(
                        call_id=call_id,
                        name=name,
                        progress=progress,
                        total=total,
                        message=message or "",
                    )
                )

        remote = self.info.remote_name

        async def op(session: ClientSession) -> CallToolResult:
            return await session.call_tool(remote, args, progress_callback=on_progress)

        limit = self.connection.config.tool_timeouts.get(remote)
        setting = f"tool_timeout_seconds.{remote}" if limit is not None else "call_timeout_seconds"
        try:
            result = await self.connection.request(op, limit=limit)
        except McpUnavailable as exc:
            return ToolResult.error(f"{name}: {exc}. The call was not sent.")
        except CallTimedOut as exc:
            return ToolResult(
                text=(
                    f"{name}: {exc} ({setting}); the call was cancelled. "
                    "The server may have done part of the work; check before retrying."
                ),
                is_error=True,
                outcome="unknown",
            )
        except ConnectionLost as exc:
            return ToolResult(
                text=(
                    f"{name}: {exc}. It may or may not have run, so it was not retried; "
                    "check its effect before calling it again."
                ),
                is_error=True,
                outcome="unknown",
            )
        except CallCancelled:
            return ToolResult(text=f"{name}: cancelled", is_error=True, outcome="cancelled")
        except Exception as exc:
            sdk = _sdk.load()
            if isinstance(exc, sdk.MCPError):
                return ToolResult.error(f"{name}: the server returned an error: {exc.message}")
            return ToolResult.error(f"{name} failed: {type(exc).__name__}: {exc}")
        text = call_result_text(result)
        if getattr(result, "is_error", False):
            return ToolResult(text=text, is_error=True, outcome="error")
        return ToolResult(text=text)


class ReadWriteGate:
    """Read-only MCP calls may overlap; a writer runs alone.

    The loop batches ``use_capability`` calls as read-only (the proxy checks
    the real target itself), so this keeps "only explicit read-only tools run in
    parallel" true for the targets behind it.
    """

    def __init__(self) -> None:
        self._readers = 0
        self._writer = False
        self._cond = anyio.Condition()

    @asynccontextmanager
    async def hold(self, read_only: bool) -> AsyncIterator[None]:
        async with self._cond:
            while self._writer or (not read_only and self._readers):
                await self._cond.wait()
            if read_only:
                self._readers += 1
            else:
                self._writer = True
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                async with self._cond:
                    if read_only:
                        self._readers -= 1
                    else:
                        self._writer = False
                    self._cond.notify_all()
