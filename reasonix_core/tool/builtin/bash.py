"""``bash``: run a shell command in the workspace, confined by the sandbox."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
from pydantic import BaseModel, Field

from reasonix_core.events import ToolProgress
from reasonix_core.tool import foreground
from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult, current_call_id
from reasonix_core.tool.builtin.specs import BASH as SPEC
from reasonix_core.tool.builtin.specs import MAX_TIMEOUT_SECONDS, SpecifiedTool
from reasonix_core.tool.jobs import DRAIN_SECONDS, JobError
from reasonix_core.tool.sandbox import SandboxPolicy, is_within

if TYPE_CHECKING:
    from reasonix_core.tool.git_guard import GitGuard
    from reasonix_core.tool.kept_sandbox import KeptLease
    from reasonix_core.tool.shell_sandbox import ShellCommand

# The git guard and the shell sandbox (bubblewrap, seccomp) are imported by the
# first command, not with this module (~2.5 ms).

HEAD_BYTES = 16 * 1024
TAIL_BYTES = 16 * 1024
# Live output in the tool card: the last lines of the last bytes, a few times a second.
LIVE_BYTES = 4096
LIVE_LINES = 6
LIVE_WIDTH = 240
LIVE_SECONDS = 0.2


class HeadTail:
    """Keeps the first ``head`` and last ``tail`` bytes of a stream."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                del self.tail[:excess]

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def render(self) -> str:
        omitted = self.omitted
        if omitted <= 0:
            return bytes(self.head + self.tail).decode("utf-8", "replace")
        head = bytes(self.head).decode("utf-8", "replace")
        tail = bytes(self.tail).decode("utf-8", "replace")
        return f"{head}\n[... {omitted} bytes omitted ...]\n{tail}"


class LiveTail:
    """The last lines of a running command's output, reported as ``ToolProgress`` (the
    TUI shows them in the tool card while it runs), at most every ``LIVE_SECONDS``.
    Display only: what the model gets is the bounded result at the end. Output held back
    by that limit is reported by a later ``feed(b"")`` (``run_shell`` ticks it), so the
    card shows the newest line even when the command then goes quiet."""

    def __init__(self, sink: Callable[[ToolProgress], None], name: str, call_id: str) -> None:
        self.sink = sink
        self.name = name
        self.call_id = call_id
        self.tail = bytearray()
        self.total = 0
        self.last = 0.0
        self.held = False  # output fed since the last report

    @classmethod
    def reporter(cls, ctx: ToolContext, name: str) -> Callable[[bytes], None] | None:
        if ctx.tool_progress is None:
            return None
        return cls(ctx.tool_progress, name, current_call_id.get()).feed

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.tail += chunk
        del self.tail[:-LIVE_BYTES]
        self.held = self.held or bool(chunk)
        now = time.monotonic()
        if not self.held or now - self.last < LIVE_SECONDS:
            return
        self.last = now
        self.held = False
        text = bytes(self.tail).decode("utf-8", "replace")
        lines = [line[:LIVE_WIDTH] for line in text.splitlines() if line.strip()]
        self.sink(
            ToolProgress(
                call_id=self.call_id,
                name=self.name,
                progress=self.total,
                output="\n".join(lines[-LIVE_LINES:]),
            )
        )


@dataclass(frozen=True, slots=True)
class ShellRun:
    output: str
    exit_code: int | None
    timed_out: bool
    total_bytes: int
    omitted_bytes: int
    # Why the kept sandbox the command ran in failed (it was killed whole), or None.
    failure: str | None = None


async def run_shell(
    argv: list[str],
    *,
    env: dict[str, str] | None,
    cwd: Path,
    time_limit: float,
    head: int = HEAD_BYTES,
    tail: int = TAIL_BYTES,
    pass_fds: tuple[int, ...] = (),
    on_output: Callable[[bytes], None] | None = None,
) -> ShellRun:
    """Run ``argv`` to completion (or ``time_limit`` seconds), collecting bounded output.

    On timeout, or when the caller is cancelled, the whole process group is
    killed; cancellation is re-raised. Processes the command leaves running in
    its group are stopped when it exits. ``on_output`` gets each chunk read, and ``b""``
    every ``LIVE_SECONDS`` while the command runs (a moment passed, nothing new).
    """
    process = await foreground.start(argv, env=env, cwd=cwd, pass_fds=pass_fds)
    return await collect(process, time_limit=time_limit, head=head, tail=tail, on_output=on_output)


