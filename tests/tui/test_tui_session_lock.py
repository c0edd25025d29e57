"""Issue 29 item 10, the TUI: a session already open in another process is
refused on resume with a clear message naming that process, and nothing is sent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_testkit import Reply
from reasonix_tui.engine import EngineServices

pytestmark = pytest.mark.usefixtures("configured")

HOLD = """
import sys
from pathlib import Path
from reasonix_core.agent.session_lock import session_lock
with session_lock(Path(sys.argv[1]), "held"):
    print("held", flush=True)
    sys.stdin.read()
"""


def _hold(path: Path) -> subprocess.Popen[str]:
    """Another real process holding the session's lock until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _release(holder: subprocess.Popen[str]) -> None:
    holder.communicate("", timeout=60)


async def _one_turn(services: EngineServices, prompt: str) -> list[ev.Event]:
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        turn = [e async for e in runner.run(prompt)]
        tg.cancel_scope.cancel()
    return turn


async def test_resuming_a_session_open_elsewhere_is_refused_naming_it(
    workspace: Path, home: Path, server
) -> None:
    server.enqueue(Reply(content="first"))
    first = await _one_turn(EngineServices(workspace, home=home), "hello")
    assert isinstance(first[-1], ev.TurnFinished)
    (path,) = list((home / "sessions").rglob("*.jsonl"))
    holder = _hold(path)
    try:
        size = path.stat().st_size
        turn = await _one_turn(EngineServices(workspace, home=home, continue_last=True), "again")
        failed = turn[-1]
        assert isinstance(failed, ev.TurnFailed), turn
        assert f"pid {holder.pid}" in failed.error and "in use" in failed.error
        assert len(server.requests) == 1  # the refused session sent nothing
        assert path.stat().st_size == size  # and wrote nothing
    finally:
        _release(holder)
    server.enqueue(Reply(content="second"))
    turn = await _one_turn(EngineServices(workspace, home=home, continue_last=True), "again")
    assert isinstance(turn[-1], ev.TurnFinished)


async def test_a_later_prompt_takes_the_session_once_the_other_process_quit(
    workspace: Path, home: Path, server
) -> None:
    """Issue 30 N4: the refusal is not cached for the app's life: once the other
    process quits, the next prompt in the same app opens the session."""
    server.enqueue(Reply(content="first"))
    await _one_turn(EngineServices(workspace, home=home), "hello")
    (path,) = list((home / "sessions").rglob("*.jsonl"))
    holder = _hold(path)
    services = EngineServices(workspace, home=home, continue_last=True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        try:
            refused = [e async for e in runner.run("while held")]
            assert isinstance(refused[-1], ev.TurnFailed), refused
            assert f"pid {holder.pid}" in refused[-1].error
        finally:
            _release(holder)
        server.enqueue(Reply(content="second"))
        turn = [e async for e in runner.run("after it quit")]
        assert isinstance(turn[-1], ev.TurnFinished), turn
        tg.cancel_scope.cancel()


async def test_a_resume_knows_at_once_that_another_process_has_the_session(
    workspace: Path, home: Path, server
) -> None:
    """Issue 30 N4: ``-c`` on a session open elsewhere can say so at start (the
    launch's saved session probes the lock), and not once it is free."""
    from reasonix_core.agent.session_lock import lock_holder
    from reasonix_tui.saved_session import SavedSession

    server.enqueue(Reply(content="first"))
    await _one_turn(EngineServices(workspace, home=home), "hello")
    (path,) = list((home / "sessions").rglob("*.jsonl"))
    holder = _hold(path)
    try:
        saved = SavedSession(home / "sessions", workspace, None)
        assert saved.busy_pid() == holder.pid
    finally:
        _release(holder)
    assert lock_holder(path) is None
    assert SavedSession(home / "sessions", workspace, None).busy_pid() is None
