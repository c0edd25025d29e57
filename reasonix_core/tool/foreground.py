"""One shell command run to completion from the event loop, without a thread.

``bash`` waits for every foreground command. anyio's process (asyncio's on Python
3.11) starts a watcher thread per child to learn that it exited and reads its pipe
through a transport: about 0.5 ms a command over a bare ``fork``/``exec``, a good
part of a ``bash true`` step. On Linux 5.3+ a pidfd (``os.pidfd_open``) becomes
readable when the process exits, so the loop waits on it and on the output pipe
directly (:class:`PidfdProcess`). Elsewhere (or with anyio before 4.7) :func:`start`
returns anyio's process behind the same interface (:class:`AnyioProcess`), so the
caller has one body.

Both keep the guarantees of :mod:`reasonix_core.tool.jobs`: the command leads its
own session, stdin is ``/dev/null``, stderr goes to stdout, and
:meth:`~Foreground.kill_group` kills its whole process group. The pidfd process is
reaped only in :meth:`~Foreground.reap`, after the group was killed: until then the
exited leader holds its pid, so the group signal cannot reach a process that
reused the number.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

import anyio
import anyio.abc

from reasonix_core.tool.jobs import REAP_SECONDS, kill_process_group, reap, spawn

READ_BYTES = 64 * 1024


class Foreground(Protocol):
    """A started command: read its output, wait for its exit, kill its group, reap it."""

    @property
    def returncode(self) -> int | None: ...

    async def read(self) -> bytes:
        """The next output bytes; ``b""`` at the end of the stream."""
        ...

    async def wait(self) -> None:
        """Until the command (the group's leader) has exited."""
        ...

    def kill_group(self) -> None:
        """SIGKILL the command's process group and the command itself."""
        ...

    async def reap(self) -> None:
        """Kill (if needed) and wait for the command, release its descriptors;
        immune to cancellation, bounded by ``REAP_SECONDS``."""
        ...


@functools.cache
def pidfd_supported() -> bool:
    """True when this kernel hands out pidfds and anyio can wait on a descriptor
    (``anyio.wait_readable``, anyio 4.7+); checked once per process."""
    if not hasattr(os, "pidfd_open") or not hasattr(anyio, "wait_readable"):
        return False
    try:
        fd = os.pidfd_open(os.getpid())
    except OSError:
        return False
    os.close(fd)
    return True


class PidfdProcess:
    """A ``subprocess.Popen`` watched through a pidfd and a non-blocking pipe."""

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int) -> None:
        self._popen = popen
        self._pidfd = pidfd
        stdout: IO[bytes] | None = popen.stdout
        assert stdout is not None
        self._stdout = stdout
        self._out = stdout.fileno()
        os.set_blocking(self._out, False)
        self._exited = False

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def read(self) -> bytes:
        while True:
            await anyio.wait_readable(self._out)
            try:
                return os.read(self._out, READ_BYTES)
            except BlockingIOError:
                continue

    async def wait(self) -> None:
        await anyio.wait_readable(self._pidfd)
        self._exited = True

    def kill_group(self) -> None:
        if self._popen.returncode is not None:
            return  # reaped: its pid, and so its group id, may be someone else's now
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    async def reap(self) -> None:
        with anyio.CancelScope(shield=True):
            try:
                if not self._exited:
                    self.kill_group()
                    with anyio.move_on_after(REAP_SECONDS):
                        await self.wait()
                if self._exited:
                    self._popen.wait()
                else:
                    self._popen.poll()  # stuck (unkillable): subprocess reaps it later
            finally:
                os.close(self._pidfd)
                self._stdout.close()


class AnyioProcess:
    """anyio's process behind :class:`Foreground` (where pidfds are missing)."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self._process = process

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def read(self) -> bytes:
        stream = self._process.stdout
        if stream is None:
            return b""
        try:
            return await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    async def wait(self) -> None:
        await self._process.wait()

    def kill_group(self) -> None:
        kill_process_group(self._process)

    async def reap(self) -> None:
        await reap(self._process)


async def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: Path | str | None,
    pass_fds: Sequence[int] = (),
) -> Foreground:
    """Start ``argv`` as :func:`reasonix_core.tool.jobs.spawn` does."""
    if not pidfd_supported():
        return AnyioProcess(await spawn(argv, env=env, cwd=cwd, pass_fds=pass_fds))
    return _start_pidfd(argv, env=env, cwd=cwd, pass_fds=pass_fds)


def _start_pidfd(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: Path | str | None,
    pass_fds: Sequence[int],
) -> PidfdProcess:
    # Called on the event loop, as asyncio's own subprocess_exec calls Popen: it
    # returns once the child has exec'd (vfork), well under a millisecond.
    popen = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    try:
        pidfd = os.pidfd_open(popen.pid)
    except BaseException:
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        popen.kill()
        popen.wait()
        assert popen.stdout is not None
        popen.stdout.close()
        raise
    return PidfdProcess(popen, pidfd)