async def collect(
    process: foreground.Foreground,
    *,
    time_limit: float,
    head: int = HEAD_BYTES,
    tail: int = TAIL_BYTES,
    on_output: Callable[[bytes], None] | None = None,
) -> ShellRun:
    """A started command (a process of ours, or one in a kept sandbox) to its end:
    its bounded output, killed on timeout or cancellation, always reaped."""
    buffer = HeadTail(head, tail)
    timed_out = False
    try:
        drained = anyio.Event()

        async def pump() -> None:
            try:
                while chunk := await process.read():
                    buffer.feed(chunk)
                    if on_output is not None:
                        on_output(chunk)
            except OSError:
                pass
            finally:
                drained.set()

        async def tick(report: Callable[[bytes], None]) -> None:
            # Output the live report held back (too soon after the last) goes out
            # once the command is quiet for a moment.
            while True:
                await anyio.sleep(LIVE_SECONDS)
                report(b"")

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            if on_output is not None:
                tg.start_soon(tick, on_output)
            with anyio.move_on_after(time_limit) as deadline:
                await process.wait()
            timed_out = deadline.cancelled_caught
            process.kill_group()
            with anyio.move_on_after(DRAIN_SECONDS):
                await drained.wait()
            tg.cancel_scope.cancel()
    finally:
        await process.reap()
    return ShellRun(
        output=buffer.render(),
        exit_code=process.returncode,
        timed_out=timed_out,
        total_bytes=buffer.total,
        omitted_bytes=max(buffer.omitted, 0),
    )


def sandbox_policy(ctx: ToolContext) -> SandboxPolicy:
    if ctx.sandbox is not None:
        return ctx.sandbox
    return SandboxPolicy(workspace=ctx.workspace, temp_dir=ctx.temp_dir)


def shell_env(ctx: ToolContext) -> dict[str, str]:
    from reasonix_core.tool.shell_sandbox import sanitized_env

    env = sanitized_env(ctx.secret_env)
    env["TMPDIR"] = str(ctx.temp_dir)
    return env


def _findings_note(findings: list[str]) -> str:
    return (
        "[reasonix: git metadata written in the sandbox was set aside, because host git "
        "would have run it: " + "; ".join(findings) + "]"
    )


def _with_findings(result: ToolResult, findings: list[str]) -> ToolResult:
    """``result`` with what the git guard set aside before the command started."""
    if not findings:
        return result
    meta = {**result.meta, "git_quarantined": findings}
    return ToolResult(
        text=f"{result.text}\n{_findings_note(findings)}",
        is_error=result.is_error,
        outcome=result.outcome,
        meta=meta,
    )


async def _check_after_job(guard: GitGuard) -> str | None:
    findings = await anyio.to_thread.run_sync(guard.check)
    return f"\n{_findings_note(findings)}\n" if findings else None


class BashArgs(BaseModel):
    model_config = ARGS_CONFIG

    command: str = Field(min_length=1)
    timeout_seconds: int | None = Field(default=None, ge=1, le=MAX_TIMEOUT_SECONDS)
    run_in_background: bool = False
    additional_write_dirs: list[str] = Field(default_factory=list)
    justification: str = ""


async def _widen(
    parsed: BashArgs, policy: SandboxPolicy, ctx: ToolContext
) -> SandboxPolicy | ToolResult:
    """``policy`` with the ``additional_write_dirs`` the gate granted for this call,
    or the result that refuses the call (nothing has run)."""
    from reasonix_core.tool.write_scope import WriteScopeRefused, resolve_write_dirs

    if policy.claim is not None:
        claimed = ", ".join(policy.display(p) for p in policy.claim) or "nothing"
        return ToolResult.error(
            "additional_write_dirs is not available to a subagent: it writes only its "
            f"write claim ({claimed}); the command was not run. Finish what the claim "
            "allows and report what else is needed."
        )
    if not parsed.justification.strip():
        return ToolResult.error(
            "additional_write_dirs needs a justification: say why the command must write "
            "there (the user reads it before granting); the command was not run"
        )
    home = Path.home()
    try:
        dirs = await anyio.to_thread.run_sync(
            functools.partial(
                resolve_write_dirs,
                parsed.additional_write_dirs,
                workspace=policy.root,
                protected=policy.resolved_forbid_read(),
                user_home=home,
            )
        )
    except WriteScopeRefused as exc:
        return ToolResult.error(f"{exc}; the command was not run")
    roots = policy.resolved_write_roots()
    # A folder inside the write roots is writable already: nothing to grant or bind.
    outside = tuple(d for d in dirs if not any(is_within(d, r) for r in roots))
    if not outside:
        return policy
    if ctx.gate is None:
        return ToolResult.error(
            "additional_write_dirs cannot be granted here (no permission gate); "
            "the command was not run"
        )
    auth = await ctx.gate.authorize_write_scope(
        dirs=outside,
        justification=parsed.justification.strip(),
        command=parsed.command,
        call_id=current_call_id.get(),
    )
    if not auth.allowed:
        return ToolResult.denied(auth.message, auth.summary)
    return dataclasses.replace(policy, granted=outside)


