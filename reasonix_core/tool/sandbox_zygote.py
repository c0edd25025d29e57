"""The process inside a kept sandbox that starts each command (docs/SECURITY.md,
"A sandbox kept per session").

It is run by the host's own Python interpreter as bubblewrap's command, with
``--as-pid-1``: ``python -I -S - CTL_FD CONFIG``, its text on stdin. The host
reads the text once per session (``kept_sandbox.zygote_source``), so a command
that rewrites this file (a Reasonix checkout being the workspace) changes nothing
for the session. It imports only the standard library, nothing of
Reasonix, and never runs on import.

Why pid 1: the kernel delivers no signal to a PID namespace's init from inside
that namespace unless the init has a handler for it, and ``SIGKILL`` / ``SIGSTOP``
never. So ``kill -9 -1`` or ``kill -STOP 1`` from a command cannot touch it, and
when it dies the kernel kills everything in the namespace. It keeps no signal
handler (``SIGINT`` is reset to its default, which the kernel drops for an init).
It is not dumpable, so a command (same uid, no capability) can neither ptrace it
nor open its ``/proc/1/fd`` or ``/proc/1/environ``.

The control channel is an unnamed socketpair inherited as ``CTL_FD``, marked
close-on-exec here, so no command inherits it. Frames both ways are a 4-byte
big-endian length and a JSON object. The host sends ``{"op": "run", "argv",
"env", "cwd"}`` with one descriptor (SCM_RIGHTS): the write end of the command's
output pipe, used as its stdout and stderr (stdin is ``/dev/null``). The zygote
answers ``refused`` when its mount table is no longer the one it started with (a
mask detached by a rename on the host; nothing ran, and it ends), else ``done``
once the command has exited *and* everything in the namespace is dead and reaped
(``kill(-1, SIGKILL)`` until ``waitpid`` says ``ECHILD``) *and* each tmpfs is
back to what it held at the start *and* no IPC object is left in the sandbox's
IPC namespace (:func:`clear_ipc`); ``clean`` is false when a tmpfs could not be
put back, an IPC object could not be removed, or a command changed what the zygote's children inherit from it
(:func:`inherited`): the host retires the sandbox. A ``kill`` frame while a command runs ends it
the same way. End of file on the channel, or anything it does not expect, kills
everything and ends the zygote, and with it the namespace.

CONFIG (JSON): ``{"sweep": [tmpfs mount points to empty after every command]}``.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys

PR_SET_DUMPABLE = 4
HEADER = struct.Struct(">I")
MAX_FRAME = 16 * 1024 * 1024
MOUNTINFO = "/proc/self/mountinfo"

#: (mode, inode) of each entry of a tmpfs, by path relative to its mount point.
Entries = dict[str, tuple[int, int]]


class ProtocolError(Exception):
    """The host sent something the zygote does not expect: it stops."""


def _not_dumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


# -- framing ------------------------------------------------------------------


def send(ctl: socket.socket, message: dict[str, object]) -> None:
    data = json.dumps(message).encode()
    ctl.sendall(HEADER.pack(len(data)) + data)


def _recv_exact(ctl: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = ctl.recv(size - len(data))
        if not chunk:
            raise ProtocolError("end of file inside a frame")
        data += chunk
    return bytes(data)


def receive(ctl: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    """The next frame and the descriptors that came with it; None at end of file."""
    fds: list[int] = []
    msg, ancdata, flags, _ = ctl.recvmsg(
        HEADER.size, socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC
    )
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds += list(struct.unpack(f"{usable // 4}i", data[:usable]))
    try:
        if not msg:
            if fds:
                raise ProtocolError("descriptors without a frame")
            return None
        if flags & socket.MSG_CTRUNC:
            raise ProtocolError("too many descriptors")
        if len(msg) < HEADER.size:
            msg += _recv_exact(ctl, HEADER.size - len(msg))
        (size,) = HEADER.unpack(msg)
        if size > MAX_FRAME:
            raise ProtocolError(f"a frame of {size} bytes")
        value = json.loads(_recv_exact(ctl, size))
        if not isinstance(value, dict):
            raise ProtocolError("a frame that is not an object")
        return value, fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# -- what a command leaves behind ----------------------------------------------


def kill_everything() -> None:
    """Kill every process in the namespace but this one and reap them all.

    ``kill(-1)`` before every blocking wait: a process forked while the previous
    round was being delivered is killed by the next, and ``waitpid`` returns as
    soon as one child dies, so the loop ends only when no process is left."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _walk(root: str, dev: int) -> Entries:
    """Every entry of the tmpfs mounted at ``root``; mount points on it (another
    device) are neither listed nor entered."""
    entries: Entries = {}
    pending = [""]
    while pending:
        rel = pending.pop()
        with os.scandir(f"{root}/{rel}" if rel else root) as listing:
            for entry in listing:
                st = entry.stat(follow_symlinks=False)
                if st.st_dev != dev:
                    continue
                path = f"{rel}/{entry.name}" if rel else entry.name
                entries[path] = (st.st_mode, st.st_ino)
                if stat.S_ISDIR(st.st_mode):
                    pending.append(path)
    return entries


