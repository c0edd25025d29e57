"""The host against a Python MCP server over streamable HTTP and SSE (a subprocess on a
loopback port): a 404 on an established session rebuilds once and replays at most once;
a dropped SSE stream reconnects."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from reasonix_core.mcp.capability import McpCapabilities
from reasonix_core.mcp.host import McpHost
from reasonix_core.tool.capability import UseCapabilityTool
from tests.core.mcp_helpers import (
    HTTP_SERVER,
    context,
    free_port,
    host,
    http_process,
    server,
    wait_until,
)


async def call(h: McpHost, tool: str, tmp_path: Path, **arguments: object):
    return await UseCapabilityTool(McpCapabilities(h)).execute(
        {"action": "call", "name": f"mcp__web__{tool}", "arguments": arguments}, context(tmp_path)
    )


async def test_404_on_an_established_session_rebuilds_once_and_replays_once(tmp_path: Path) -> None:
    port = free_port()
    argv = [sys.executable, str(HTTP_SERVER), str(port), "http"]
    h = host(tmp_path, server("web", transport="http", url=f"http://127.0.0.1:{port}/mcp"))
    async with h:
        with http_process(argv, port):
            await h.wait_ready()
            assert (await call(h, "count", tmp_path)).text == "1"
        with http_process(argv, port):
            results: list[str] = []

            async def one() -> None:
                result = await call(h, "count", tmp_path)
                assert not result.is_error, result.text
                results.append(result.text)

            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(one)
            status = h.status()[0]
            # Each call ran exactly once on the new process; one rebuild served them all.
            assert sorted(results) == ["1", "2", "3"]
            assert (status.phase, status.generation, status.reconnects) == ("ready", 2, 1)
            assert (await call(h, "count", tmp_path)).text == "4"


async def test_sse_stream_drop_reconnects(tmp_path: Path) -> None:
    port = free_port()
    argv = [sys.executable, str(HTTP_SERVER), str(port), "sse"]
    h = host(tmp_path, server("web", transport="sse", url=f"http://127.0.0.1:{port}/sse"))
    async with h:
        with http_process(argv, port):
            await h.wait_ready()
            assert h.status()[0].transport == "sse"
            assert (await call(h, "echo", tmp_path, text="one")).text == "one"
        await wait_until(lambda: h.status()[0].phase != "ready")
        with http_process(argv, port):
            await wait_until(lambda: h.status()[0].phase == "ready")
            assert (await call(h, "echo", tmp_path, text="two")).text == "two"
            status = h.status()[0]
            assert status.generation >= 2 and status.reconnects >= 1
