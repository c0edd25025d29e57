"""The MCP host against in-process SDK servers (MCPServer / low-level Server over memory
streams): listings, pagination, progress, errors, roots, prompts, resources, serial
gating, the use_capability proxy and its permission checks, start-up timeouts."""

from __future__ import annotations

import json
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types as types
import pytest
from mcp.client._memory import InMemoryTransport
from mcp.server import Server
from mcp.server.mcpserver import Context, MCPServer

from reasonix_core.config.schema import PermissionsConfig
from reasonix_core.events import ToolProgress
from reasonix_core.mcp.capability import McpCapabilities
from reasonix_core.mcp.host import McpHost
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.permission.gate import PermissionGate
from reasonix_core.permission.policy import Policy
from reasonix_core.tool.capability import UseCapabilityTool
from tests.core.mcp_helpers import context, host, server, wait_until

READ_ONLY = types.ToolAnnotations(read_only_hint=True)


def demo_server(log: list[str] | None = None) -> MCPServer:
    srv = MCPServer("demo")
    active = {"now": 0, "max": 0}
    srv.active = active  # type: ignore[attr-defined]

    @srv.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @srv.tool(annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def wipe() -> str:
        """Delete everything (pretend)."""
        if log is not None:
            log.append("wipe")
        return "wiped"

    @srv.tool()
    def plain() -> str:
        """No annotations at all."""
        return "plain"

    @srv.tool()
    def failing() -> types.CallToolResult:
        """Reports an error result."""
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="disk full")], is_error=True
        )

    @srv.tool()
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleep; reports progress."""
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        try:
            await ctx.report_progress(1, 2, "half")
            await anyio.sleep(seconds)
            await ctx.report_progress(2, 2)
        finally:
            active["now"] -= 1
        return f"slept {seconds}"

    @srv.tool(annotations=READ_ONLY)
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        result = await ctx.session.list_roots()
        return json.dumps([str(r.uri) for r in result.roots])

    @srv.prompt()
    def review(path: str, focus: str = "") -> str:
        """Review a file."""
        return f"Review {path}" + (f" for {focus}" if focus else "")

    @srv.prompt()
    def summarize(text: str) -> str:
        """Summarise text."""
        return f"Summarise: {text}"

    @srv.resource("style://guide", name="style-guide", mime_type="text/markdown")
    def guide() -> str:
        return "Use four spaces."

    return srv


def memory(srv: Any):
    return lambda: InMemoryTransport(srv)


@asynccontextmanager
async def opened(tmp_path: Path, srv: Any, name: str = "demo", **fields: Any):
    h = host(tmp_path, server(name, **fields), connectors={name: memory(srv)})
    async with h:
        await h.wait_ready()
        yield h


async def test_lists_everything_and_maps_read_only_hints(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server()) as h:
        (status,) = h.status()
        assert (status.phase, status.tools, status.prompts, status.resources) == ("ready", 6, 2, 1)
        tools = {t.name: t for t in h.tools()}
        assert set(tools) == {
            f"mcp__demo__{n}" for n in ("echo", "wipe", "plain", "failing", "slow", "roots")
        }
        assert tools["mcp__demo__echo"].read_only is True
        assert tools["mcp__demo__wipe"].read_only is False  # explicit false
        assert tools["mcp__demo__plain"].read_only is False  # no annotation: not read-only
        assert tools["mcp__demo__wipe"].info.destructive is True
        assert tools["mcp__demo__echo"].parameters["properties"]["text"]["type"] == "string"
        assert [p.full_name for p in h.prompts()] == ["mcp__demo__review", "mcp__demo__summarize"]
        assert [r.reference for r in h.resources()] == ["@demo:style://guide"]


def paged_server() -> Server:
    def page_of(params: types.PaginatedRequestParams | None) -> tuple[int, str | None]:
        page = int(params.cursor) if params is not None and params.cursor else 0
        return page, (str(page + 1) if page < 2 else None)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        page, nxt = page_of(params)
        tools = [types.Tool(name=f"t{page}_{i}", input_schema={"type": "object"}) for i in range(2)]
        return types.ListToolsResult(tools=tools, next_cursor=nxt)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        page, nxt = page_of(params)
        return types.ListPromptsResult(prompts=[types.Prompt(name=f"p{page}")], next_cursor=nxt)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        page, nxt = page_of(params)
        resources = [types.Resource(name=f"r{page}", uri=f"mem://r{page}")]
        return types.ListResourcesResult(resources=resources, next_cursor=nxt)

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    return Server(
        "paged",
        on_list_tools=list_tools,
        on_list_prompts=list_prompts,
        on_list_resources=list_resources,
        on_call_tool=call_tool,
    )


async def test_pagination_consumes_every_cursor_page(tmp_path: Path) -> None:
    async with opened(tmp_path, paged_server(), name="paged") as h:
        (status,) = h.status()
        assert (status.tools, status.prompts, status.resources) == (6, 3, 3)
        assert [t.info.remote_name for t in h.tools()] == [
            "t0_0",
            "t0_1",
            "t1_0",
            "t1_1",
            "t2_0",
            "t2_1",
        ]
        result = await UseCapabilityTool(McpCapabilities(h)).execute(
            {"action": "call", "name": "mcp__paged__t2_1"}, context(tmp_path)
        )
        assert result.text == "t2_1" and not result.is_error


async def test_progress_notifications_become_tool_progress_events(tmp_path: Path) -> None:
    events: list[ToolProgress] = []
    async with opened(tmp_path, demo_server()) as h:
        proxy = UseCapabilityTool(McpCapabilities(h))
        result = await proxy.execute(
            {"action": "call", "name": "mcp__demo__slow", "arguments": {"seconds": 0.01}},
            context(tmp_path, tool_progress=events.append),
        )
    assert result.text == "slept 0.01"
    # Progress only flows when the request carried _meta.progressToken.
    assert [(e.name, e.progress, e.total) for e in events] == [
        ("mcp__demo__slow", 1.0, 2.0),
        ("mcp__demo__slow", 2.0, 2.0),
    ]
    assert events[0].message == "half" and events[0].kind == "tool_progress"


async def test_errors_come_back_to_the_model_as_results(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server()) as h:
        proxy, ctx = UseCapabilityTool(McpCapabilities(h)), context(tmp_path)
        failing = await proxy.execute({"action": "call", "name": "mcp__demo__failing"}, ctx)
        assert (failing.text, failing.is_error, failing.outcome) == ("disk full", True, "error")
        bad_args = await proxy.execute(
            {"action": "call", "name": "mcp__demo__slow", "arguments": {"seconds": "soon"}}, ctx
        )
        assert bad_args.is_error
        unknown = await proxy.execute({"action": "call", "name": "mcp__demo__ech"}, ctx)
        assert unknown.is_error and "mcp__demo__echo" in unknown.text  # suggests the near miss
        other = await proxy.execute({"action": "inspect", "name": "mcp__nosuch__x"}, ctx)
        assert other.is_error and "demo" in other.text
        missing = await proxy.execute({"action": "call"}, ctx)
        assert missing.is_error and "needs name" in missing.text
        wrong = await proxy.execute(
            {"action": "call", "name": "mcp__demo__echo", "arguments": [1]}, ctx
        )
        assert wrong.is_error and "JSON object" in wrong.text
        # A JSON string is accepted too (some models send one).
        stringly = await proxy.execute(
            {"action": "call", "name": "mcp__demo__echo", "arguments": '{"text": "s"}'}, ctx
        )
        assert stringly.text == "s"


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_roots_list_answers_with_the_workspace(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server()) as h:
        result = await UseCapabilityTool(McpCapabilities(h)).execute(
            {"action": "call", "name": "mcp__demo__roots"}, context(tmp_path)
        )
    assert json.loads(result.text) == [tmp_path.as_uri()]


async def test_list_and_inspect(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server()) as h:
        proxy, ctx = UseCapabilityTool(McpCapabilities(h)), context(tmp_path)
        listing = (await proxy.execute({"action": "list"}, ctx)).text
        assert "server demo (ready, 6 tools)" in listing
        assert "- mcp__demo__echo [read-only]: Return the text." in listing
        assert "- mcp__demo__wipe [may write]" in listing
        inspected = (
            await proxy.execute({"action": "inspect", "name": "mcp__demo__echo"}, ctx)
        ).text
        assert inspected.startswith("mcp__demo__echo (MCP server demo, read-only)")
        schema = json.loads(inspected.split("arguments schema:\n", 1)[1])
        assert schema["required"] == ["text"] and "title" not in schema


async def measure_overlap(tmp_path: Path, concurrency: str) -> int:
    """How many of three calls were inside the server at once. Each call waits
    until all three are in (returning as soon as they are), or gives up: at once
    for a server that runs them together, after 0.3 s for one that cannot."""
    srv = demo_server()
    active = srv.active  # type: ignore[attr-defined]
    met = anyio.Event()
    within = 60.0 if concurrency == "parallel" else 0.3

    @srv.tool()
    async def meet() -> str:
        """Wait until three calls are inside at once (bounded)."""
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        if active["max"] >= 3:
            met.set()
        try:
            with anyio.move_on_after(within):
                await met.wait()
        finally:
            active["now"] -= 1
        return "met" if met.is_set() else "alone"

    async with opened(tmp_path, srv, concurrency=concurrency) as h:
        tool = next(t for t in h.tools() if t.name == "mcp__demo__meet")
        ctx = context(tmp_path)
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(tool.execute, {}, ctx)
    return active["max"]


async def test_a_per_tool_timeout_bounds_that_tool_only(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server(), call_timeout=10.0, tool_timeouts={"slow": 0.2}) as h:
        tools = {t.name: t for t in h.tools()}
        ctx = context(tmp_path)
        started = time.monotonic()
        late = await tools["mcp__demo__slow"].execute({"seconds": 2.0}, ctx)
        assert time.monotonic() - started < 1.5
        assert late.is_error and late.outcome == "unknown"
        assert "no answer within 0.2s (tool_timeout_seconds.slow)" in late.text
        fine = await tools["mcp__demo__echo"].execute({"text": "hi"}, ctx)
        assert not fine.is_error


async def test_serial_server_runs_one_call_at_a_time(tmp_path: Path) -> None:
    assert await measure_overlap(tmp_path / "p", "parallel") == 3
    assert await measure_overlap(tmp_path / "s", "serial") == 1


async def test_queued_serial_call_honours_cancellation(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server(), concurrency="serial") as h:
        tool = next(t for t in h.tools() if t.name == "mcp__demo__slow")
        ctx = context(tmp_path)
        results: list[str] = []

        async def first() -> None:
            results.append((await tool.execute({"seconds": 0.4}, ctx)).text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.sleep(0.05)
            started = time.monotonic()
            with anyio.move_on_after(0.05):  # the queued call gives up while waiting
                await tool.execute({"seconds": 0.01}, ctx)
            waited = time.monotonic() - started
        assert waited < 0.3 and results == ["slept 0.4"]


async def test_writers_behind_the_proxy_run_alone(tmp_path: Path) -> None:
    srv = demo_server()
    async with opened(tmp_path, srv) as h:
        proxy, ctx = UseCapabilityTool(McpCapabilities(h)), context(tmp_path)
        call = {"action": "call", "name": "mcp__demo__slow", "arguments": {"seconds": 0.05}}
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(proxy.execute, call, ctx)
    assert srv.active["max"] == 1  # type: ignore[attr-defined]  # `slow` is not read-only


def gate_for(tmp_path: Path, **rules: Any) -> PermissionGate:
    policy = Policy.from_config(PermissionsConfig(**rules), tmp_path)
    return PermissionGate(policy, FailClosedApprover())


async def test_proxy_checks_the_real_target_against_the_session_gate(tmp_path: Path) -> None:
    wiped: list[str] = []
    async with opened(tmp_path, demo_server(wiped)) as h:
        proxy = UseCapabilityTool(McpCapabilities(h))
        wipe = {"action": "call", "name": "mcp__demo__wipe"}

        denied = await proxy.execute(
            wipe, context(tmp_path, gate=gate_for(tmp_path, deny=["mcp__demo__wipe"]))
        )
        assert denied.outcome == "denied" and "mcp__demo__wipe" in denied.text
        server_deny = gate_for(tmp_path, deny=["mcp__demo"])
        assert (await proxy.execute(wipe, context(tmp_path, gate=server_deny))).outcome == "denied"
        # An explicit ask rule cannot be answered headless: fails closed.
        asked = await proxy.execute(
            wipe, context(tmp_path, gate=gate_for(tmp_path, ask=["mcp__demo__wipe"]))
        )
        assert asked.outcome == "denied" and "headless" in asked.text
        # mode = "deny" makes unlisted writers fall back to deny, MCP included.
        strict = gate_for(tmp_path, mode="deny")
        assert (await proxy.execute(wipe, context(tmp_path, gate=strict))).outcome == "denied"
        # ... while a read-only target is still allowed by default.
        echo = {"action": "call", "name": "mcp__demo__echo", "arguments": {"text": "ok"}}
        assert (await proxy.execute(echo, context(tmp_path, gate=strict))).text == "ok"
        assert wiped == []
        # Declaring the server trusts its tools: the default "ask" fallback does not block.
        trusted = await proxy.execute(wipe, context(tmp_path, gate=gate_for(tmp_path)))
        assert trusted.text == "wiped" and wiped == ["wipe"]
        allowed = gate_for(tmp_path, allow=["mcp__demo__wipe"], deny=["mcp__demo__plain"])
        assert (await proxy.execute(wipe, context(tmp_path, gate=allowed))).text == "wiped"
        # list and inspect never consult the gate.
        everything_denied = gate_for(tmp_path, deny=["mcp__demo"])
        listing = await proxy.execute({"action": "list"}, context(tmp_path, gate=everything_denied))
        assert not listing.is_error


async def test_prompts_are_slash_commands_with_mapped_arguments(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server()) as h:
        assert await h.render_prompt("/mcp__demo__review", "src/app.py error handling") == (
            "Review src/app.py for error handling"
        )
        assert (
            await h.render_prompt("mcp__demo__review", "focus=naming path=a.py")
            == "Review a.py for naming"
        )
        assert await h.render_prompt("mcp__demo__review", '"my file.py"') == "Review my file.py"
        # A single declared argument takes the whole text.
        assert (
            await h.render_prompt("mcp__demo__summarize", "one two  three")
            == "Summarise: one two  three"
        )
        with pytest.raises(ValueError, match="needs path"):
            await h.render_prompt("mcp__demo__review", "")
        with pytest.raises(LookupError):
            await h.render_prompt("mcp__demo__nope", "")
        review = next(p for p in h.prompts() if p.remote_name == "review")
        assert review.argument_hint == "<path> [focus]"


async def test_resource_references_are_read(tmp_path: Path) -> None:
    async with opened(tmp_path, demo_server()) as h:
        text, notices = await h.expand_resource_references(
            "Follow @demo:style://guide. Mail me at bob@demo:x? and see @other:thing"
        )
        assert text.endswith('<resource ref="demo:style://guide">\nUse four spaces.\n</resource>')
        assert "@other:thing" in text and not notices  # not a server: left alone
        _, notices = await h.expand_resource_references("@demo:style://missing")
        assert notices and "@demo:style://missing" in notices[0]


@asynccontextmanager
async def gated(gate: anyio.Event, srv: Any):
    await gate.wait()
    async with InMemoryTransport(srv) as streams:
        yield streams


async def test_a_listing_waits_for_a_late_server(tmp_path: Path) -> None:
    release = anyio.Event()
    h = host(tmp_path, server("late"), connectors={"late": lambda: gated(release, demo_server())})
    async with h:
        proxy = UseCapabilityTool(McpCapabilities(h))
        listings: list[str] = []

        async def listing() -> None:
            listings.append((await proxy.execute({"action": "list"}, context(tmp_path))).text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(listing)
            await wait_until(lambda: h.status()[0].phase == "starting")
            await anyio.sleep(0.05)
            assert not listings  # still waiting for the server
            release.set()
        assert "server late (ready" in listings[0] and "mcp__late__echo" in listings[0]


async def test_a_call_to_a_late_server_waits_for_it(tmp_path: Path) -> None:
    release = anyio.Event()
    h = host(tmp_path, server("late"), connectors={"late": lambda: gated(release, demo_server())})
    async with h:
        proxy = UseCapabilityTool(McpCapabilities(h))
        result: list[Any] = []

        async def call() -> None:
            result.append(
                await proxy.execute(
                    {"action": "call", "name": "mcp__late__echo", "arguments": {"text": "hi"}},
                    context(tmp_path),
                )
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await anyio.sleep(0.05)
            assert not result
            release.set()
        assert result[0].text == "hi"


@asynccontextmanager
async def never(_: Any = None):
    await anyio.sleep_forever()
    yield  # pragma: no cover


async def test_hung_start_up_fails_within_its_timeout_and_the_rest_goes_on(tmp_path: Path) -> None:
    h = host(
        tmp_path,
        server("stuck", startup_timeout=0.3),
        server("demo"),
        connectors={"stuck": never, "demo": memory(demo_server())},
    )
    started = time.monotonic()
    async with h:
        statuses = {s.name: s for s in await h.wait_ready()}
        assert time.monotonic() - started < 2
        stuck = statuses["stuck"]
        assert (stuck.phase, stuck.error_class) == ("failed", "TimeoutError")
        assert "timed out after 0.3s" in stuck.reason and stuck.tools == 0
        assert statuses["demo"].phase == "ready"
        proxy = UseCapabilityTool(McpCapabilities(h))
        listing = (await proxy.execute({"action": "list"}, context(tmp_path))).text
        assert "server stuck (failed: start-up timed out" in listing
        result = await proxy.execute({"action": "call", "name": "mcp__stuck__x"}, context(tmp_path))
        assert result.is_error and "failed" in result.text
        assert [t.name for t in h.tools() if t.name.startswith("mcp__stuck")] == []


async def test_status_records_hold_no_secrets(tmp_path: Path) -> None:
    secret = "tok-123-very-secret"
    h = host(
        tmp_path,
        server(
            "remote",
            transport="http",
            url=f"http://127.0.0.1:1/mcp?key={secret}",
            headers={"Authorization": f"Bearer {secret}"},
            startup_timeout=2,
        ),
    )
    async with h:
        (status,) = await h.wait_ready()
    assert status.phase == "failed" and status.error_class and status.reason
    assert secret not in repr(status) and secret not in json.dumps(status.to_json())
    assert "127.0.0.1" not in json.dumps(status.to_json())


async def test_host_without_servers_starts_nothing(tmp_path: Path) -> None:
    h = McpHost(
        __import__("reasonix_core.mcp", fromlist=["McpSetup"]).McpSetup(), workspace=tmp_path
    )
    async with h:
        assert h.status() == [] and not h.configured and await h.wait_ready() == []


async def test_a_deferred_host_starts_its_servers_at_start_now_or_first_use(
    tmp_path: Path,
) -> None:
    opened: list[str] = []

    @asynccontextmanager
    async def counted(name: str):
        opened.append(name)
        async with InMemoryTransport(demo_server()) as streams:
            yield streams

    connectors = {"a": lambda: counted("a"), "b": lambda: counted("b")}
    h = host(tmp_path, server("a"), server("b"), connectors=connectors, deferred=True)
    async with h:
        for _ in range(20):  # let every task that could run, run
            await anyio.lowlevel.checkpoint()
        assert opened == [] and {s.phase for s in h.status()} == {"starting"}
        h.start_now()
        await h.wait_ready()
        assert sorted(opened) == ["a", "b"]
    # First use starts them too: a call resolves without start_now().
    opened.clear()
    h = host(tmp_path, server("a"), connectors=connectors, deferred=True)
    async with h:
        tool = await h.resolve_tool("mcp__a__echo")
        assert tool.info.full_name == "mcp__a__echo" and opened == ["a"]
