"""A headless run whose MCP servers go unused does not wait for them (issue 31 item 5):
a run that does not use them never spawns them, and a server the run used is gone
when the run has exited. Real ``reasonix run`` processes, a real stdio server
(the example plugin, launched through ``sh`` so its pid is known)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix
from tests.core.mcp_helpers import EXAMPLE_SERVER, trust_folder

DEADLINE = 30.0


def _declare(workspace: Path, mark: Path) -> None:
    launch = f"echo $$ > {mark}; exec {sys.executable} {EXAMPLE_SERVER}"
    (workspace / "reasonix.toml").write_text(
        f'[[mcp.servers]]\nname = "example"\ncommand = "sh"\nargs = {json.dumps(["-c", launch])}\n',
        encoding="utf-8",
    )
    trust_folder(workspace)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_for(condition: Any) -> bool:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_run_that_does_not_use_its_servers_never_spawns_them(
    configured: Any, workspace: Path, tmp_path: Path
) -> None:
    """A tool call, then an answer long enough for a server to have been spawned had
    it been started: the server is never spawned, so the run never waits for it."""
    mark = tmp_path / "server.pid"
    _declare(workspace, mark)
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("ls", "{}")]),
        Reply(content="hello " * 10, chunk_size=3, delay=0.1),
    )
    proc = reasonix(workspace, "run", "list files")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(("hello " * 10).strip())
    assert not mark.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="sh and kill(pid, 0)")
def test_a_server_the_run_used_is_gone_after_exit(
    configured: Any, workspace: Path, tmp_path: Path
) -> None:
    mark = tmp_path / "server.pid"
    _declare(workspace, mark)
    call = {"action": "call", "name": "mcp__example__echo", "arguments": {"text": "hi-31"}}
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]),
        Reply(content="done"),
    )
    proc = reasonix(workspace, "run", "echo it")
    assert proc.returncode == 0, proc.stderr
    assert "hi-31" in json.dumps(configured.requests[-1].json)
    pid = int(mark.read_text())
    assert _wait_for(lambda: not _alive(pid)), f"MCP server {pid} outlived the run"
