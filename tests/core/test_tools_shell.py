"""bash, bash_output, kill_shell and the JobManager, on real subprocesses.

These run with ``[sandbox] bash = "off"`` so they need no bubblewrap; the
sandboxed paths are covered in test_shell_sandbox.py.
"""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path

import anyio
import pytest

from reasonix_core.errors import ToolArgumentError
from reasonix_core.tool import foreground, shell_sandbox
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.bash import BashTool, HeadTail
from reasonix_core.tool.builtin.bash_output import BashOutputTool
from reasonix_core.tool.builtin.kill_shell import KillShellTool
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.jobs import JobError, JobManager
from reasonix_core.tool.registry import ToolRegistry
from reasonix_core.tool.sandbox import SandboxPolicy


@pytest.fixture(params=["pidfd", "anyio"])
def ctx(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> ToolContext:
    # Foreground commands wait on a pidfd where the kernel has them, else on anyio's
    # process (tool/foreground.py): both must behave the same.
    if request.param == "anyio":
        monkeypatch.setattr(foreground, "pidfd_supported", lambda: False)
    elif not foreground.pidfd_supported():
        pytest.skip("no pidfd on this kernel")
    ws = tmp_path / "ws"
    ws.mkdir()
    tmp = tmp_path / "tmp"
    sandbox = SandboxPolicy(workspace=ws, temp_dir=tmp, bash="off")
    return ToolContext(
        env=SessionEnv(workspace=ws, temp_dir=tmp, bash_timeout_seconds=20, sandbox=sandbox)
    )


async def bash(ctx: ToolContext, command: str, **args: object) -> ToolResult:
    return await BashTool().execute({"command": command, **args}, ctx)


def marker() -> str:
    return f"30.{random.randrange(10**6):06d}"


def live_pids(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if mark.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def wait_gone(mark: str, seconds: float = 60.0) -> list[int]:
    pids = live_pids(mark)
    for _ in range(int(seconds / 0.05)):
        if not pids:
            break
        await anyio.sleep(0.05)
        pids = live_pids(mark)
    return pids


async def wait_running(mark: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not live_pids(mark):
        assert time.monotonic() < deadline, "the command never started"
        await anyio.sleep(0.02)


# -- foreground --------------------------------------------------------------


async def test_happy_path_runs_in_workspace(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo hello; echo oops >&2; pwd; echo $TMPDIR")
    assert not result.is_error
    assert result.outcome == "ok"
    lines = result.text.splitlines()
    assert lines[:4] == ["hello", "oops", str(ctx.workspace), str(ctx.temp_dir)]
    assert lines[-1] == "[exit code 0]"
    assert result.meta["exit_code"] == 0
    assert ctx.temp_dir.is_dir()


async def test_nonzero_exit_is_reported(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo failing; exit 3")
    assert result.is_error
    assert "failing" in result.text
    assert result.text.endswith("[exit code 3]")
    assert result.meta["exit_code"] == 3


async def test_no_output_and_stdin_is_empty(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat")  # would hang if stdin were inherited
    assert result.text == "(no output)\n[exit code 0]"


async def test_timeout_kills_the_process_group(ctx: ToolContext) -> None:
    mark = marker()
    started = time.monotonic()
    result = await bash(ctx, f"sleep {mark} & wait", timeout_seconds=1)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert result.outcome == "error"
    assert result.meta["timed_out"] is True
    assert "timed out after 1 s" in result.text
    assert await wait_gone(mark) == []


async def test_default_timeout_comes_from_context(ctx: ToolContext) -> None:
    ctx.env = dataclasses.replace(ctx.env, bash_timeout_seconds=1)
    result = await bash(ctx, "sleep 20")
    assert result.meta["timed_out"] is True


async def test_cancellation_kills_the_process_group_and_reraises(ctx: ToolContext) -> None:
    mark = marker()
    returned: list[ToolResult] = []
    with anyio.move_on_after(0.5) as scope:
        returned.append(await bash(ctx, f"sleep {mark} & sleep {mark}; wait"))
    assert scope.cancelled_caught
    assert returned == []
    assert await wait_gone(mark) == []


async def test_leftover_background_processes_are_stopped(ctx: ToolContext) -> None:
    mark = marker()
    started = time.monotonic()
    result = await bash(ctx, f"sleep {mark} & echo started")
    assert time.monotonic() - started < 5
    assert result.text == "started\n[exit code 0]"
    assert await wait_gone(mark) == []


async def test_output_is_bounded_head_and_tail(ctx: ToolContext) -> None:
    result = await bash(
        ctx, "printf 'HEAD_MARK'; yes abcdefghij | head -c 200000; printf 'TAIL_MARK\\n'"
    )
    assert not result.is_error
    assert result.text.startswith("HEAD_MARK")
    assert result.text.endswith("TAIL_MARK\n[exit code 0]")
    assert "bytes omitted ...]" in result.text
    assert len(result.text) < 34 * 1024
    assert result.meta["output_bytes"] == 9 + 200000 + 10
    assert result.meta["omitted_bytes"] == result.meta["output_bytes"] - 32 * 1024


def test_head_tail_buffer() -> None:
    buf = HeadTail(head=4, tail=4)
    for piece in (b"ab", b"cdef", b"gh", b"ijkl"):
        buf.feed(piece)
    assert buf.render() == "abcd\n[... 4 bytes omitted ...]\nijkl"
    small = HeadTail(head=4, tail=4)
    small.feed(b"abcdefg")
    assert small.render() == "abcdefg"


async def test_provider_keys_are_not_in_the_subprocess_env(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-never-leak-this")
    monkeypatch.setenv("CUSTOM_PROVIDER_CRED", "also-secret")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    ctx.env = dataclasses.replace(ctx.env, secret_env=frozenset({"CUSTOM_PROVIDER_CRED"}))
    result = await bash(ctx, "env")
    assert "sk-never-leak-this" not in result.text
    assert "DEEPSEEK_API_KEY" not in result.text
    assert "also-secret" not in result.text
    assert "HARMLESS_SETTING=visible" in result.text
    assert "TERM=dumb" in result.text
    assert "NO_COLOR=1" in result.text


async def test_enforce_without_bwrap_refuses_and_runs_nothing(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: None)
    sandbox = SandboxPolicy(workspace=ctx.workspace, temp_dir=ctx.temp_dir)
    ctx.env = dataclasses.replace(ctx.env, sandbox=sandbox)
    for background in (False, True):
        result = await bash(ctx, "touch ran.txt", run_in_background=background)
        assert result.is_error
        assert "apt-get install bubblewrap" in result.text
        assert 'bash = "off"' in result.text
        assert not (ctx.workspace / "ran.txt").exists()


async def test_default_policy_is_enforce(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: None)
    context = ToolContext(env=SessionEnv(workspace=tmp_path, temp_dir=tmp_path / "t"))
    result = await bash(context, "touch ran.txt")
    assert result.is_error
    assert "bubblewrap is required" in result.text
    assert not (tmp_path / "ran.txt").exists()


async def test_argument_validation_through_registry(ctx: ToolContext) -> None:
    registry = ToolRegistry([BashTool()])
    result = await registry.call("bash", '{"command": "true", "timeout_seconds": 601}', ctx)
    assert result.is_error
    assert "timeout_seconds" in result.text
    result = await registry.call("bash", '{"command": "true", "shell": "zsh"}', ctx)
    assert result.is_error
    assert "shell" in result.text
    with pytest.raises(ToolArgumentError):
        await BashTool().execute({}, ctx)


def test_schema_is_closed() -> None:
    for tool in (BashTool(), BashOutputTool(), KillShellTool()):
        assert tool.parameters["additionalProperties"] is False
    assert BashTool.read_only is False
    assert BashOutputTool.read_only is True
    assert KillShellTool.read_only is False


# -- background jobs ---------------------------------------------------------


async def test_background_job_start_read_kill(ctx: ToolContext) -> None:
    mark = marker()
    async with JobManager() as jobs:
        ctx.jobs = jobs
        started = await bash(
            ctx, f"echo one; sleep 0.2; echo two; sleep {mark}", run_in_background=True
        )
        assert not started.is_error
        job_id = started.meta["job_id"]
        assert job_id == "bash_1"
        assert 'bash_output(job_id="bash_1")' in started.text

        seen = ""
        deadline = time.monotonic() + 60
        while "two" not in seen:
            assert time.monotonic() < deadline
            out = await BashOutputTool().execute({"job_id": job_id}, ctx)
            assert out.text.startswith("[bash_1: running]")
            seen += out.text
            await anyio.sleep(0.05)
        assert "one" in seen

        again = await BashOutputTool().execute({"job_id": job_id}, ctx)
        assert again.text == "[bash_1: running]\n(no new output)"

        killed = await KillShellTool().execute({"job_id": job_id}, ctx)
        assert not killed.is_error
        assert killed.text.startswith("Killed bash_1.")
        assert killed.meta["status"] == "killed"
        assert await wait_gone(mark) == []

        after = await BashOutputTool().execute({"job_id": job_id}, ctx)
        assert after.text.startswith("[bash_1: killed]")

        unknown = await BashOutputTool().execute({"job_id": "bash_9"}, ctx)
        assert unknown.is_error
        assert "bash_1" in unknown.text


async def test_background_unavailable_without_job_service(ctx: ToolContext) -> None:
    result = await bash(ctx, "sleep 1", run_in_background=True)
    assert result.is_error
    assert "background jobs are not available in this context" in result.text
    for tool in (BashOutputTool(), KillShellTool()):
        result = await tool.execute({"job_id": "bash_1"}, ctx)
        assert result.is_error
        assert "not available in this context" in result.text


async def test_job_exit_status_and_bounded_buffer(tmp_path: Path) -> None:
    async with JobManager(max_buffer=1000) as jobs:
        job_id = await jobs.start(
            ["/bin/bash", "-c", "yes 0123456789 | head -c 5000; printf END; exit 4"],
            cwd=tmp_path,
        )
        deadline = time.monotonic() + 60
        while jobs.status(job_id).running:
            assert time.monotonic() < deadline
            await anyio.sleep(0.02)
        out = jobs.read_new(job_id)
        assert out.status == "exited 4"
        assert out.exit_code == 4
        assert out.output.startswith("[... 4003 earlier bytes dropped ...]\n")
        assert out.output.endswith("END")
        assert jobs.read_new(job_id).output == ""
        killed = await KillShellTool().execute(
            {"job_id": job_id},
            ToolContext(env=SessionEnv(workspace=tmp_path, temp_dir=tmp_path), jobs=jobs),
        )
        assert killed.text.startswith("Already finished: bash_1.")
        assert killed.meta["status"] == "exited 4"


async def test_leaving_the_manager_kills_running_jobs(tmp_path: Path) -> None:
    mark = marker()
    async with JobManager() as jobs:
        job_id = await jobs.start(["/bin/bash", "-c", f"sleep {mark} & sleep {mark}"], cwd=tmp_path)
        await wait_running(mark)
    assert jobs.status(job_id).status == "killed"
    assert await wait_gone(mark) == []
    with pytest.raises(JobError):
        await jobs.start(["true"], cwd=tmp_path)


async def test_job_limit(tmp_path: Path) -> None:
    async with JobManager(max_running=1) as jobs:
        await jobs.start(["sleep", "5"], cwd=tmp_path)
        with pytest.raises(JobError, match="too many background jobs"):
            await jobs.start(["sleep", "5"], cwd=tmp_path)
        await jobs.aclose()


async def test_bash_reports_its_live_output_while_it_runs(tmp_path):
    """Issue 14, item 10: the last lines of a running command reach the UI as progress,
    bounded; the model still gets the whole (bounded) result at the end."""
    from reasonix_core.events import ToolProgress
    from reasonix_core.tool.builtin.bash import LIVE_LINES, LIVE_WIDTH
    from tests.core.tool_helpers import run_bash, sandbox_ctx

    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = sandbox_ctx(ws, tmp_path / "tmp", bash="off")
    seen: list[ToolProgress] = []
    ctx.tool_progress = seen.append
    wide = "x" * 1000
    result = await run_bash(
        ctx, f"echo {wide}; for i in 1 2 3 4 5 6 7 8; do echo line $i; done; sleep 0.3; echo end"
    )
    assert "line 8" in result.text and "end" in result.text
    assert seen and all(p.name == "bash" for p in seen)
    assert any("line" in p.output for p in seen)
    for report in seen:
        lines = report.output.splitlines()
        assert len(lines) <= LIVE_LINES and all(len(line) <= LIVE_WIDTH for line in lines)


async def test_bash_live_output_shows_a_line_that_came_too_soon_once_it_goes_quiet(tmp_path):
    """Issue 30, item 2: a line printed just after the last report (held back by the
    rate limit) is reported while the command then sits quiet, not only when more
    output comes. The command waits until the test has seen that line (or 60 s)."""
    from reasonix_core.events import ToolProgress
    from tests.core.tool_helpers import run_bash, sandbox_ctx

    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = sandbox_ctx(ws, tmp_path / "tmp", bash="off")
    seen: list[ToolProgress] = []

    def report(progress: ToolProgress) -> None:
        seen.append(progress)
        if "second" in progress.output:
            (ws / "go").write_text("")

    ctx.tool_progress = report
    result = await run_bash(
        ctx,
        "echo first; sleep 0.01; echo second; "
        "for i in $(seq 1200); do [ -f go ] && { echo released; break; }; sleep 0.05; done",
    )
    assert "released" in result.text, [p.output for p in seen]  # seen while it waited
    assert any(p.output.splitlines()[-1:] == ["second"] for p in seen)
