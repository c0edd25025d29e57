"""Serial MCP gating across the parent and its children (seed 000 §3.16).

Children share the session's MCP host; each has its own ``use_capability`` front
end and tool context. A ``serial`` server must take one call at a time whoever
makes it; a ``parallel`` one takes them together. The server is a real MCP
server (the SDK's, over memory streams in this process), so its tool can park on
an event: overlap is observed, never timed."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.server.mcpserver import MCPServer

from reasonix_core.mcp.capability import McpCapabilities
from reasonix_core.tool.capability import UseCapabilityTool
from tests.core.mcp_helpers import context, host, stdio_server
from tests.core.test_mcp_host import opened

GUARD = 60  # seconds: a deadlock guard, never an assertion about speed


class Browser:
    """A stateful read-only server: its tool records how many calls are inside."""

    def __init__(self) -> None:
        self.inside = 0
        self.peak = 0
        self.release = anyio.Event()
        self.server = MCPServer("browser")

        @self.server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
        async def look(tab: str) -> str:
            """Look at a tab (read-only, but it switches the tab)."""
            self.inside += 1
            self.peak = max(self.peak, self.inside)
            try:
                await self.release.wait()
            finally:
                self.inside -= 1
            return f"saw {tab}"


@pytest.mark.parametrize(("concurrency", "together"), [("serial", 1), ("parallel", 3)])
async def test_one_call_at_a_time_across_parent_and_children(
    tmp_path: Path, concurrency: str, together: int
) -> None:
    browser = Browser()
    async with opened(tmp_path, browser.server, "browser", concurrency=concurrency) as h:
        direct = next(t for t in h.tools() if t.name == "mcp__browser__look")
        child_a, child_b = (
            UseCapabilityTool(McpCapabilities(h)),
            UseCapabilityTool(McpCapabilities(h)),
        )
        results: list[str] = []

        async def parent() -> None:
            results.append((await direct.execute({"tab": "p"}, context(tmp_path / "p"))).text)

        async def child(front: UseCapabilityTool, tab: str) -> None:
            call = {"action": "call", "name": "mcp__browser__look", "arguments": {"tab": tab}}
            results.append((await front.execute(call, context(tmp_path / tab))).text)

        with anyio.fail_after(GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(parent)
                tg.start_soon(child, child_a, "a")
                tg.start_soon(child, child_b, "b")
                await anyio.wait_all_tasks_blocked()
                assert browser.inside == together
                browser.release.set()
    assert browser.peak == together
    assert sorted(results) == ["saw a", "saw b", "saw p"]


async def test_a_child_cancelled_while_queued_does_not_block_the_others(tmp_path: Path) -> None:
    browser = Browser()
    async with opened(tmp_path, browser.server, "browser", concurrency="serial") as h:
        front = UseCapabilityTool(McpCapabilities(h))
        call = {"action": "call", "name": "mcp__browser__look", "arguments": {"tab": "x"}}
        queued = anyio.CancelScope()
        done: list[str] = []

        async def cancelled_child() -> None:
            with queued:
                await front.execute(call, context(tmp_path))

        async def other_child() -> None:
            done.append(
                (await UseCapabilityTool(McpCapabilities(h)).execute(call, context(tmp_path))).text
            )

        with anyio.fail_after(GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(other_child)
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(cancelled_child)
                await anyio.wait_all_tasks_blocked()
                assert browser.inside == 1
                queued.cancel()  # Esc on the queued child
                await anyio.wait_all_tasks_blocked()
                browser.release.set()
        assert done == ["saw x"] and browser.peak == 1


@pytest.mark.parametrize(
    ("concurrency", "answer", "peak"), [("serial", "alone", "1"), ("parallel", "met", "3")]
)
async def test_a_real_stdio_server_is_gated_across_parent_and_children(
    tmp_path: Path, concurrency: str, answer: str, peak: str
) -> None:
    # `meet` waits until 3 calls are inside at once: a serial server never lets
    # them meet (each gives up after `within`), a parallel one does at once.
    within = 0.3 if concurrency == "serial" else 60.0
    h = host(tmp_path, stdio_server("fx", concurrency=concurrency))
    async with h:
        await h.wait_ready()
        direct = next(t for t in h.tools() if t.name == "mcp__fx__meet")
        args = {"n": 3, "within": within}
        results: list[str] = []

        async def parent() -> None:
            results.append((await direct.execute(args, context(tmp_path))).text)

        async def child() -> None:
            call = {"action": "call", "name": "mcp__fx__meet", "arguments": args}
            results.append(
                (await UseCapabilityTool(McpCapabilities(h)).execute(call, context(tmp_path))).text
            )

        with anyio.fail_after(GUARD * 3):
            async with anyio.create_task_group() as tg:
                tg.start_soon(parent)
                tg.start_soon(child)
                tg.start_soon(child)
        assert results == [answer] * 3
        probe = {"action": "call", "name": "mcp__fx__peak", "arguments": {}}
        assert (
            await UseCapabilityTool(McpCapabilities(h)).execute(probe, context(tmp_path))
        ).text == peak