@dataclass(frozen=True, slots=True)
class _Ready:
    """A command ready to spawn: what :func:`_get_ready` prepared. Exactly one of
    ``prepared`` (a fresh sandbox, or none) and ``lease`` (the kept sandbox)."""

    prepared: ShellCommand | None
    lease: KeptLease | None
    env: dict[str, str]
    guard: GitGuard | None
    findings: list[str]


def _get_ready(
    policy: SandboxPolicy, ctx: ToolContext, command: str, background: bool
) -> _Ready | ToolResult:
    """Everything that touches the disk before a command, in one worker-thread trip
    (each trip is a thread hand-off there and back; a sandboxed call made five).

    A foreground command without a one-call write grant goes to the session's
    kept sandbox when there is one to lease (checked against what it would be
    built from now); anything else gets a fresh bubblewrap. Returns the result
    that refuses the call when nothing may run. The caller owns ``prepared``
    (its descriptors) or ``lease`` from here on.
    """
    from reasonix_core.tool.git_guard import GitGuard
    from reasonix_core.tool.shell_sandbox import SandboxUnavailable, prepare_command

    workspace = Path(ctx.workspace)
    if not workspace.is_dir():
        return ToolResult.error(f"the workspace {workspace} is not a directory")
    guard = None
    findings: list[str] = []
    if policy.bash == "enforce":
        # Created before the first sandboxed command, so its baseline is clean;
        # checked before each command too, for what a background job left.
        guard = GitGuard.for_workspace(workspace)
        findings += guard.check()
    Path(ctx.temp_dir).mkdir(parents=True, exist_ok=True)
    env = shell_env(ctx)
    keeper = ctx.env.kept_sandboxes
    lease = None if background or keeper is None else keeper.lease(policy)
    if lease is not None:
        return _Ready(None, lease, env, guard, findings)
    try:
        prepared = prepare_command(policy, command)
    except SandboxUnavailable as exc:
        return ToolResult.error(f"bash refused to run the command: {exc}", sandbox="unavailable")
    return _Ready(prepared, None, env, guard, findings)


async def _run_kept(
    lease: KeptLease,
    policy: SandboxPolicy,
    command: str,
    *,
    env: dict[str, str],
    cwd: Path,
    time_limit: float,
    on_output: Callable[[bytes], None] | None,
) -> ShellRun | ToolResult:
    """``command`` in the session's kept sandbox; in a fresh bubblewrap when the
    kept one refuses it (its mount table changed; nothing ran, it is torn down)."""
    from reasonix_core.tool.shell_sandbox import (
        SandboxUnavailable,
        prepare_command,
        shell_argv,
    )

    # Started where a fresh bubblewrap starts it (its --chdir: the resolved workspace).
    await lease.start(shell_argv(command), env=env, cwd=lease.workdir)
    run = await collect(lease, time_limit=time_limit, on_output=on_output)
    if lease.failure:
        return dataclasses.replace(run, failure=lease.failure)
    if not lease.refused:
        return run
    prepared = None
    with anyio.CancelScope(shield=True):
        try:
            prepared = await anyio.to_thread.run_sync(prepare_command, policy, command)
        except SandboxUnavailable as exc:
            return ToolResult.error(
                f"bash refused to run the command: {exc}", sandbox="unavailable"
            )
    assert prepared is not None  # a shielded scope never swallows the call
    try:
        await anyio.lowlevel.checkpoint_if_cancelled()
        return await run_shell(
            prepared.argv,
            env=env,
            cwd=cwd,
            time_limit=time_limit,
            pass_fds=prepared.pass_fds,
            on_output=on_output,
        )
    finally:
        prepared.close()


async def _foreground(
    ready: _Ready,
    policy: SandboxPolicy,
    command: str,
    *,
    cwd: Path,
    time_limit: float,
    on_output: Callable[[bytes], None] | None,
) -> ShellRun | ToolResult:
    """A foreground command to its end: in the kept sandbox, or as prepared."""
    if ready.lease is not None:
        return await _run_kept(
            ready.lease, policy, command,
            env=ready.env, cwd=cwd, time_limit=time_limit, on_output=on_output,
        )  # fmt: skip
    assert ready.prepared is not None
    return await run_shell(
        ready.prepared.argv,
        env=ready.env,
        cwd=cwd,
        time_limit=time_limit,
        pass_fds=ready.prepared.pass_fds,
        on_output=on_output,
    )


