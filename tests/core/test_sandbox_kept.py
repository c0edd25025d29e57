"""The sandbox kept per session (tool/kept_sandbox.py) attacked where it differs from a
fresh bubblewrap: its zygote outlives a command, so it must fail closed when killed,
stopped or written to, keep commands away from it, kill and sweep everything after each
command, go fresh for what it must not hold, and leave no process behind.

The invariants it shares with a fresh bubblewrap run on both paths in
``test_sandbox_per_command.py``. Real bubblewrap, real processes; nothing here bounds a
wall time (timeouts are the tool's own ``timeout_seconds``)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import ApprovalDecision
from reasonix_core.permission.gate import PermissionGate
from reasonix_core.permission.policy import Policy
from reasonix_core.permission.write_grants import WriteGrants
from reasonix_core.tool import shell_sandbox
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.kept_sandbox import KeptLease
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.sandbox_keeper import SandboxKeeper
from reasonix_testkit import Reply, ScriptedApprover, ToolCallSpec
from tests.core.agent_helpers import run_turn, runtime
from tests.core.tool_helpers import (
    all_gone,
    descendants,
    kept_pids,
    kept_sandbox_ctx,
    run_bash,
    running,
    sandbox_ctx,
    tag_gone,
)

needs_bwrap = pytest.mark.skipif(
    shell_sandbox.bwrap_available() is None, reason="bwrap is not usable here"
)
pytestmark = [pytest.mark.sandbox, needs_bwrap]

ROOT = Path(__file__).resolve().parents[2]
# What pid 1 is: the kept sandbox's zygote, or a fresh bubblewrap's own init.
WHO_IS_PID_1 = "tr '\\0' ' ' < /proc/1/cmdline; echo"
ZYGOTE_MARK = "-I -S - "


@pytest.fixture
async def keeper() -> AsyncIterator[SandboxKeeper]:
    keeper = SandboxKeeper()
    try:
        yield keeper
    finally:
        pids = kept_pids(keeper)
        await keeper.aclose()
        assert await all_gone(pids), f"left running after the keeper closed: {pids}"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder the sandbox sees read-only (outside /tmp, which it replaces)."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(Path.home())
    path = Path(tempfile.mkdtemp(prefix="rx-kept-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _ctx(keeper: SandboxKeeper, dirs: tuple[Path, Path], **policy: object) -> ToolContext:
    return kept_sandbox_ctx(keeper, *dirs, **policy)


def _only(keeper: SandboxKeeper) -> tuple[int, int]:
    """(bubblewrap pid, zygote pid) of the one kept sandbox."""
    (kept,) = keeper.sandboxes
    return kept.bwrap.pid, kept.zygote_pid


async def _confined(ctx: ToolContext, outside: Path) -> str:
    """Run a command that tries to write ``outside``; its output (it must not have)."""
    result = await run_bash(ctx, f"{WHO_IS_PID_1}; echo x > {outside}/escaped; echo ran")
    assert "ran" in result.text, result.text
    assert not (outside / "escaped").exists(), "a command ran unconfined"
    return result.text


async def _wait_for(path: Path) -> None:
    with anyio.fail_after(30):
        while True:
            if path.exists():
                return
            await anyio.sleep(0.02)


async def _until_not_running(pid: int) -> None:
    """Until ``pid`` is stopped or gone (a signal is delivered asynchronously)."""
    with anyio.fail_after(30):
        while True:
            try:
                stat = Path(f"/proc/{pid}/stat").read_bytes()
            except OSError:
                return
            if stat.rsplit(b")", 1)[1].split()[0] in (b"T", b"Z"):
                return
            await anyio.sleep(0.02)


# -- it is used, and it is what it claims -------------------------------------------


async def test_commands_run_in_one_kept_sandbox_whose_pid_1_is_the_zygote(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ctx = _ctx(keeper, dirs)
    first = await _confined(ctx, outside)
    pids = _only(keeper)
    second = await _confined(ctx, outside)
    assert ZYGOTE_MARK in first and ZYGOTE_MARK in second
    assert _only(keeper) == pids and keeper.built == 1


async def test_commands_cannot_reach_the_zygote_or_its_channel(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    """Garbage to every descriptor number and to /proc/1/fd, its environ and memory,
    ptrace, and every signal a command can send: the zygote keeps serving."""
    ctx = _ctx(keeper, dirs)
    await run_bash(ctx, "true")
    pids = _only(keeper)
    python = os.path.realpath(sys.executable)
    ptrace = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        "print('attach', libc.ptrace(16, 1, 0, 0), ctypes.get_errno()); "
        "print('seize', libc.ptrace(0x4206, 1, 0, 0), ctypes.get_errno())"
    )
    attack = (
        "for i in $(seq 3 1023); do echo garbage >&$i; done 2>/dev/null; "
        "for f in /proc/1/fd/*; do echo garbage > $f && echo wrote-$f; done; "
        "readlink /proc/1/fd/* && echo read-links; "
        "cat /proc/1/environ && echo read-environ; "
        "head -c 1 /proc/1/mem && echo read-mem; "
        f'{python} -I -S -c "{ptrace}"; '
        "kill -STOP 1; kill -9 1; kill -SEGV 1; kill -INT 1; kill -9 -1; echo end"
    )
    result = await run_bash(ctx, attack)
    text = result.text
    assert "end" in text, text
    for leak in ("wrote-", "read-links", "read-environ", "read-mem"):
        assert leak not in text, text
    assert "attach -1 1" in text and "seize -1 1" in text, text  # EPERM
    after = await _confined(ctx, outside)
    assert ZYGOTE_MARK in after
    assert _only(keeper) == pids and keeper.built == 1


async def test_the_environment_and_command_bytes_arrive_exactly(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable's value that is not UTF-8, a large environment and a command that is
    not ASCII reach the command as they would through a fresh bubblewrap."""
    monkeypatch.setenv("REASONIX_ODD", os.fsdecode(b"\xff\xfe-odd"))
    for n in range(3):  # together more than a socket buffer; each under an argument's limit
        monkeypatch.setenv(f"REASONIX_BIG{n}", "x" * 100_000)
    command = (
        'printf %s "$REASONIX_ODD" | od -An -tx1; echo ${#REASONIX_BIG2}; '
        "printf %s été | od -An -tx1; pwd -P"
    )
    kept = await run_bash(_ctx(keeper, dirs), command)
    fresh = await run_bash(sandbox_ctx(*dirs), command)
    assert kept.text == fresh.text, (kept.text, fresh.text)
    assert "ff fe 2d 6f 64 64" in kept.text and "100000" in kept.text
    assert "c3 a9 74 c3 a9" in kept.text
    assert keeper.built == 1


