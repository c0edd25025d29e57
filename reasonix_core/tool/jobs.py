"""Background shell jobs and the process helpers shared with the ``bash`` tool.

A :class:`JobManager` owns its processes: it is an async context manager that
enters an anyio task group, every job is watched by a task in that group, and
leaving the context (or :meth:`JobManager.aclose`) kills every job's process
group. The session puts it in ``ToolContext.jobs``::

    async with JobManager() as jobs:
        ctx.jobs = jobs
        ...
"""

from __future__ import annotations

import codecs
import itertools
import logging
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import anyio
import anyio.abc

from reasonix_core.errors import ReasonixError

log = logging.getLogger(__name__)

# How long to keep reading a finished command's pipe before giving up on a
# descendant that escaped the process group and still holds it open.
DRAIN_SECONDS = 2.0
# How long to wait for a killed process to be reaped.
REAP_SECONDS = 5.0


class JobError(ReasonixError):
    """A background-job request could not be honoured (unknown id, limit, closed)."""


async def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: Path | str | None,
    pass_fds: Sequence[int] = (),
) -> anyio.abc.Process:
    """Start ``argv`` in its own session (so its process group can be killed),
    stdin from /dev/null, stderr merged into stdout. ``pass_fds`` are inherited
    (the sandbox's seccomp filter travels this way)."""
    return await anyio.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )


def kill_process_group(process: anyio.abc.Process) -> None:
    """SIGKILL the process group led by ``process`` (it was started with
    ``start_new_session``), then the process itself if it is still unreaped."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if process.returncode is None:
        try:
            process.kill()
        except ProcessLookupError:
            pass


async def reap(process: anyio.abc.Process) -> None:
    """Kill (if needed) and wait for ``process``, immune to cancellation."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            kill_process_group(process)
        with anyio.move_on_after(REAP_SECONDS):
            await process.wait()
        with anyio.move_on_after(REAP_SECONDS):
            await process.aclose()


@dataclass(frozen=True, slots=True)
class JobOutput:
    """What :meth:`JobManager.read_new` returns: new output and current status."""

    job_id: str
    command: str
    output: str
    # "running" | "exited N" | "killed"
    status: str
    exit_code: int | None
    running: bool


@dataclass(eq=False)
class _Job:
    """One background job: its process and the output not read yet."""

    job_id: str
    command: str
    process: anyio.abc.Process
    pending: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    total: int = 0
    exit_code: int | None = None
    killed: bool = False
    finished: anyio.Event = field(default_factory=anyio.Event)
    # Run once the process is gone; what it returns is appended to the output.
    on_exit: Callable[[], Awaitable[str | None]] | None = None
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace")
    )

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    @property
    def status(self) -> str:
        if self.killed:
            return "killed"
        if self.running:
            return "running"
        return f"exited {self.exit_code}"