def _run_result(
    run: ShellRun, findings: list[str], timeout: float, *, sandboxed: bool
) -> ToolResult:
    """A finished command as the model sees it: its output, then how it ended."""
    meta: dict[str, Any] = {
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "output_bytes": run.total_bytes,
        "omitted_bytes": run.omitted_bytes,
        "sandboxed": sandboxed,
    }
    body = run.output.rstrip("\n") or "(no output)"
    if findings:
        meta["git_quarantined"] = findings
        body += "\n" + _findings_note(findings)
    failed = ""
    if run.failure:
        meta["sandbox_failure"] = run.failure
        failed = (
            f"\n[the sandbox failed: {run.failure}; it was killed with everything the "
            "command started, and the next command gets a new one]"
        )
    if run.timed_out:
        text = (
            f"{body}\n[timed out after {timeout:g} s: the command and its child "
            "processes were killed; use run_in_background for long-running commands]"
        )
        return ToolResult(text=text + failed, is_error=True, outcome="error", meta=meta)
    if run.failure:
        return ToolResult(text=body + failed, is_error=True, outcome="error", meta=meta)
    text = f"{body}\n[exit code {run.exit_code}]"
    if run.exit_code != 0 or findings:
        return ToolResult(text=text, is_error=True, outcome="error", meta=meta)
    return ToolResult(text=text, meta=meta)


class BashTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed: BashArgs = validate_args(BashArgs, args)
        policy = sandbox_policy(ctx)
        if parsed.additional_write_dirs:
            widened = await _widen(parsed, policy, ctx)
            if isinstance(widened, ToolResult):
                return widened
            policy = widened
        # Shielded so the prepared descriptors cannot be lost to a cancellation
        # (the thread would finish anyway: anyio waits for it), delivered just after.
        ready: _Ready | ToolResult | None = None
        with anyio.CancelScope(shield=True):
            ready = await anyio.to_thread.run_sync(
                _get_ready, policy, ctx, parsed.command, parsed.run_in_background
            )
        assert ready is not None  # a shielded scope never swallows the call
        if isinstance(ready, ToolResult):
            return ready
        prepared, lease, env = ready.prepared, ready.lease, ready.env
        guard, findings = ready.guard, ready.findings
        workspace = Path(ctx.workspace)
        try:
            await anyio.lowlevel.checkpoint_if_cancelled()
            if parsed.run_in_background:
                assert prepared is not None  # a background job never leases
                started = await self._background(
                    ctx, prepared, env, workspace, parsed.command, guard
                )
                return _with_findings(started, findings)
            timeout = float(parsed.timeout_seconds or ctx.bash_timeout_seconds)
            timeout = min(max(timeout, 1.0), float(MAX_TIMEOUT_SECONDS))
            try:
                run = await _foreground(
                    ready, policy, parsed.command,
                    cwd=workspace, time_limit=timeout, on_output=LiveTail.reporter(ctx, self.name),
                )  # fmt: skip
            except BaseException:
                # Cancelled mid-command: still set aside what it planted so far.
                if guard is not None:
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(guard.check)
                raise
        finally:
            if prepared is not None:
                prepared.close()
            if lease is not None:
                lease.unused()
        if isinstance(run, ToolResult):  # refused before anything ran
            return _with_findings(run, findings)
        if guard is not None:
            findings += await anyio.to_thread.run_sync(guard.check)
        return _run_result(run, findings, timeout, sandboxed=policy.bash == "enforce")

    @staticmethod
    async def _background(
        ctx: ToolContext,
        prepared: ShellCommand,
        env: dict[str, str],
        cwd: Path,
        command: str,
        guard: GitGuard | None,
    ) -> ToolResult:
        jobs = ctx.jobs
        if jobs is None:
            return ToolResult.error(
                "background jobs are not available in this context; "
                "run the command in the foreground (run_in_background=false)"
            )
        # Checked when the job ends (or the session kills it), not only at the next call.
        on_exit = functools.partial(_check_after_job, guard) if guard is not None else None
        try:
            job_id = await jobs.start(
                prepared.argv,
                env=env,
                cwd=cwd,
                command=command,
                pass_fds=prepared.pass_fds,
                on_exit=on_exit,
            )
        except JobError as exc:
            return ToolResult.error(str(exc))
        return ToolResult(
            text=(
                f"Started background job {job_id}. Read its output with "
                f'bash_output(job_id="{job_id}") and stop it with kill_shell(job_id="{job_id}").'
            ),
            meta={"job_id": job_id},
        )
