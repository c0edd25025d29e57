"""A sandbox kept per session: one bubblewrap whose zygote starts every command.

A fresh bubblewrap per command spends most of a ``bash true`` step creating and
tearing down namespaces (docs/PERFORMANCE.md, "A sandbox kept per session"). A
:class:`~reasonix_core.tool.sandbox_keeper.SandboxKeeper` (one per session,
:attr:`SessionEnv.kept_sandboxes
<reasonix_core.tool.env.SessionEnv.kept_sandboxes>`) keeps one bubblewrap per
sandbox policy instead, built with exactly the options a fresh one gets
(:func:`~reasonix_core.tool.shell_sandbox.bwrap_argv`) plus ``--as-pid-1``, and
running :mod:`reasonix_core.tool.sandbox_zygote` as its PID namespace's init.
docs/SECURITY.md ("A sandbox kept per session") lists each attack on it and the
test that holds it. In short:

- **Before every command** the bubblewrap options are built again and compared
  with the kept sandbox's, with the ``(dev, ino)`` of every path in them (an
  ``O_PATH`` descriptor of each is held, so no inode number is reused) and with
  the host's mount table; the zygote compares its own mount table too (a mask
  over a file renamed over on the host is detached in the sandbox). Any
  difference: the kept sandbox is torn down and a new one built.
- **After every command**, before the call returns, the zygote kills everything
  in the namespace, reaps until none is left and empties every tmpfs
  (``/tmp``, ``/dev``, the masks); what it cannot restore retires the sandbox.
- **Not the kept one**: a call with a one-call write grant, a background job,
  or a call while the kept one is busy gets a fresh bubblewrap
  (:func:`~reasonix_core.tool.shell_sandbox.prepare_command`). The kept one is
  never widened.
- **Fail closed**: a zygote that died, stopped, closed or garbled its channel,
  or did not answer, gets its whole bubblewrap killed; the call is a tool error
  or a timeout and the next command gets a new sandbox. A command is never run
  outside a sandbox.
- bubblewrap runs with ``--die-with-parent`` from a thread that lives as long
  as the keeper (``PR_SET_PDEATHSIG`` fires when the *thread* that spawned it
  exits); closing the keeper, or the end of file on its channel, ends it.

Where a kept sandbox cannot be used (bubblewrap missing, the interpreter inside
a writable root, a start that failed), ``SandboxKeeper.lease`` returns None
and the caller uses a fresh bubblewrap, which refuses or runs as before.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import queue
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import anyio
import anyio.lowlevel

from reasonix_core.tool.jobs import REAP_SECONDS
from reasonix_core.tool.sandbox import SandboxPolicy, is_within

log = logging.getLogger(__name__)

T = TypeVar("T")

HEADER = struct.Struct(">I")
MAX_FRAME = 16 * 1024 * 1024
READ_BYTES = 64 * 1024
#: How long a new kept sandbox may take to say it is ready.
START_SECONDS = 15.0
#: Stands for the seccomp filter's descriptor in a spec (a real one is made per start).
SECCOMP_MARK = -1
MOUNTINFO = "/proc/self/mountinfo"
#: The zygote's own environment: nothing of the session's (commands get theirs).
ZYGOTE_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}


class ChannelBroken(Exception):
    """The zygote's channel failed: closed, garbled, or not answering."""


def _host_mounts() -> bytes:
    with open(MOUNTINFO, "rb") as f:
        return f.read()


