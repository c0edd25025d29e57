"""MCP inside a session: the stable proxy keeps the request prefix fixed while servers
start late; the proxy exists exactly when servers are declared; headless waits for the
servers, the TUI does not; ``reasonix run`` reaches the example plugin end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client._memory import InMemoryTransport

from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV
from tests.core.agent_helpers import bodies, run_turn
from tests.core.mcp_helpers import (
    EXAMPLE_SERVER,
    STDIO_SERVER,
    host,
    server,
    trust_folder,
    wait_until,
)
from tests.core.test_mcp_host import demo_server


class Interactive(FailClosedApprover):
    interactive = True


def declare_example(workspace: Path, **extra: str) -> None:
    lines = [
        "[[mcp.servers]]",
        'name = "example"',
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(EXAMPLE_SERVER))}]",
        *(f"{k} = {v}" for k, v in extra.items()),
    ]
    (workspace / "reasonix.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    trust_folder(workspace)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


@asynccontextmanager
async def gated(release: anyio.Event):
    await release.wait()
    async with InMemoryTransport(demo_server()) as streams:
        yield streams


async def test_prefix_is_stable_while_a_server_becomes_ready_mid_turn(
    workspace: Path, configured: Any, tmp_path: Path
) -> None:
    call = {"action": "call", "name": "mcp__late__echo", "arguments": {"text": "hello"}}
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]),
        Reply(content="done"),
    )
    release = anyio.Event()
    seen: list[str] = []
    h = host(tmp_path, server("late"), connectors={"late": lambda: gated(release)})
    async with h:
        settings = RunSettings(workspace=workspace, mcp_wait=False)
        async with build_session(settings, approver=FailClosedApprover(), mcp_host=h) as rt:

            async def release_after_step_one() -> None:
                await wait_until(lambda: configured.requests)
                seen.append(h.status()[0].phase)
                release.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(release_after_step_one)
                events = await run_turn(rt, "say hello through the plugin")
    first, second = bodies(configured)
    assert seen == ["starting"]  # step 1 went out before the server was ready
    assert h.status()[0].phase == "stopped"
    # The server became ready in between, yet the tools array is byte-identical.
    assert json.dumps(first["tools"], sort_keys=True) == json.dumps(second["tools"], sort_keys=True)
    assert "use_capability" in tool_names(first)
    assert not [n for n in tool_names(first) if n.startswith("mcp__")]
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "hello"
    assert not [e for e in events if e.kind == "prefix_changed"]


async def test_the_proxy_is_always_last_and_the_same_with_or_without_servers(
    workspace: Path, configured: Any
) -> None:
    # use_capability carries the session's own capabilities too, so every session has
    # it, and declaring (or disabling) a server changes no byte of the tool list.
    async with build_session(RunSettings(workspace=workspace), approver=FailClosedApprover()) as rt:
        assert rt.agent.tools.names[-1] == "use_capability" and rt.mcp is None
        builtin_fingerprint = rt.agent.tools.fingerprint
        assert rt.agent.tool_context.gate is rt.agent.gate
    declare_example(workspace, enabled="false")
    async with build_session(RunSettings(workspace=workspace), approver=FailClosedApprover()) as rt:
        assert rt.agent.tools.fingerprint == builtin_fingerprint  # declared but disabled
    declare_example(workspace)
    async with build_session(
        RunSettings(workspace=workspace, mcp_wait=False), approver=FailClosedApprover()
    ) as rt:
        assert rt.agent.tools.names[-1] == "use_capability"
        assert rt.agent.tools.get("use_capability").read_only is True
        assert rt.agent.tools.fingerprint == builtin_fingerprint


async def test_no_surface_waits_for_servers_before_the_first_request(
    workspace: Path, configured: Any
) -> None:
    declare_example(workspace)
    for approver in (FailClosedApprover(), Interactive()):  # headless, then the TUI
        async with build_session(RunSettings(workspace=workspace), approver=approver) as rt:
            assert [s.phase for s in rt.mcp.status()] == ["starting"]  # did not wait
            await rt.mcp.wait_ready()
            assert [s.phase for s in rt.mcp.status()] == ["ready"]


def test_reasonix_run_calls_the_example_plugin_end_to_end(workspace: Path, configured: Any) -> None:
    declare_example(workspace)
    listing = {"action": "list"}
    call = {
        "action": "call",
        "name": "mcp__example__wordcount",
        "arguments": {"text": "one two three"},
    }
    configured.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("use_capability", json.dumps(listing)),
                ToolCallSpec("use_capability", json.dumps(call)),
            ]
        ),
        Reply(content="It has three words."),
    )
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reasonix_tui.cli",
            "run",
            "count the words",
            "--output-format",
            "json",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["result"] == "It has three words."
    first, second = bodies(configured)
    assert tool_names(first) == tool_names(second) and "use_capability" in tool_names(first)
    results = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    # The listing waited for the server still starting: it names its tools.
    assert "server example (ready, 2 tools)" in results[0]
    assert "mcp__example__echo [read-only]" in results[0]
    assert results[1] == "3 words, 1 lines, 13 characters"
    assert result["metrics"]["tool_calls_by_name"] == {"use_capability": 2}
    assert "Traceback" not in proc.stderr
    logs = Path(os.environ["REASONIX_HOME"]) / "logs" / "mcp-example.log"
    assert "ready: 2 tools" in logs.read_text()


def test_mcp_list_shows_status_and_problems(workspace: Path, home: Path) -> None:
    declare_example(workspace)
    with (workspace / "reasonix.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[[mcp.servers]]\nname = "typo"\ncomand = "x"\n')
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"gone": {"command": str(workspace / "no-such-binary")}}})
    )
    trust_folder(workspace)

    def mcp_list(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "reasonix_tui.cli", "mcp", "list", *flags],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )

    proc = mcp_list("--json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert (rows["example"]["phase"], rows["example"]["tools"], rows["example"]["prompts"]) == (
        "ready",
        2,
        1,
    )
    assert rows["gone"]["phase"] == "failed" and rows["gone"]["error_class"] == "FileNotFoundError"
    assert rows["typo"]["phase"] == "invalid"
    text = mcp_list("--no-connect")
    assert text.returncode == 0 and "pending" in text.stdout
    assert f"{workspace / 'reasonix.toml'}: MCP server 'typo': unknown key 'comand'" in text.stdout
    assert proc.stderr == "" and text.stderr == ""


async def test_tui_services_start_servers_with_the_app_and_share_them(
    workspace: Path, configured: Any, home: Path
) -> None:
    from reasonix_tui.engine import EngineServices

    declare_example(workspace)
    call = {"action": "call", "name": "mcp__example__echo", "arguments": {"text": "from the tui"}}
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]), Reply(content="ok")
    )
    services = EngineServices(workspace, home=home)
    assert [(v.name, v.state) for v in services.mcp_status()] == [("example", "connecting")]
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        await wait_until(lambda: services.mcp_status()[0].state == "ready")
        view = services.mcp_status()[0]
        assert (view.transport, view.tools, view.prompts, view.resources) == ("stdio", 2, 1, 1)
        runner = services.new_runner(Interactive())
        events = [e async for e in runner.run("echo something")]
        assert events[-1].kind == "turn_finished"
        tool_message = next(m for m in bodies(configured)[1]["messages"] if m["role"] == "tool")
        assert tool_message["content"] == "from the tui"
        services.reconnect_mcp("example")
        await wait_until(lambda: services.mcp_status()[0].reconnects == 1)
        await wait_until(lambda: services.mcp_status()[0].state == "ready")
        tg.cancel_scope.cancel()
    assert services.mcp_status()[0].state == "stopped"  # closed with the app


async def test_progress_reaches_the_event_stream_tagged_with_the_models_call_id(
    workspace: Path, configured: Any
) -> None:
    from reasonix_core import events as ev

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_stdio_server.py"
    (workspace / "reasonix.toml").write_text(
        "[[mcp.servers]]\n"
        'name = "fx"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(fixture))}]\n",
        encoding="utf-8",
    )
    trust_folder(workspace)
    call = {"action": "call", "name": "mcp__fx__slow", "arguments": {"seconds": 0.3}}
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]),
        Reply(content="done"),
    )
    settings = RunSettings(workspace=workspace)
    async with build_session(settings, approver=FailClosedApprover()) as rt:
        events = await run_turn(rt, "be slow")
    kinds = [e.kind for e in events]
    started = next(e for e in events if isinstance(e, ev.ToolCallStarted))
    progress = [e for e in events if isinstance(e, ev.ToolProgress)]
    assert [(p.progress, p.total, p.message) for p in progress] == [
        (0, 2, "started"),
        (1, 2, "half way"),
    ]
    assert all(p.call_id == started.call_id for p in progress)
    first_progress = kinds.index("tool_progress")
    assert kinds.index("tool_call_started") < first_progress < kinds.index("tool_call_finished")
    finished = next(e for e in events if isinstance(e, ev.ToolCallFinished))
    assert "slept 0.3" in finished.result


def test_headless_run_says_which_servers_are_unavailable(workspace: Path, configured: Any) -> None:
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"gone": {"command": str(workspace / "no-such-binary")}}})
    )
    trust_folder(workspace)
    # The run does not wait for servers; the model's listing does, and the failure
    # it learns of is said on standard error.
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps({"action": "list"}))]),
        Reply(content="fine without it"),
    )
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", "run", "hi"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "fine without it" in proc.stdout
    assert "MCP server 'gone' is unavailable" in proc.stderr


def test_reasonix_run_sends_the_first_request_while_a_server_is_still_starting(
    workspace: Path, configured: Any, tmp_path: Path
) -> None:
    """A stdio server that cannot start until the first request has arrived: a run
    that waited for servers would hang until the start-up timeout instead."""
    release = tmp_path / "release"
    declare = (
        "[[mcp.servers]]\n"
        'name = "slow"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(STDIO_SERVER))}, 'serve', '--wait-for', "
        f"{json.dumps(str(release))}]\n"
        "startup_timeout_seconds = 60\n"
    )
    (workspace / "reasonix.toml").write_text(declare, encoding="utf-8")
    trust_folder(workspace)
    call = {"action": "call", "name": "mcp__slow__echo", "arguments": {"text": "late hello"}}
    replies = [
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]),
        Reply(content="done"),
    ]

    def responder(request: Any) -> Reply:
        release.touch()  # the server may start only now
        return replies.pop(0)

    configured.responder = responder
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", "run", "echo it", "--output-format", "json"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    first, second = bodies(configured)
    # The call waited for the server that was still starting, then went through.
    assert [m["content"] for m in second["messages"] if m["role"] == "tool"] == ["late hello"]
    assert tool_names(first) == tool_names(second)