# -- fail closed --------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
async def test_a_zygote_killed_or_stopped_between_calls_is_replaced(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path, sig: signal.Signals
) -> None:
    ctx = _ctx(keeper, dirs)
    await run_bash(ctx, "true")
    old = _only(keeper)
    os.kill(old[1], sig)
    await _until_not_running(old[1])  # between calls: the signal has taken effect
    text = await _confined(ctx, outside)
    assert ZYGOTE_MARK in text and keeper.built == 2
    assert _only(keeper) != old
    assert await all_gone(list(old)), "the old bubblewrap was not killed"


async def test_a_zygote_killed_during_a_call_fails_the_call_and_kills_its_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ctx = _ctx(keeper, dirs)
    ws = dirs[0]
    tag = f"rx-victim-{uuid.uuid4().hex[:8]}"
    results = []

    async def call() -> None:
        results.append(
            await run_bash(ctx, f"touch started; exec -a {tag} sleep 1000", timeout_seconds=600)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await _wait_for(ws / "started")
        old = _only(keeper)
        os.kill(old[1], signal.SIGKILL)
    (result,) = results
    assert result.is_error and "the sandbox failed" in result.text, result.text
    assert "sandbox_failure" in result.meta and not result.meta["timed_out"]
    assert await tag_gone(tag)
    assert await all_gone(list(old))
    assert ZYGOTE_MARK in await _confined(ctx, outside)
    assert keeper.built == 2


async def test_a_zygote_stopped_during_a_call_times_out_and_is_killed_whole(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    """The command ends, but a stopped zygote cannot say so: the call times out, the
    whole bubblewrap is killed, and the next command gets a new one."""
    ctx = _ctx(keeper, dirs)
    ws = dirs[0]
    results = []

    async def call() -> None:
        command = "touch started; while [ ! -e go ]; do sleep 0.02; done; echo finished"
        results.append(await run_bash(ctx, command, timeout_seconds=2))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await _wait_for(ws / "started")
        old = _only(keeper)
        os.kill(old[1], signal.SIGSTOP)
        (ws / "go").touch()
    (result,) = results
    assert result.is_error and result.meta["timed_out"], result.text
    assert "the sandbox failed" in result.text
    assert await all_gone(list(old))
    assert ZYGOTE_MARK in await _confined(ctx, outside)
    assert keeper.built == 2


async def test_an_end_of_file_on_the_channel_ends_the_zygote(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ctx = _ctx(keeper, dirs)
    await run_bash(ctx, "true")
    (kept,) = keeper.sandboxes
    old = _only(keeper)
    kept.ctl.shutdown(socket.SHUT_WR)
    assert await all_gone([old[1]]), "the zygote outlived its channel"
    assert ZYGOTE_MARK in await _confined(ctx, outside)
    assert keeper.built == 2


# -- what a command leaves behind ---------------------------------------------------------


async def test_a_command_that_forks_a_daemon_then_stops_itself_is_killed_whole(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ctx = _ctx(keeper, dirs)
    tag = f"rx-stopper-{uuid.uuid4().hex[:8]}"
    command = (
        f"(setsid sh -c 'exec -a {tag} sleep 1000' </dev/null >/dev/null 2>&1 &); kill -STOP $$"
    )
    result = await run_bash(ctx, command, timeout_seconds=1)
    assert result.meta["timed_out"], result.text
    assert await tag_gone(tag)
    assert "sandbox_failure" not in result.meta
    assert ZYGOTE_MARK in await _confined(ctx, outside)
    assert keeper.built == 1  # the zygote killed the tree itself: the sandbox is kept


async def test_a_timeout_kills_a_tree_that_keeps_forking(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    ctx = _ctx(keeper, dirs)
    tag = f"rx-forker-{uuid.uuid4().hex[:8]}"
    loop = f"while :; do (exec -a {tag} sleep 1000) & sleep 0.01; done"
    result = await run_bash(
        ctx, f"(setsid sh -c '{loop}' </dev/null >/dev/null 2>&1 &); {loop}", timeout_seconds=1
    )
    assert result.meta["timed_out"], result.text
    assert await tag_gone(tag)
    seen = await run_bash(ctx, f"ps -eo args | grep -c '^{tag}' || true")
    assert seen.text.split()[0] == "0", seen.text
    assert keeper.built == 1


async def test_cancelling_a_call_kills_its_tree_and_keeps_the_sandbox_usable(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ctx = _ctx(keeper, dirs)
    ws = dirs[0]
    tag = f"rx-cancelled-{uuid.uuid4().hex[:8]}"
    command = (
        f"(setsid sh -c 'exec -a {tag} sleep 1000' </dev/null >/dev/null 2>&1 &); "
        f"touch started; exec -a {tag} sleep 1000"
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_bash, ctx, command)
        await _wait_for(ws / "started")
        tg.cancel_scope.cancel()
    assert await tag_gone(tag)
    assert ZYGOTE_MARK in await _confined(ctx, outside)


async def test_masks_dev_and_shm_are_emptied_and_a_changed_tmpfs_retires_the_sandbox(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    ws, _ = dirs
    (ws / "masked").mkdir()
    ctx = _ctx(keeper, dirs, forbid_read=(Path("masked"),))
    plant = "echo p > masked/x; echo p > /dev/x; echo p > /dev/shm/x; echo p > /run/x; echo ok"
    assert "ok" in (await run_bash(ctx, plant)).text
    seen = await run_bash(
        ctx,
        "for p in masked/x /dev/x /dev/shm/x /run/x; do test -e $p && echo left-$p; done; echo end",
    )
    assert "left-" not in seen.text and "end" in seen.text, seen.text
    assert keeper.built == 1
    # What the sweep cannot put back (a /dev symlink replaced, /tmp's mode) retires it.
    await run_bash(ctx, "rm /dev/stdout; ln -s /tmp/trap /dev/stdout; chmod 777 /tmp")
    after = await run_bash(ctx, "readlink /dev/stdout; stat -c %a /tmp")
    assert after.text.split()[:2] == ["/proc/self/fd/1", "755"], after.text
    assert keeper.built == 2


async def test_a_mount_added_on_the_host_rebuilds_the_sandbox(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    """A mount made on the host after the sandbox was built could propagate into it
    read-write; the host's mount table is compared before every command."""
    ctx = _ctx(keeper, dirs)
    await run_bash(ctx, "true")
    target = outside / "mnt"
    target.mkdir()
    mounted = await anyio.run_process(
        ["mount", "-t", "tmpfs", "rx-kept-test", str(target)], check=False
    )
    if mounted.returncode != 0:
        pytest.skip("this test needs to mount a tmpfs on the host (root)")
    try:
        result = await run_bash(ctx, f"echo x > {target}/f; echo end")
        assert "Read-only file system" in result.text and "end" in result.text, result.text
        assert not (target / "f").exists()
        assert keeper.built == 2
    finally:
        await anyio.run_process(["umount", str(target)], check=False)


async def test_a_subagent_policy_gets_its_own_kept_sandbox(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    """Each sandbox policy keeps its own (a write claim binds other roots); calls that
    alternate between them rebuild neither, and each stays confined to its roots."""
    ws = dirs[0]
    (ws / "claimed").mkdir()
    session = _ctx(keeper, dirs)
    child = _ctx(keeper, dirs, claim=(ws / "claimed",))
    for _ in range(2):
        assert ZYGOTE_MARK in await _confined(session, outside)
        written = await run_bash(child, "echo c > claimed/c; echo w > top.txt; echo end")
        assert "end" in written.text and (ws / "claimed" / "c").exists()
        assert not (ws / "top.txt").exists(), "a claim's sandbox wrote outside the claim"
    assert keeper.built == 2 and len(keeper.sandboxes) == 2


# -- what it must not hold ----------------------------------------------------------------


async def test_a_call_while_the_kept_one_is_busy_gets_a_fresh_bubblewrap(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ctx = _ctx(keeper, dirs)
    ws = dirs[0]
    results: dict[str, str] = {}

    async def first() -> None:
        command = (
            f"{WHO_IS_PID_1}; echo x > {outside}/a; touch a-started; "
            "while [ ! -e b-done ]; do sleep 0.02; done; echo A"
        )
        results["a"] = (await run_bash(ctx, command)).text

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        await _wait_for(ws / "a-started")
        second = await run_bash(ctx, f"{WHO_IS_PID_1}; echo x > {outside}/b; touch b-done; echo B")
        results["b"] = second.text
    assert ZYGOTE_MARK in results["a"] and "A" in results["a"], results
    assert ZYGOTE_MARK not in results["b"] and "bwrap" in results["b"], results
    assert "B" in results["b"]
    assert not (outside / "a").exists() and not (outside / "b").exists()
    assert keeper.built == 1


async def test_a_write_grant_goes_fresh_and_never_reaches_the_kept_sandbox(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    ws = dirs[0]
    shared = outside / "shared"
    shared.mkdir()
    ctx = _ctx(keeper, dirs)
    gate_policy = Policy(preset="ask", workspace=ws)
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    ctx.env = dataclasses.replace(
        ctx.env, gate=PermissionGate(gate_policy, approver, WriteGrants(()))
    )  # type: ignore[arg-type]
    assert ZYGOTE_MARK in (await run_bash(ctx, WHO_IS_PID_1)).text
    granted = await run_bash(
        ctx,
        f"{WHO_IS_PID_1}; echo granted > {shared}/ok.txt",
        additional_write_dirs=[str(shared)],
        justification="the build writes its cache there",
    )
    assert granted.outcome == "ok", granted.text
    assert ZYGOTE_MARK not in granted.text and (shared / "ok.txt").exists()
    after = await run_bash(ctx, f"{WHO_IS_PID_1}; echo again > {shared}/again.txt")
    assert ZYGOTE_MARK in after.text and "Read-only file system" in after.text
    assert not (shared / "again.txt").exists()
    assert keeper.built == 1  # the kept one was neither widened nor rebuilt


async def test_background_jobs_get_a_fresh_bubblewrap(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    from reasonix_core.tool.builtin.bash_output import BashOutputTool
    from reasonix_core.tool.jobs import JobManager

    ctx = _ctx(keeper, dirs)
    async with JobManager() as jobs:
        ctx.jobs = jobs
        started = await run_bash(ctx, f"{WHO_IS_PID_1}", run_in_background=True)
        job_id = started.meta["job_id"]
        with anyio.fail_after(30):
            while True:
                if not jobs.status(job_id).running:
                    break
                await anyio.sleep(0.02)
        output = await BashOutputTool().execute({"job_id": job_id}, ctx)
    assert "bwrap" in output.text and ZYGOTE_MARK not in output.text, output.text
    assert keeper.built == 0


async def test_a_masked_secret_unlinked_and_linked_back_stays_masked(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """Unlinking a masked file detaches its mask in the kept sandbox; a hard link puts
    the same inode back at the same path, so the host's checks all hold. The zygote's
    own mount table has changed: it refuses, and the command runs fresh."""
    ws, _ = dirs
    secret = ws / ".env"
    secret.write_text("TOKEN=hidden\n")
    ctx = _ctx(keeper, dirs, forbid_read=(Path(".env"),))
    assert "hidden" not in (await run_bash(ctx, "cat .env; echo end")).text
    os.link(secret, ws / ".env.keep")
    secret.unlink()
    os.link(ws / ".env.keep", secret)
    (ws / ".env.keep").unlink()
    result = await run_bash(ctx, f"{WHO_IS_PID_1}; cat .env; echo end")
    assert "hidden" not in result.text and "end" in result.text, result.text
    assert ZYGOTE_MARK not in result.text  # refused by the kept one, run fresh
    again = await run_bash(ctx, f"{WHO_IS_PID_1}; cat .env; echo end")
    assert ZYGOTE_MARK in again.text and "hidden" not in again.text
    assert keeper.built == 2


# -- no process left behind ---------------------------------------------------------------


async def test_closing_the_keeper_mid_command_leaves_no_process(
    dirs: tuple[Path, Path],
) -> None:
    keeper = SandboxKeeper()
    ctx = _ctx(keeper, dirs)
    ws = dirs[0]
    tag = f"rx-closing-{uuid.uuid4().hex[:8]}"
    results = []

    async def call() -> None:
        command = f"(setsid sh -c 'exec -a {tag} sleep 1000' &); touch started; sleep 1000"
        results.append(await run_bash(ctx, command, timeout_seconds=600))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await _wait_for(ws / "started")
        pids = kept_pids(keeper)
        pids += [p for pid in pids for p in descendants(pid)]
        await keeper.aclose()
    assert results[0].is_error, results[0].text
    assert await all_gone(pids), [p for p in pids if running(p)]
    assert await tag_gone(tag)
    # A closed keeper leases nothing: the next command would run fresh.
    assert keeper.lease(SandboxPolicy(workspace=ws, temp_dir=dirs[1])) is None


async def test_a_lease_from_a_thread_that_ended_leaves_the_sandbox_running(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path
) -> None:
    """``--die-with-parent`` fires when the spawning *thread* ends: the keeper spawns
    from its own thread, so a worker thread that asked and ended takes nothing down."""
    ws, tmp = dirs
    leases: list[KeptLease | None] = []
    policy = SandboxPolicy(workspace=ws, temp_dir=tmp)
    asker = threading.Thread(target=lambda: leases.append(keeper.lease(policy)))
    asker.start()
    asker.join()
    (lease,) = leases
    assert lease is not None
    lease.unused()
    pids = _only(keeper)
    assert all(running(pid) for pid in pids)
    assert ZYGOTE_MARK in await _confined(_ctx(keeper, dirs), outside)
    assert _only(keeper) == pids


CHILD = """
import sys
from pathlib import Path

import anyio

from reasonix_core.tool.sandbox_keeper import SandboxKeeper
from tests.core.tool_helpers import kept_pids, kept_sandbox_ctx, run_bash


async def main() -> None:
    keeper = SandboxKeeper()
    ctx = kept_sandbox_ctx(keeper, Path(sys.argv[1]), Path(sys.argv[2]))
    await run_bash(ctx, "true")
    print(*kept_pids(keeper), flush=True)
    await anyio.sleep(1000)


anyio.run(main)
"""


async def test_reasonix_killed_with_sigkill_takes_its_kept_sandbox_along(
    dirs: tuple[Path, Path],
) -> None:
    proc = subprocess.Popen(  # noqa: ASYNC220 (started once, read in a thread)
        [sys.executable, "-c", CHILD, *map(str, dirs)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        line = await anyio.to_thread.run_sync(proc.stdout.readline)
        pids = [int(p) for p in line.split()]
        assert len(pids) == 2 and all(running(pid) for pid in pids), line
    finally:
        proc.kill()
        proc.wait()
    assert await all_gone(pids), "the kept sandbox outlived Reasonix"


async def test_a_session_keeps_one_sandbox_and_closes_it(
    configured, home: Path, dirs: tuple[Path, Path]
) -> None:
    """Through a real session (``[sandbox] keep`` defaults to true): two bash steps run
    in one kept sandbox, and nothing of it runs once the session is closed."""
    from tests.conftest import write_config

    write_config(home, configured.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    ws = dirs[0]
    call = ToolCallSpec("bash", json.dumps({"command": WHO_IS_PID_1}))
    configured.enqueue(Reply(tool_calls=[call]), Reply(tool_calls=[call]), Reply(content="done"))
    async with runtime(ws, permission_mode="yolo") as rt:
        keeper = rt.agent.tool_context.env.kept_sandboxes
        assert keeper is not None
        events = await run_turn(rt, "look twice")
        pids = kept_pids(keeper)
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert len(finished) == 2 and all(ZYGOTE_MARK in e.result for e in finished), finished
    assert keeper.built == 1 and len(pids) == 2
    assert await all_gone(pids)


async def test_a_turn_cancelled_mid_command_leaves_a_valid_transcript_and_no_process(
    configured, home: Path, dirs: tuple[Path, Path]
) -> None:
    """Cancelling the turn while its command runs in the kept sandbox kills the
    command's whole tree, repairs the tool turn, and the next turn's command runs in the
    same session's sandbox."""
    from reasonix_core.agent.transcript import UNKNOWN_OUTCOME
    from tests.conftest import write_config
    from tests.core.agent_helpers import session_messages

    write_config(home, configured.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    ws = dirs[0]
    tag = f"rx-turn-{uuid.uuid4().hex[:8]}"
    command = (
        f"(setsid sh -c 'exec -a {tag} sleep 1000' </dev/null >/dev/null 2>&1 &); "
        f"touch started; exec -a {tag} sleep 1000"
    )
    configured.enqueue(Reply(tool_calls=[ToolCallSpec("bash", json.dumps({"command": command}))]))
    async with runtime(ws, permission_mode="yolo") as rt:
        async with anyio.create_task_group() as tg:

            async def consume() -> None:
                async with aclosing(rt.agent.run("run it")) as events:
                    async for _ in events:
                        pass

            tg.start_soon(consume)
            await _wait_for(ws / "started")
            tg.cancel_scope.cancel()
        assert await tag_gone(tag)
        messages = session_messages(rt)
        assert messages[-1]["role"] == "tool" and messages[-1]["content"] == UNKNOWN_OUTCOME
        call = ToolCallSpec("bash", json.dumps({"command": WHO_IS_PID_1}))
        configured.enqueue(Reply(tool_calls=[call]), Reply(content="ok then"))
        events = await run_turn(rt, "again")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert ZYGOTE_MARK in finished[0].result and events[-1].text == "ok then"