class JobManager:
    """Background shell processes owned by one session.

    ``max_buffer`` bounds the unread output kept per job (the oldest bytes are
    dropped, and the next read says how many); ``max_running`` bounds the
    number of jobs running at once.
    """

    def __init__(self, *, max_buffer: int = 64 * 1024, max_running: int = 16) -> None:
        self.max_buffer = max_buffer
        self.max_running = max_running
        self._jobs: dict[str, _Job] = {}
        self._ids = itertools.count(1)
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._closed = False

    async def __aenter__(self) -> JobManager:
        if self._stack is not None or self._closed:
            raise JobError("a JobManager can be entered only once")
        stack = AsyncExitStack()
        self._tg = await stack.enter_async_context(anyio.create_task_group())
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # The watchers never raise and are stopped by aclose(), so the task group
        # is closed on its own and an exception from the body propagates unwrapped.
        try:
            await self.aclose()
        finally:
            stack, self._stack = self._stack, None
            if stack is not None:
                await stack.aclose()

    # -- lifecycle ---------------------------------------------------------

    async def start(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        command: str | None = None,
        pass_fds: Sequence[int] = (),
        on_exit: Callable[[], Awaitable[str | None]] | None = None,
    ) -> str:
        """Start ``argv`` in the background and return its job id (``bash_N``).

        ``command`` is the human-readable command line shown in listings;
        ``pass_fds`` are inherited by the process; ``on_exit`` runs once it is
        gone (exited or killed) and what it returns is appended to its output.
        """
        if self._tg is None or self._closed:
            raise JobError("background jobs are not running (the job manager is closed)")
        if sum(1 for job in self._jobs.values() if job.running) >= self.max_running:
            raise JobError(
                f"too many background jobs running (limit {self.max_running}); "
                "stop one with kill_shell first"
            )
        process = await spawn(argv, env=env, cwd=cwd, pass_fds=pass_fds)
        job_id = f"bash_{next(self._ids)}"
        job = _Job(
            job_id=job_id, command=command or " ".join(argv), process=process, on_exit=on_exit
        )
        self._jobs[job_id] = job
        self._tg.start_soon(self._watch, job, name=f"reasonix job {job_id}")
        return job_id

    async def _watch(self, job: _Job) -> None:
        try:
            async with anyio.create_task_group() as tg:
                drained = anyio.Event()
                tg.start_soon(self._pump, job, drained)
                await job.process.wait()
                job.exit_code = job.process.returncode
                # The command is done: stop anything it left behind in its group.
                kill_process_group(job.process)
                with anyio.move_on_after(DRAIN_SECONDS):
                    await drained.wait()
                tg.cancel_scope.cancel()
        except Exception:  # a broken job must not take the session's jobs down
            log.exception("background job %s failed", job.job_id)
        finally:
            await reap(job.process)
            if job.exit_code is None:
                job.exit_code = job.process.returncode
            if job.on_exit is not None:
                await self._after_exit(job, job.on_exit)
            job.finished.set()

    @staticmethod
    async def _after_exit(job: _Job, on_exit: Callable[[], Awaitable[str | None]]) -> None:
        note: str | None = None
        with anyio.CancelScope(shield=True):
            try:
                note = await on_exit()
            except Exception:  # a failing follow-up must not lose the job's status
                log.exception("background job %s: the after-exit step failed", job.job_id)
                return
        if note:
            job.pending += note.encode("utf-8", "replace")

    async def _pump(self, job: _Job, drained: anyio.Event) -> None:
        stream = job.process.stdout
        try:
            if stream is None:
                return
            async for chunk in stream:
                job.total += len(chunk)
                job.pending += chunk
                excess = len(job.pending) - self.max_buffer
                if excess > 0:
                    del job.pending[:excess]
                    job.dropped += excess
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            drained.set()

    async def kill(self, job_id: str) -> JobOutput:
        """Kill the job's process group, wait for it, and return its unread output."""
        job = self._get(job_id)
        if job.running:
            job.killed = True
            kill_process_group(job.process)
            with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_SECONDS + DRAIN_SECONDS):
                await job.finished.wait()
        return self.read_new(job_id)

    async def aclose(self) -> None:
        """Kill every job and stop the watchers. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            for job in self._jobs.values():
                if job.running:
                    job.killed = True
                    kill_process_group(job.process)
            with anyio.move_on_after(REAP_SECONDS + DRAIN_SECONDS):
                for job in self._jobs.values():
                    await job.finished.wait()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    # -- queries -----------------------------------------------------------

    def _get(self, job_id: str) -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            known = ", ".join(self._jobs) or "none"
            raise JobError(f"no background job {job_id!r} (known jobs: {known})")
        return job

    def read_new(self, job_id: str) -> JobOutput:
        """Output produced since the previous read, and the job's status."""
        job = self._get(job_id)
        data = bytes(job.pending)
        job.pending.clear()
        text = job.decoder.decode(data, final=not job.running)
        if job.dropped:
            text = f"[... {job.dropped} earlier bytes dropped ...]\n{text}"
            job.dropped = 0
        return self._snapshot(job, text)

    def status(self, job_id: str) -> JobOutput:
        """The job's status without consuming its output."""
        return self._snapshot(self._get(job_id), "")

    def list(self) -> list[JobOutput]:
        return [self._snapshot(job, "") for job in self._jobs.values()]

    @staticmethod
    def _snapshot(job: _Job, text: str) -> JobOutput:
        return JobOutput(
            job_id=job.job_id,
            command=job.command,
            output=text,
            status=job.status,
            exit_code=None if job.running else job.exit_code,
            running=job.running,
        )
