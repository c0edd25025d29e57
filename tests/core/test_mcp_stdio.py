"""The host against a real Python stdio server subprocess: crash mid-call, hang at
initialise, garbage on stdout, exit at start, reconnect, bounded backoff, stderr to the
log file, and no process left behind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reasonix_core.mcp.capability import McpCapabilities
from reasonix_core.mcp.host import McpHost
from reasonix_core.tool.capability import UseCapabilityTool
from tests.core.mcp_helpers import context, host, pid_alive, stdio_server, wait_until


async def call(h: McpHost, tool: str, tmp_path: Path, **arguments: object):
    return await UseCapabilityTool(McpCapabilities(h)).execute(
        {"action": "call", "name": f"mcp__fx__{tool}", "arguments": arguments}, context(tmp_path)
    )


def log_text(tmp_path: Path, name: str = "fx") -> str:
    path = tmp_path / "logs" / f"mcp-{name}.log"
    return path.read_text() if path.exists() else ""


async def test_crash_mid_call_is_reported_not_replayed_and_the_server_comes_back(
    tmp_path: Path,
) -> None:
    h = host(tmp_path, stdio_server("fx"))
    async with h:
        await h.wait_ready()
        first_pid = int((await call(h, "pid", tmp_path)).text)
        assert (await call(h, "count", tmp_path)).text == "1"

        crashed = await call(h, "crash", tmp_path)
        assert crashed.is_error and crashed.outcome == "unknown"
        assert "may or may not have run" in crashed.text and "not retried" in crashed.text

        await wait_until(lambda: h.status()[0].phase == "ready" and h.status()[0].reconnects >= 1)
        second_pid = int((await call(h, "pid", tmp_path)).text)
        assert second_pid != first_pid and not pid_alive(first_pid)
        assert (await call(h, "count", tmp_path)).text == "1"  # a fresh process
        status = h.status()[0]
        assert status.generation == 2
    # The crash ran once: never replayed on the new process.
    assert log_text(tmp_path).count("crashing on purpose") == 1
    assert not pid_alive(second_pid)  # closing the host reaped the subprocess


async def test_hang_at_initialise_fails_at_the_startup_timeout(tmp_path: Path) -> None:
    h = host(tmp_path, stdio_server("fx", "hang", startup_timeout=0.5))
    started = time.monotonic()
    async with h:
        (status,) = await h.wait_ready()
        elapsed = time.monotonic() - started
        result = await call(h, "echo", tmp_path, text="x")
    assert status.phase == "failed" and status.error_class == "TimeoutError"
    assert 0.4 < elapsed < 5
    assert result.is_error and "failed" in result.text


async def test_garbage_on_stdout_fails_fast_with_a_protocol_reason(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    h = host(tmp_path, stdio_server("fx", "garbage", startup_timeout=20))
    started = time.monotonic()
    async with h:
        (status,) = await h.wait_ready()
    assert time.monotonic() - started < 5  # not the 20 s start-up timeout
    assert status.phase == "failed" and "not valid MCP" in status.reason
    assert "this is not json-rpc" not in status.reason
    # The SDK logs the parse failure; it lands in the log file, not on the terminal.
    captured = capfd.readouterr()
    assert "JSONRPC" not in captured.err and "Traceback" not in captured.err
    assert "Failed to parse JSONRPC message" in (tmp_path / "logs" / "mcp.log").read_text()


async def test_a_server_that_exits_at_start_is_reported(tmp_path: Path) -> None:
    h = host(tmp_path, stdio_server("fx", "exit"))
    async with h:
        (status,) = await h.wait_ready()
    assert status.phase == "failed" and "exited" in status.reason


async def test_reconnect_restarts_the_server(tmp_path: Path) -> None:
    h = host(tmp_path, stdio_server("fx"))
    async with h:
        await h.wait_ready()
        before = int((await call(h, "pid", tmp_path)).text)
        assert h.reconnect("fx")
        await wait_until(lambda: h.status()[0].generation == 2 and h.status()[0].phase == "ready")
        after = int((await call(h, "pid", tmp_path)).text)
        assert after != before and h.status()[0].reconnects == 1
        await wait_until(lambda: not pid_alive(before))


async def test_reconnects_are_bounded(tmp_path: Path) -> None:
    marker = tmp_path / "started-once"
    h = McpHost(
        __import__("reasonix_core.mcp", fromlist=["McpSetup"]).McpSetup(
            (stdio_server("fx", "once", str(marker)),)
        ),
        workspace=tmp_path,
        log_dir=tmp_path / "logs",
        backoff=(0.01, 0.02),
        max_attempts=2,
    )
    async with h:
        await h.wait_ready()
        assert h.status()[0].phase == "ready"
        crashed = await call(h, "crash", tmp_path)
        assert crashed.outcome == "unknown"
        await wait_until(lambda: h.status()[0].phase == "failed")
        status = h.status()[0]
    assert "gave up after 2 reconnect attempts" in status.reason
    assert status.generation == 3  # the first one, then exactly two attempts


async def test_server_stderr_goes_to_the_log_file_not_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    h = host(tmp_path, stdio_server("fx", "serve", "--stderr", "hello-from-server-stderr"))
    async with h:
        await h.wait_ready()
        assert (await call(h, "echo", tmp_path, text="ok")).text == "ok"
    captured = capfd.readouterr()
    assert "hello-from-server-stderr" not in captured.err + captured.out
    text = log_text(tmp_path)
    assert "hello-from-server-stderr" in text and "ready: 7 tools" in text