# -- what a kept sandbox is built from ------------------------------------------


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """The bubblewrap options of a policy, the seccomp descriptor as
    :data:`SECCOMP_MARK`: what a kept sandbox is built from and compared with."""

    argv: tuple[str, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        """Every host path the options name (bound, masked or mounted over)."""
        return tuple(dict.fromkeys(a for a in self.argv[1:] if a.startswith("/")))

    @property
    def sweep(self) -> tuple[str, ...]:
        """The sandbox's tmpfs mounts, emptied after every command: ``/dev``,
        ``/tmp``, the socket directories and the masked folders."""
        return tuple(
            self.argv[i + 1] for i, arg in enumerate(self.argv[:-1]) if arg in ("--tmpfs", "--dev")
        )


def spec_for(policy: SandboxPolicy) -> SandboxSpec:
    """What a kept sandbox for ``policy`` is built from, now. Raises
    :class:`~reasonix_core.tool.shell_sandbox.SandboxUnavailable` as a fresh
    bubblewrap would."""
    from reasonix_core.tool.shell_sandbox import bwrap_argv

    return SandboxSpec(
        tuple(bwrap_argv(policy, seccomp_fd=SECCOMP_MARK))
    )


def zygote_python(policy: SandboxPolicy) -> str:
    """The interpreter that runs the zygote: this process's own, unless a sandboxed
    command could have replaced it or its standard library (then no kept sandbox)."""
    python = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    roots = policy.resolved_write_roots()
    for path in (python, prefix):
        if any(is_within(Path(path), root) for root in roots):
            raise OSError(f"{path} is inside a folder sandboxed commands can write")
    return python


class _Pins:
    """An ``O_PATH`` descriptor and the ``(dev, ino)`` of each path: holding the
    descriptor keeps the inode alive, so its number cannot come back on another
    file (an editor's save renamed over a masked file, twice)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.fds: list[int] = []
        self.ids: dict[str, tuple[int, int] | None] = {}
        try:
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
                except FileNotFoundError:
                    self.ids[path] = None
                    continue
                self.fds.append(fd)
                st = os.fstat(fd)
                self.ids[path] = (st.st_dev, st.st_ino)
        except BaseException:
            self.close()
            raise

    def hold(self) -> bool:
        for path, pinned in self.ids.items():
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                if pinned is not None:
                    return False
                continue
            except OSError:
                return False
            if pinned != (st.st_dev, st.st_ino):
                return False
        return True

    def close(self) -> None:
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)


# -- the thread that spawns -------------------------------------------------------


class Spawner:
    """One thread per keeper that starts every kept bubblewrap and lives until the
    keeper closes: ``--die-with-parent`` is ``PR_SET_PDEATHSIG``, which fires when
    the *thread* that spawned the process exits (a worker thread of anyio's pool
    ends after 10 idle seconds)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], object], Future[object]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    def call(self, fn: Callable[[], T]) -> T:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="reasonix-sandbox-spawner", daemon=True
            )
            self._thread.start()
        future: Future[object] = Future()
        self._queue.put((fn, future))
        return future.result()  # type: ignore[return-value]

    def _loop(self) -> None:
        while (item := self._queue.get()) is not None:
            fn, future = item
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the caller
                future.set_exception(exc)

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=REAP_SECONDS)


# -- one kept sandbox -----------------------------------------------------------


def _frame(message: Mapping[str, object]) -> bytes:
    data = json.dumps(message).encode()
    return HEADER.pack(len(data)) + data


def _read_child_pid(fd: int, deadline: float) -> int:
    """bubblewrap's ``--info-fd`` report: the sandbox's pid 1 as the host sees it."""
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
        try:
            info = json.loads(data)
        except ValueError:
            continue
        pid = info.get("child-pid") if isinstance(info, dict) else None
        if isinstance(pid, int):
            return pid
    raise OSError(f"bubblewrap reported no child pid ({data[:200]!r})")


