"""Helpers for the MCP host tests: server declarations, fixture servers, contexts."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from reasonix_core.mcp.config import McpServerConfig, McpSetup, sanitize
from reasonix_core.mcp.host import McpHost
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.env import SessionEnv

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
STDIO_SERVER = FIXTURES / "mcp_stdio_server.py"
HTTP_SERVER = FIXTURES / "mcp_http_server.py"
EXAMPLE_SERVER = ROOT / "examples" / "reasonix-plugin-example" / "server.py"
EVERYTHING_JS = (
    ROOT
    / ".cache"
    / "npm"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


async def wait_until(predicate: Any, within: float = 60.0) -> None:
    """Poll ``predicate`` (state owned by other tasks or processes) until true."""
    with anyio.fail_after(within):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.02)


def everything_available() -> bool:
    return EVERYTHING_JS.is_file() and shutil.which("node") is not None


def server(name: str, **fields: Any) -> McpServerConfig:
    fields.setdefault("transport", "stdio")
    fields.setdefault("command", "unused")
    fields.setdefault("startup_timeout", 10.0)
    fields.setdefault("call_timeout", 10.0)
    return McpServerConfig(name=name, key=sanitize(name), **fields)


def stdio_server(name: str, mode: str = "serve", *extra: str, **fields: Any) -> McpServerConfig:
    return server(name, command=sys.executable, args=(str(STDIO_SERVER), mode, *extra), **fields)


def host(tmp_path: Path, *servers: McpServerConfig, **options: Any) -> McpHost:
    options.setdefault("backoff", (0.05, 0.2))
    return McpHost(
        McpSetup(tuple(servers)), workspace=tmp_path, log_dir=tmp_path / "logs", **options
    )


#: The session facts a test may give :func:`context` (the rest are the context's own).
_ENV_FACTS = {f.name for f in dataclasses.fields(SessionEnv)}


def context(tmp_path: Path, **fields: Any) -> ToolContext:
    facts = {k: v for k, v in fields.items() if k in _ENV_FACTS}
    own = {k: v for k, v in fields.items() if k not in _ENV_FACTS}
    return ToolContext(env=SessionEnv(workspace=tmp_path, temp_dir=tmp_path, **facts), **own)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listens on {port}")


@contextmanager
def http_process(
    argv: list[str], port: int, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        argv,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); look at its state.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def trust_folder(workspace: Path) -> None:
    """Record trust for ``workspace``'s project files as they are now (``reasonix trust``)."""
    from reasonix_core.home import reasonix_home
    from reasonix_core.trust import record_trust, review_project

    home = reasonix_home()
    record_trust(review_project(workspace, home), home)
