"""What a bubblewrap kept per session ("zygote") would save per command: a prototype.

Not product code. Issue 24's last target (sandboxed bash step <= 1.3 x unsandboxed,
wall) is out of reach for a fresh bubblewrap per command (docs/PERFORMANCE.md, "Per
bash step"). This measures the alternative before anyone builds it: one bubblewrap
started once (the same flags as ``shell_sandbox.build_command``, plus
``--cap-add CAP_SYS_ADMIN`` so the process inside may create namespaces), running a
small Python loop that gets one command per line on a pipe and runs it. Modes, per
command, interleaved call by call with the two references:

- ``bare``: ``subprocess.run(["/bin/bash", "-c", "true"])`` from this process;
- ``fresh``: the same under a fresh bubblewrap (what every sandboxed command costs today);
- ``zygote pid+mnt``: what the invariants need (SECURITY.md, "A sandbox kept per
  session"): the zygote forks a child that unshares a PID and a mount namespace, forks
  the command's init (pid 1 there: a fresh ``/proc``, a fresh ``/tmp``, every
  capability dropped, ``no_new_privs``), which forks bash and waits for it; the
  namespace, and everything the command started, dies with the init;
- ``zygote pid``: the same without the mount namespace (so ``/proc`` and ``/tmp`` are
  the zygote's, shared between commands: *not* enough, measured to split the cost);
- ``zygote fork``: the same three forks without any namespace (not enough either);
- ``zygote sweep``: one PID namespace for the session (the zygote is pid 2 under
  bubblewrap's init, a child subreaper, not dumpable): ``posix_spawn`` of bash in a new
  session, then ``kill(-1, SIGKILL)`` (everything in the namespace but the init and the
  zygote), reaping until no child is left, and emptying ``/tmp`` (checked once first:
  a ``setsid`` daemon and a daemon that keeps forking are gone at the next command);
- ``zygote unshare``: pid+mnt done by util-linux instead of Python forks:
  ``posix_spawn`` of ``unshare --pid --mount --fork --mount-proc`` running ``setpriv``
  (every capability dropped, ``no_new_privs``) running bash (no fresh ``/tmp`` yet);
- ``zygote spawn``: ``os.posix_spawn`` of bash straight from the zygote, no isolation at
  all: the floor of any Python zygote's round trip;
- ``kept (product)``: what was built from the sweep mode, ``tool/kept_sandbox.py`` as the
  bash tool drives it: ``SandboxKeeper.lease`` (the bubblewrap options rebuilt and
  compared, every path's inode, the mount table), the command sent to the pid-1 zygote
  with its environment and output pipe, its output read to the end, everything killed
  and every tmpfs put back before the answer.

Run: ``.venv/bin/python bench/bench_sandbox_reuse.py [--calls 40]`` (needs a usable
bwrap; prints medians in ms and the load average).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from reasonix_core.tool.builtin.bash import collect
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.sandbox_keeper import SandboxKeeper
from reasonix_core.tool.shell_sandbox import bwrap_available, sanitized_env, shell_argv

ZYGOTE = r"""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
NEWNS, NEWPID = 0x20000, 0x20000000
REC, SLAVE, NOSUID, NODEV, NOEXEC = 16384, 1 << 19, 2, 4, 8
def chk(r, what):
    if r != 0:
        e = ctypes.get_errno(); raise OSError(e, what)