class KeptSandbox:
    """One running bubblewrap, its zygote and the facts it was built from."""

    def __init__(
        self,
        policy: SandboxPolicy,
        spec: SandboxSpec,
        pins: _Pins,
        mounts: bytes,
        bwrap: subprocess.Popen[bytes],
        ctl: socket.socket,
        zygote_pid: int,
        zygote_pidfd: int,
    ) -> None:
        self.policy = policy
        self.spec = spec
        self.pins = pins
        self.mounts = mounts
        self.bwrap = bwrap
        self.ctl = ctl
        self.zygote_pid = zygote_pid
        self.zygote_pidfd = zygote_pidfd
        self.busy = False
        self.dead = False
        self.used = time.monotonic()
        self._lock = threading.Lock()

    @classmethod
    def start(
        cls, policy: SandboxPolicy, spec: SandboxSpec, source: str, spawner: Spawner
    ) -> KeptSandbox:
        """Build it and wait until its zygote says it is ready. Raises ``OSError``
        (or :class:`ChannelBroken`) when it does not start; nothing is left running."""
        from reasonix_core.tool.seccomp import filter_fd, sandbox_filter

        pins = _Pins(spec.paths)
        host, inner = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        info_r, info_w = os.pipe()
        # The child's copies: closed here as soon as it has them.
        passed = [inner.fileno(), info_w]
        bwrap: subprocess.Popen[bytes] | None = None
        try:
            mounts = _host_mounts()
            argv = list(spec.argv)
            if "--seccomp" in argv:
                seccomp = filter_fd(sandbox_filter(network=policy.network))
                passed.append(seccomp)
                argv[argv.index("--seccomp") + 1] = str(seccomp)
            argv += [
                "--as-pid-1",
                "--info-fd", str(info_w),
                # The program comes on stdin (`-`), so `ps` shows a short command line.
                zygote_python(policy), "-I", "-S", "-",
                str(inner.fileno()), json.dumps({"sweep": spec.sweep}),
            ]  # fmt: skip

            bwrap = spawner.call(functools.partial(_launch, argv, tuple(passed), source))
            inner.close()
            for fd in passed[1:]:
                os.close(fd)
            passed = []
            zygote_pid, zygote_pidfd = _await_ready(host, info_r)
        except BaseException as exc:
            if passed:
                inner.close()
                for fd in passed[1:]:
                    os.close(fd)
            host.close()
            pins.close()
            said = _stop_quietly(bwrap) if bwrap is not None else ""
            if said and isinstance(exc, OSError | ChannelBroken | ValueError):
                raise OSError(f"{exc} (bubblewrap: {said})") from None
            raise
        finally:
            os.close(info_r)
        return cls(policy, spec, pins, mounts, bwrap, host, zygote_pid, zygote_pidfd)

    # -- checks -------------------------------------------------------------

    def usable(self, spec: SandboxSpec) -> bool:
        """Still exactly what a fresh bubblewrap for ``spec`` would be, and alive."""
        return (
            not self.dead
            and spec == self.spec
            and self.pins.hold()
            and _host_mounts() == self.mounts
            and self.alive()
        )

    def alive(self) -> bool:
        """The zygote runs, is not stopped, and has said nothing between commands
        (anything readable now is an end of file or a frame nobody asked for)."""
        readable, _, _ = select.select([self.ctl, self.zygote_pidfd], [], [], 0)
        if readable:
            return False
        try:
            with open(f"/proc/{self.zygote_pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state not in (b"T", b"t", b"Z", b"X")

    # -- teardown -----------------------------------------------------------

    def kill(self) -> None:
        """Kill the whole bubblewrap now: the zygote (its PID namespace dies with it)
        and bubblewrap itself. Never blocks; :meth:`reap` waits.

        The channel is shut down, not closed: a command's lease may be waiting on it
        in the event loop, and wakes up to an end of file (a closed descriptor would
        leave it waiting forever). It is closed once nobody holds it."""
        with self._lock:
            if self.dead:
                return
            self.dead = True
            try:
                self.ctl.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                signal.pidfd_send_signal(self.zygote_pidfd, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.bwrap.kill()

    def reap(self) -> None:
        """Kill it (if still running), wait (bounded) for bubblewrap, and release
        every descriptor. Blocking: call it off the event loop."""
        self.kill()
        try:
            self.bwrap.wait(timeout=REAP_SECONDS)
        except subprocess.TimeoutExpired:
            log.warning("the kept sandbox's bubblewrap (pid %s) did not exit", self.bwrap.pid)
        with self._lock:
            if self.bwrap.stderr is not None:
                self.bwrap.stderr.close()
            if self.zygote_pidfd >= 0:
                os.close(self.zygote_pidfd)
                self.zygote_pidfd = -1
            self.pins.close()
        self.release_channel()

    def release_channel(self) -> None:
        """Close the channel of a dead sandbox that no command holds any more."""
        with self._lock:
            if self.dead and not self.busy:
                self.ctl.close()


def _launch(argv: list[str], passed: tuple[int, ...], source: str) -> subprocess.Popen[bytes]:
    """Start bubblewrap (on the spawner thread) and hand the zygote its program."""
    bwrap = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd="/",
        env=ZYGOTE_ENV,
        start_new_session=True,
        pass_fds=passed,
    )
    assert bwrap.stdin is not None
    with bwrap.stdin:
        bwrap.stdin.write(source.encode())
    return bwrap


def _await_ready(host: socket.socket, info: int) -> tuple[int, int]:
    """The zygote's host pid and a pidfd of it, once it has said it is ready."""
    deadline = time.monotonic() + START_SECONDS
    zygote_pid = _read_child_pid(info, deadline)
    zygote_pidfd = os.pidfd_open(zygote_pid)
    try:
        host.settimeout(max(deadline - time.monotonic(), 0.1))
        reply = _recv_frame_blocking(host)
        if reply.get("op") != "ready":
            raise ChannelBroken(f"the zygote answered {reply!r}")
        host.setblocking(False)
    except BaseException:
        os.close(zygote_pidfd)
        raise
    return zygote_pid, zygote_pidfd


def _recv_frame_blocking(sock: socket.socket) -> dict[str, object]:
    header = _recv_exact(sock, HEADER.size)
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ChannelBroken(f"a frame of {size} bytes")
    value = json.loads(_recv_exact(sock, size))
    if not isinstance(value, dict):
        raise ChannelBroken("a frame that is not an object")
    return value  # type: ignore[return-value]


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ChannelBroken("the zygote closed its channel")
        data += chunk
    return bytes(data)


def _stop_quietly(bwrap: subprocess.Popen[bytes]) -> str:
    """Kill a bubblewrap that failed to start; the last line it wrote on stderr."""
    bwrap.kill()
    try:
        bwrap.wait(timeout=REAP_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    said = b""
    if bwrap.stderr is not None:
        if bwrap.poll() is not None:
            said = bwrap.stderr.read()
        bwrap.stderr.close()
    lines = said.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


# -- one command in a kept sandbox ----------------------------------------------


class Keeper(Protocol):
    """Who a lease gives its sandbox back to (``sandbox_keeper.SandboxKeeper``)."""

    def give_back(self, kept: KeptSandbox, *, retire: bool) -> KeptSandbox | None: ...


class KeptLease:
    """One command in a kept sandbox, behind the
    :class:`~reasonix_core.tool.foreground.Foreground` interface the bash tool
    drives: :meth:`start`, then read / wait / kill_group, and always :meth:`reap`,
    which gives the sandbox back (or retires it)."""

    def __init__(self, keeper: Keeper, kept: KeptSandbox) -> None:
        self._keeper = keeper
        self._kept = kept
        self._ctl = kept.ctl
        self._buffer = bytearray()
        self._out: int | None = None
        self._sent = False
        self._done = False
        self._kill_sent = False
        self._returned = False
        self._clean = True
        self._early = b""
        self.returncode: int | None = None
        # Why the kept sandbox failed during this command (it was killed), or None.
        self.failure: str | None = None
        # The zygote refused the command before running it (its mount table changed):
        # nothing ran, and the caller runs it in a fresh bubblewrap.
        self.refused = False

    @property
    def zygote_pid(self) -> int:
        return self._kept.zygote_pid

    @property
    def workdir(self) -> str:
        """Where commands start: the resolved workspace, bubblewrap's ``--chdir``."""
        argv = self._kept.spec.argv
        return argv[argv.index("--chdir") + 1]

    async def start(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | str) -> None:
        """Hand the command to the zygote; :meth:`wait` reads its one answer, ``done``,
        or ``refused`` (:attr:`refused`: nothing ran, the sandbox is retired). A
        channel that fails becomes :attr:`failure`, with everything killed."""
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        self._out = out_r
        os.set_blocking(out_r, False)
        try:
            frame = _frame({"op": "run", "argv": list(argv), "env": dict(env), "cwd": str(cwd)})
            self._sent = True
            await self._send(frame, out_w)
        except ChannelBroken as exc:
            self._fail(str(exc))
        except BaseException:
            await self.reap()
            raise
        finally:
            os.close(out_w)

    def unused(self) -> None:
        """Give the sandbox back without having started anything (the call was
        cancelled before its command). After :meth:`start`, :meth:`reap` does it."""
        if not self._sent and not self._returned:
            self._returned = True
            self._keeper.give_back(self._kept, retire=False)

    async def _send(self, data: bytes, fd: int) -> None:
        try:
            sent = self._ctl.sendmsg(
                [data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))]
            )
            while sent < len(data):
                await anyio.wait_writable(self._ctl)
                try:
                    sent += self._ctl.send(data[sent:])
                except BlockingIOError:
                    continue
        except OSError as exc:
            raise ChannelBroken(f"the kept sandbox's channel failed: {exc}") from None

    async def _next(self) -> dict[str, object]:
        while True:
            if len(self._buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self._buffer)
                if size > MAX_FRAME:
                    raise ChannelBroken(f"the kept sandbox sent a frame of {size} bytes")
                if len(self._buffer) >= HEADER.size + size:
                    body = bytes(self._buffer[HEADER.size : HEADER.size + size])
                    del self._buffer[: HEADER.size + size]
                    try:
                        value = json.loads(body)
                    except ValueError:
                        raise ChannelBroken("the kept sandbox sent a garbled frame") from None
                    if not isinstance(value, dict):
                        raise ChannelBroken("the kept sandbox sent a garbled frame")
                    return value  # type: ignore[return-value]
            await anyio.wait_readable(self._ctl)
            try:
                data = self._ctl.recv(READ_BYTES)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise ChannelBroken(f"the kept sandbox's channel failed: {exc}") from None
            if not data:
                raise ChannelBroken("the kept sandbox's zygote ended")
            self._buffer += data

    def _take(self, reply: dict[str, object]) -> None:
        """Note the zygote's answer: ``done`` or ``refused``."""
        op = reply.get("op")
        if op == "refused":
            self.refused = True
            self._done = True
            return
        if op != "done":
            raise ChannelBroken(f"the kept sandbox answered {op!r} out of turn")
        status = reply.get("status")
        if not isinstance(status, int):
            raise ChannelBroken("the kept sandbox sent no exit status")
        self.returncode = status
        self._clean = reply.get("clean") is True
        error = reply.get("error")
        if isinstance(error, str):
            self._early = f"bash: cannot run the command: {error}\n".encode()
            self._clean = True
        self._done = True

    def _fail(self, why: str) -> None:
        """Fail closed: kill the whole bubblewrap; the call reports ``why``."""
        if self.failure is None:
            self.failure = why
        self._done = True
        self._kept.kill()

    # -- Foreground --------------------------------------------------------

    async def read(self) -> bytes:
        if self._early:
            early, self._early = self._early, b""
            return early
        out = self._out
        if out is None:
            return b""
        while True:
            await anyio.wait_readable(out)
            try:
                return os.read(out, READ_BYTES)
            except BlockingIOError:
                continue

    async def wait(self) -> None:
        try:
            while not self._done:
                self._take(await self._next())
        except ChannelBroken as exc:
            self._fail(str(exc))

    def kill_group(self) -> None:
        """Ask the zygote to kill everything the command started."""
        if self._done or self._kill_sent:
            return
        self._kill_sent = True
        try:
            self._ctl.send(_frame({"op": "kill"}))
        except OSError as exc:
            self._fail(f"the kept sandbox could not be told to stop the command: {exc}")

    async def reap(self) -> None:
        """Wait (bounded) for the zygote to report everything dead, else kill the
        whole bubblewrap; then give the sandbox back. Immune to cancellation."""
        with anyio.CancelScope(shield=True):
            try:
                if not self._done:
                    self.kill_group()
                    with anyio.move_on_after(REAP_SECONDS):
                        await self.wait()
                    if not self._done:
                        self._fail(
                            f"the kept sandbox did not stop the command within {REAP_SECONDS:g} s"
                        )
            finally:
                if self._out is not None:
                    os.close(self._out)
                    self._out = None
                await self._give_back()

    async def _give_back(self) -> None:
        if self._returned:
            return
        self._returned = True
        # A refusal, a failure or a tmpfs it could not restore: never used again.
        retire = self.failure is not None or not self._clean or self.refused
        retired = self._keeper.give_back(self._kept, retire=retire)
        if retired is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(retired.reap)