class Tmpfs:
    """One tmpfs of the sandbox (``/tmp``, ``/dev``, a mask), as it was at the start."""

    def __init__(self, root: str) -> None:
        self.root = root
        st = os.lstat(root)
        self.identity = (st.st_dev, st.st_ino, st.st_mode)
        self.entries = _walk(root, st.st_dev)

    def restore(self) -> bool:
        """Remove what commands added; False when something it started with was
        changed or removed (the host then builds a fresh sandbox)."""
        st = os.lstat(self.root)
        if (st.st_dev, st.st_ino, st.st_mode) != self.identity:
            return False
        exact = True
        seen: set[str] = set()
        pending = [""]
        while pending:
            rel = pending.pop()
            with os.scandir(f"{self.root}/{rel}" if rel else self.root) as listing:
                found = list(listing)
            for entry in found:
                path = f"{rel}/{entry.name}" if rel else entry.name
                est = entry.stat(follow_symlinks=False)
                if est.st_dev != st.st_dev:
                    continue
                before = self.entries.get(path)
                if before is None:
                    exact = _remove(entry.path, est.st_mode) and exact
                    continue
                seen.add(path)
                if before != (est.st_mode, est.st_ino):
                    exact = False
                elif stat.S_ISDIR(est.st_mode):
                    pending.append(path)
        return exact and seen == set(self.entries)


def _remove(path: str, mode: int) -> bool:
    failed: list[str] = []
    if stat.S_ISDIR(mode):
        shutil.rmtree(path, onerror=lambda *_: failed.append(path))
    else:
        try:
            os.unlink(path)
        except OSError:
            failed.append(path)
    return not failed


# -- IPC objects a command left -------------------------------------------------------

#: The sandbox's own message queues (bwrap --mqueue, in its IPC namespace).
MQUEUE = "/dev/mqueue"
IPC_RMID = 0
#: /proc/sysvipc file, and how to remove one of its ids: (shmctl | semctl | msgctl).
SYSV = ("shm", "sem", "msg")


def _sysv_ids(kind: str) -> list[int] | None:
    try:
        lines = _read_text(f"/proc/sysvipc/{kind}").splitlines()[1:]
    except OSError:
        return None
    return [int(line.split()[1]) for line in lines if line.strip()]


def _sysv_remove(kind: str, ident: int) -> None:
    libc = _libc()
    if kind == "shm":
        libc.shmctl(ident, IPC_RMID, None)
    elif kind == "sem":
        libc.semctl(ident, 0, IPC_RMID)
    else:
        libc.msgctl(ident, IPC_RMID, None)


def clear_ipc() -> bool:
    """Remove every SysV segment, semaphore set and message queue and every POSIX
    message queue of the sandbox's IPC namespace (commands are all dead by now), so
    nothing one command left is there for the next. False when something is left
    or cannot be listed: the host retires the sandbox."""
    try:
        for name in os.listdir(MQUEUE):
            try:
                os.unlink(os.path.join(MQUEUE, name))
            except FileNotFoundError:
                pass
        queues_left = bool(os.listdir(MQUEUE))
    except OSError:
        return False
    for kind in SYSV:
        for ident in _sysv_ids(kind) or ():
            _sysv_remove(kind, ident)
    return not queues_left and all(_sysv_ids(kind) == [] for kind in SYSV)


# -- what commands inherit from the zygote ------------------------------------------

#: ``ioprio_get`` by machine (no Python API); elsewhere the I/O priority is not compared.
IOPRIO_GET = {"x86_64": 252, "aarch64": 31}
IOPRIO_WHO_PROCESS = 1
#: Files of the zygote's /proc entry a command can write (Reasonix run as root owns
#: them even with the zygote not dumpable) and every later command inherits.
INHERITED_PROC = ("oom_score_adj", "coredump_filter")


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def inherited() -> tuple[object, ...]:
    """What every command inherits from the zygote and a command can change in it
    from outside (same uid, no capability, no ptrace): its resource limits
    (``prlimit --pid 1``), nice value, CPU affinity, scheduling policy (``renice``,
    ``taskset``, ``chrt`` on pid 1), I/O priority (``ionice -p 1``) and, as root, its
    ``/proc/1/oom_score_adj`` and ``coredump_filter``. A hard limit lowered cannot
    be raised again without a capability, so a difference retires the sandbox."""
    limits = tuple(
        resource.getrlimit(getattr(resource, name))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    )
    ioprio = None
    number = IOPRIO_GET.get(os.uname().machine)
    if number is not None:
        ioprio = _libc().syscall(number, IOPRIO_WHO_PROCESS, 0)
    proc = tuple(_read_text(f"/proc/self/{name}") for name in INHERITED_PROC)
    return (
        limits,
        os.getpriority(os.PRIO_PROCESS, 0),
        sorted(os.sched_getaffinity(0)),
        os.sched_getscheduler(0),
        os.sched_getparam(0).sched_priority,
        ioprio,
        proc,
    )