def drop_caps():
    for c in range(64):
        libc.prctl(24, c, 0, 0, 0)  # PR_CAPBSET_DROP
    hdr = struct.pack("II", 0x20080522, 0)
    chk(libc.capset(ctypes.c_char_p(hdr), ctypes.c_char_p(b"\0" * 24)), "capset")
    chk(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come back to the zygote
libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: commands cannot ptrace or read its /proc
def sweep():
    # kill everything but the init and ourselves, reap it, empty /tmp
    try:
        os.kill(-1, 9)
    except ProcessLookupError:
        pass  # nothing left
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    for name in os.listdir("/tmp"):
        path = "/tmp/" + name
        if os.path.isdir(path) and not os.path.islink(path):
            __import__("shutil").rmtree(path)
        else:
            os.unlink(path)
ctl = os.fdopen(int(sys.argv[1]), "rb", buffering=0)
out = os.fdopen(int(sys.argv[2]), "wb", buffering=0)
while line := ctl.readline():
    mode, cmd = line.decode().rstrip("\n").split(" ", 1)
    argv = ["/bin/bash", "--noprofile", "--norc", "-c", cmd]
    if mode == "unshare":
        argv = ["/usr/bin/unshare", "--pid", "--mount", "--fork", "--mount-proc", "--propagation", "slave",
                "/usr/bin/setpriv", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *argv]
    if mode == "sweep":
        pid = os.posix_spawn(argv[0], argv, os.environ, setsid=True)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        sweep()
        out.write(b"%d\n" % code); continue
    if mode in ("spawn", "unshare"):
        pid = os.posix_spawn(argv[0], argv, os.environ)
        out.write(b"%d\n" % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])); continue
    flags = (NEWPID if "pid" in mode else 0) | (NEWNS if "mnt" in mode else 0)
    c = os.fork()
    if c == 0:
        if flags:
            chk(libc.unshare(flags), "unshare")
        g = os.fork()
        if g == 0:
            if "mnt" in mode:
                chk(libc.mount(b"none", b"/", None, REC | SLAVE, None), "slave")
                chk(libc.mount(b"proc", b"/proc", b"proc", NOSUID | NODEV | NOEXEC, None), "proc")
                chk(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", NOSUID | NODEV, None), "tmp")
            b = os.fork()
            if b == 0:
                drop_caps(); os.setsid(); os.closerange(3, 1024)
                os.execv(argv[0], argv)
            os._exit(os.waitstatus_to_exitcode(os.waitpid(b, 0)[1]) & 255)
        os._exit(os.waitstatus_to_exitcode(os.waitpid(g, 0)[1]) & 255)
    out.write(b"%d\n" % os.waitstatus_to_exitcode(os.waitpid(c, 0)[1]))
"""

BWRAP = [
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
    "--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session",
]  # fmt: skip
MODES = (
    "zygote pid+mnt",
    "zygote sweep",
    "zygote unshare",
    "zygote pid",
    "zygote fork",
    "zygote spawn",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    bwrap = bwrap_available()
    if bwrap is None:
        raise SystemExit("bubblewrap is not usable here")
    cmd_r, cmd_w = os.pipe()
    res_r, res_w = os.pipe()
    zygote = subprocess.Popen(
        [bwrap, *BWRAP, "--cap-add", "CAP_SYS_ADMIN", sys.executable, "-S", "-c", ZYGOTE,
         str(cmd_r), str(res_w)],
        pass_fds=(cmd_r, res_w),
    )  # fmt: skip
    os.close(cmd_r)
    os.close(res_w)
    ctl = os.fdopen(cmd_w, "wb", buffering=0)
    res = os.fdopen(res_r, "rb", buffering=0)

    def via_zygote(mode: str, command: str) -> int:
        ctl.write(f"{mode.split()[1]} {command}\n".encode())
        return int(res.readline())

    # The isolation the real thing needs, checked once: own PID namespace (bash is
    # pid 2 under its init), no capabilities, a private /tmp, a setsid daemon killed.
    sweep_probe = 'test -z "$(ls /tmp)" && touch /tmp/x && (setsid sleep 1000 &); exit 5'
    assert via_zygote("zygote sweep", sweep_probe) == 5
    assert via_zygote("zygote sweep", '! pgrep -x sleep && test -z "$(ls /tmp)"') == 0
    spawner = "(setsid sh -c 'while :; do sleep 1000 & done' >/dev/null 2>&1 &); sleep 0.2"
    assert via_zygote("zygote sweep", spawner) == 0
    assert via_zygote("zygote sweep", "! pgrep -x sleep && ! pgrep -x sh") == 0
    probe = "test $$ = 2 && grep -q 'CapEff:.0000000000000000' /proc/self/status && test -z \"$(ls /tmp)\" && touch /tmp/x"
    assert via_zygote("zygote pid+mnt", probe) == 0, "zygote isolation probe failed"
    assert via_zygote("zygote pid+mnt", "(setsid sleep 1000 &); exit 7") == 7
    assert via_zygote("zygote pid+mnt", '! pgrep -x sleep && test -z "$(ls /tmp)"') == 0

    times: dict[str, list[float]] = {m: [] for m in ("bare", "fresh", *MODES, "kept (product)")}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as root:
        workspace, temp = Path(root, "ws"), Path(root, "tmp")
        workspace.mkdir()
        temp.mkdir()
        policy = SandboxPolicy(workspace=workspace, temp_dir=temp)
        anyio.run(interleaved, args.calls, times, via_zygote, bwrap, policy)
    ctl.close()
    zygote.wait(timeout=30)
    print(
        f"{args.calls} calls each, interleaved; load {load_before:.2f} -> {os.getloadavg()[0]:.2f}"
    )
    bare = statistics.median(times["bare"])
    for name, values in times.items():
        med = statistics.median(values)
        print(
            f"  {name:16s} median {med * 1000:6.2f} ms  p90 {sorted(values)[int(len(values) * 0.9)] * 1000:6.2f} ms  {med / bare:5.2f} x bare"
        )


async def interleaved(
    calls: int,
    times: dict[str, list[float]],
    via_zygote: Callable[[str, str], int],
    bwrap: str,
    policy: SandboxPolicy,
) -> None:
    """Each mode once per round, the product's kept sandbox last (built before timing)."""
    keeper = SandboxKeeper()
    env = sanitized_env()

    async def kept() -> None:
        lease = keeper.lease(policy)
        if lease is None:
            raise SystemExit(f"no kept sandbox: {keeper.disabled}")
        await lease.start(shell_argv("true"), env=env, cwd=policy.workspace)
        run = await collect(lease, time_limit=30)
        if run.exit_code != 0 or lease.failure:
            raise SystemExit(f"the kept sandbox failed: {lease.failure or run.output}")

    await kept()
    try:
        await _rounds(calls, times, via_zygote, bwrap, kept)
    finally:
        await keeper.aclose()


async def _rounds(
    calls: int,
    times: dict[str, list[float]],
    via_zygote: Callable[[str, str], int],
    bwrap: str,
    kept: Callable[[], Awaitable[None]],
) -> None:
    # The references are timed as they are spawned outside the event loop: blocking on purpose.
    for _ in range(calls):
        t = time.perf_counter()
        subprocess.run(["/bin/bash", "-c", "true"], check=True)  # noqa: ASYNC221
        times["bare"].append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(  # noqa: ASYNC221
            [bwrap, *BWRAP, "/bin/bash", "--noprofile", "--norc", "-c", "true"], check=True
        )
        times["fresh"].append(time.perf_counter() - t)
        for mode in MODES:
            t = time.perf_counter()
            via_zygote(mode, "true")
            times[mode].append(time.perf_counter() - t)
        t = time.perf_counter()
        await kept()
        times["kept (product)"].append(time.perf_counter() - t)


if __name__ == "__main__":
    main()
