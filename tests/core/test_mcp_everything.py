"""The reference server @modelcontextprotocol/server-everything (npm) over stdio,
streamable HTTP and SSE. ``scripts/test`` installs it into ``.cache/npm`` when node
and npm exist; without it these tests skip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core.events import ToolProgress
from reasonix_core.mcp.capability import McpCapabilities
from reasonix_core.mcp.host import McpHost
from reasonix_core.tool.capability import UseCapabilityTool
from tests.core.mcp_helpers import (
    EVERYTHING_JS,
    context,
    everything_available,
    free_port,
    host,
    http_process,
    server,
    wait_until,
)

pytestmark = pytest.mark.skipif(
    not everything_available(), reason="server-everything not installed (scripts/test installs it)"
)


def proxy_call(
    h: McpHost, tmp_path: Path, name: str, events: list | None = None, **arguments: object
):
    services = {"tool_progress": events.append} if events is not None else {}
    return UseCapabilityTool(McpCapabilities(h)).execute(
        {"action": "call", "name": f"mcp__everything__{name}", "arguments": arguments},
        context(tmp_path, **services),
    )


async def test_stdio_tools_progress_roots_prompts_and_resources(tmp_path: Path) -> None:
    h = host(tmp_path, server("everything", command="node", args=(str(EVERYTHING_JS), "stdio")))
    async with h:
        (status,) = await h.wait_ready()
        assert status.phase == "ready" and status.tools >= 10 and status.prompts >= 3
        tools = {t.info.remote_name: t for t in h.tools()}
        assert tools["echo"].read_only is True
        assert tools["toggle-simulated-logging"].read_only is False

        echoed = await proxy_call(h, tmp_path, "echo", message="hi there")
        assert echoed.text == "Echo: hi there" and not echoed.is_error

        events: list[ToolProgress] = []
        done = await proxy_call(
            h, tmp_path, "trigger-long-running-operation", events, duration=0.2, steps=2
        )
        assert "completed" in done.text
        assert [(e.progress, e.total) for e in events] == [(1.0, 2.0), (2.0, 2.0)]

        # get-roots-list is registered once the server saw our roots capability
        # (it announces it with tools/list_changed, which refreshes the catalog).
        await wait_until(
            lambda: "get-roots-list" in {t.info.remote_name for t in h.tools()}, within=60
        )
        roots = await proxy_call(h, tmp_path, "get-roots-list")
        assert tmp_path.as_uri() in roots.text

        prompt = next(p for p in h.prompts() if p.remote_name == "args-prompt")
        rendered = await h.render_prompt(f"/{prompt.full_name}", "Paris France")
        assert "Paris" in rendered

        resource = h.resources()[0]
        text, notices = await h.expand_resource_references(f"look at {resource.reference}")
        assert not notices and f'<resource ref="everything:{resource.uri}">' in text


@pytest.mark.parametrize(
    ("mode", "path", "transport"), [("streamableHttp", "/mcp", "http"), ("sse", "/sse", "sse")]
)
async def test_remote_transports(tmp_path: Path, mode: str, path: str, transport: str) -> None:
    port = free_port()
    argv = ["node", str(EVERYTHING_JS), mode]
    with http_process(argv, port, env={"PORT": str(port)}):
        h = host(
            tmp_path,
            server(
                "everything",
                transport=transport,
                url=f"http://127.0.0.1:{port}{path}",
                headers={"X-Reasonix-Test": "1"},
            ),
        )
        async with h:
            (status,) = await h.wait_ready()
            assert (status.phase, status.transport) == ("ready", transport)
            echoed = await proxy_call(h, tmp_path, "echo", message="over the wire")
            assert echoed.text == "Echo: over the wire"
            total = await proxy_call(h, tmp_path, "get-sum", a=2, b=3)
            assert "5" in total.text
            assert json.dumps(status.to_json()).count(str(port)) == 0