# -- one command ----------------------------------------------------------------


def _spawn(message: dict[str, object], out: int) -> subprocess.Popen[bytes]:
    """Start one command as a fresh bubblewrap would: its own session, stdin from
    ``/dev/null``, stdout and stderr to ``out``, no other descriptor, every signal at
    its default (``restore_signals``: Python ignores SIGPIPE and SIGXFSZ)."""
    argv = message.get("argv")
    env = message.get("env")
    cwd = message.get("cwd")
    if not (
        isinstance(argv, list)
        and argv
        and all(isinstance(a, str) for a in argv)
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and isinstance(cwd, str)
    ):
        raise ProtocolError("a malformed run frame")
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
        cwd=cwd,
        env=env,
        close_fds=True,
        restore_signals=True,
        start_new_session=True,
    )


def run_one(ctl: socket.socket, message: dict[str, object], out: int) -> bool:
    """Run one command to its end; False when the channel closed meanwhile.

    The zygote holds its copy of the output pipe until everything is dead and swept:
    the host sees the end of the output and ``done`` together (one wake-up)."""
    try:
        try:
            process = _spawn(message, out)
        except OSError as exc:
            send(ctl, {"op": "done", "status": 127, "error": f"{exc.strerror or exc}"})
            return True
        status, killed, open_channel = _wait(ctl, process)
        kill_everything()
        if not open_channel:
            return False
        clean = (
            all(tmpfs.restore() for tmpfs in SWEEP) and clear_ipc() and inherited() == INHERITED[0]
        )
    finally:
        os.close(out)
    # Killed on request: -9, as when the host kills a fresh bubblewrap. Killed by a
    # signal otherwise: 128 + the signal, as bubblewrap reports it.
    code = -signal.SIGKILL if killed else (128 - status if status < 0 else status)
    send(ctl, {"op": "done", "status": code, "clean": clean})
    return True


def _wait(ctl: socket.socket, process: subprocess.Popen[bytes]) -> tuple[int, bool, bool]:
    """Until the command exits, or the host asks for it to be killed (a ``kill``
    frame, or the end of the channel): (its status, killed, channel still open)."""
    pidfd = os.pidfd_open(process.pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(ctl.fileno(), select.POLLIN)
    killed = False
    open_channel = True
    try:
        while pidfd not in {fd for fd, _ in poller.poll()}:
            received = receive(ctl)
            if received is None:
                open_channel = False
            elif received[0].get("op") != "kill" or received[1]:
                raise ProtocolError("only a kill frame may come while a command runs")
            killed = True
            os.kill(-1, signal.SIGKILL)
            poller.unregister(ctl.fileno())
    finally:
        os.close(pidfd)
    return process.wait(), killed, open_channel


SWEEP: list[Tmpfs] = []
#: :func:`inherited` at the start.
INHERITED: list[tuple[object, ...]] = []


def serve(ctl: socket.socket, sweep: list[str]) -> None:
    mounts = _read_text(MOUNTINFO)
    SWEEP.extend(Tmpfs(root) for root in sweep)
    INHERITED.append(inherited())
    send(ctl, {"op": "ready"})
    while (received := receive(ctl)) is not None:
        message, fds = received
        if message.get("op") != "run" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise ProtocolError(f"unexpected frame {message.get('op')!r}")
        if _read_text(MOUNTINFO) != mounts:
            os.close(fds[0])
            send(ctl, {"op": "refused", "why": "the sandbox's mount table changed"})
            return
        if not run_one(ctl, message, fds[0]):
            return


def main(args: list[str]) -> None:
    if os.getpid() != 1:
        sys.exit("the sandbox zygote must be its PID namespace's init (bwrap --as-pid-1)")
    _not_dumpable()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    ctl_fd = int(args[0])
    config = json.loads(args[1])
    # Nothing else from the host stays open: only the channel, close-on-exec.
    os.closerange(3, ctl_fd)
    os.closerange(ctl_fd + 1, os.sysconf("SC_OPEN_MAX"))
    os.set_inheritable(ctl_fd, False)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    ctl = socket.socket(fileno=ctl_fd)
    try:
        serve(ctl, [str(root) for root in config["sweep"]])
    finally:
        kill_everything()


if __name__ == "__main__":
    main(sys.argv[1:])
