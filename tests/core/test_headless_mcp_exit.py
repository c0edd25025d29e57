"""A headless run whose MCP servers go unused does not wait for them (issue 31 item 5):
a run that only answers never spawns them, and a server spawned for a run that went on
is gone when the run has exited. Real ``reasonix run`` processes, a real stdio server
(the example plugin, launched through ``sh`` so its pid is known)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reasonix_testkit import RecordedRequest, Reply, ToolCallSpec
from tests.conftest import reasonix
from tests.core.mcp_helpers import EXAMPLE_SERVER, trust_folder

DEADLINE = 30.0


def _declare(workspace: Path, mark: Path) -> None:
    launch = f"echo $$ > {mark}; exec {sys.executable} {EXAMPLE_SERVER}"
    (workspace / "reasonix.toml").write_text(
        '[[mcp.servers]]\nname = "example"\ncommand = "sh"\n'
        f"args = {json.dumps(['-c', launch])}\n",
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


def test_a_run_that_only_answers_never_spawns_its_servers(
    configured: Any, workspace: Path, tmp_path: Path
) -> None:
    mark = tmp_path / "server.pid"
    _declare(workspace, mark)
    # Long enough an answer for the server to have been spawned, had it been started.
    configured.enqueue(Reply(content="hello " * 10, chunk_size=3, delay=0.1))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ("hello " * 10).strip()
    assert not mark.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="sh and kill(pid, 0)")
def test_a_server_spawned_for_a_run_that_went_on_is_gone_after_exit(
    configured: Any, workspace: Path, tmp_path: Path
) -> None:
    """The run calls ``ls`` (so it goes on, and the server starts); its last answer
    waits until the server has been spawned; nothing uses the server."""
    mark = tmp_path / "server.pid"
    _declare(workspace, mark)

    def responder(request: RecordedRequest) -> Reply:
        messages = (request.json or {}).get("messages") or []
        if messages[-1].get("role") == "user":
            return Reply(tool_calls=[ToolCallSpec("ls", "{}")])
        assert _wait_for(lambda: mark.exists() and mark.read_text().strip())
        return Reply(content="done")

    configured.responder = responder
    proc = reasonix(workspace, "run", "list files")
    assert proc.returncode == 0, proc.stderr
    pid = int(mark.read_text())
    assert _wait_for(lambda: not _alive(pid)), f"MCP server {pid} outlived the run"
