"""Running one hook command: on the host, JSON on stdin, bounded in time and output.

Hooks are the user's own commands, not the model's, so the bash sandbox does not
apply; what does: the provider keys are not in their environment (the same
scrubbing as the bash tool's, :func:`reasonix_core.tool.shell_sandbox.sanitized_env`),
each runs in a new process group, and when it exits, times out or its caller is
cancelled, the whole group is killed: a hook that forks a sleeper leaves nothing
behind (one that left the group with ``setsid`` cannot be reached, but its
hold on the pipes no longer delays the hook's answer). Output past :data:`MAX_OUTPUT` bytes per stream is read and dropped, so a
hook that floods its pipe neither blocks nor fills memory.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from reasonix_core.hooks.spec import HookSpec

__all__ = ["MAX_OUTPUT", "HookRun", "hook_env", "run_hook"]

#: Bytes kept of each of a hook's stdout and stderr.
MAX_OUTPUT = 64 * 1024
#: Seconds a hook's pipes are still read after it exited (its output in flight).
_DRAIN_GRACE = 1.0


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one hook run did."""

    spec: HookSpec
    # None: it did not exit by itself (timed out, or could not start).
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    # Why it could not start ("" when it did).
    error: str = ""
    truncated: bool = False


def hook_env(project_dir: Path, secret_env: frozenset[str]) -> dict[str, str]:
    """The environment hooks run in: the user's, without provider keys, with
    ``CLAUDE_PROJECT_DIR`` and ``REASONIX_PROJECT_DIR`` set to the project."""
    from reasonix_core.tool.shell_sandbox import sanitized_env

    env = sanitized_env(secret_env)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    env["REASONIX_PROJECT_DIR"] = str(project_dir)
    return env


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


async def run_hook(spec: HookSpec, payload: bytes, env: Mapping[str, str], cwd: Path) -> HookRun:
    """Run ``spec`` with ``payload`` on stdin; never raises for the hook's own faults."""
    try:
        process = await anyio.open_process(
            [_shell(), "-c", spec.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd),
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(spec, None, error=f"could not start: {exc.strerror or exc}")
    out, err = _Output(), _Output()
    with anyio.move_on_after(spec.timeout) as scope:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_feed, process, payload)
                tg.start_soon(out.drain, process.stdout)
                tg.start_soon(err.drain, process.stderr)
                await process.wait()
                # Whatever it left running in its group (a forked sleeper holding
                # the pipes open) goes with it.
                _kill_group(process.pid)
                # A child that left the group (setsid) may hold the pipes open for
                # ever: what the hook wrote before exiting is its answer, so the
                # reading stops shortly after its exit instead of at the timeout.
                with anyio.move_on_after(_DRAIN_GRACE):
                    await out.closed.wait()
                    await err.closed.wait()
                tg.cancel_scope.cancel()
        finally:  # timed out, cancelled or done: nothing of it stays
            _kill_group(process.pid)
            with anyio.CancelScope(shield=True):
                await _reap(process)
    timed_out = scope.cancelled_caught
    return HookRun(
        spec,
        None if timed_out else process.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
    )


class _Output:
    """One of a hook's streams: the first :data:`MAX_OUTPUT` bytes, the rest dropped."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.truncated = False
        # Set at end of file (every writer closed it).
        self.closed = anyio.Event()

    async def drain(self, stream: ByteReceiveStream | None) -> None:
        try:
            if stream is None:
                return
            async for chunk in stream:
                room = MAX_OUTPUT - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                if len(chunk) > room:
                    self.truncated = True
        finally:
            self.closed.set()

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def _feed(process: anyio.abc.Process, payload: bytes) -> None:
    if process.stdin is None:
        return
    try:
        await process.stdin.send(payload)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # a hook need not read its input
    finally:
        try:
            await process.stdin.aclose()
        except (anyio.BrokenResourceError, OSError):
            pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


async def _reap(process: anyio.abc.Process) -> None:
    try:
        await process.wait()
    except Exception:
        pass
    await process.aclose()
