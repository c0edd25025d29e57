"""An attacker's review of the sandbox kept per session (tool/kept_sandbox.py,
sandbox_zygote.py): one command trying to change what a later one gets, to reach the
zygote, or to reach the host. Each test drives the real bash tool through a real
kept bubblewrap, as ``test_sandbox_kept.py`` does; nothing bounds a wall time.

What every command inherits from the zygote but a command can change from outside
it (same uid, no capability, no ptrace needed): ``prlimit --pid 1``, ``renice``,
``taskset``, ``chrt``, ``ionice`` on pid 1, and as root its ``/proc/1/oom_score_adj``.
Before the fix each of these stayed for every later command of the session."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from reasonix_core.tool import shell_sandbox
from reasonix_core.tool.sandbox_keeper import SandboxKeeper
from tests.core.tool_helpers import all_gone, kept_pids, kept_sandbox_ctx, run_bash, sandbox_ctx

needs_bwrap = pytest.mark.skipif(
    shell_sandbox.bwrap_available() is None, reason="bwrap is not usable here"
)
pytestmark = [pytest.mark.sandbox, needs_bwrap]

PYTHON = os.path.realpath(sys.executable)


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
    path = Path(tempfile.mkdtemp(prefix="rx-kept-attack-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _have(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


# What a later command sees of what it inherited (each line names one thing).
INHERITED = (
    "prlimit --pid $$ --noheadings --output RESOURCE,SOFT,HARD; "
    "echo nice=$(nice); taskset -p $$; chrt -p $$; ionice -p $$; "
    "echo oom=$(cat /proc/self/oom_score_adj); echo filter=$(cat /proc/self/coredump_filter)"
)


@pytest.mark.parametrize(
    "attack",
    [
        "prlimit --pid 1 --fsize=4096:4096",
        "prlimit --pid 1 --nofile=64:64",
        "prlimit --pid 1 --nproc=50:50",
        "prlimit --pid 1 --as=200000000:200000000",
        "prlimit --pid 1 --stack=65536",
        "renice -n 19 -p 1",
        "taskset -p -c 0 1",
        "chrt -i -p 0 1",
        "ionice -c 3 -p 1",
        "echo 1000 > /proc/1/oom_score_adj",
        "echo 0 > /proc/1/coredump_filter",
    ],
    ids=[
        "fsize",
        "nofile",
        "nproc",
        "as",
        "stack",
        "renice",
        "taskset",
        "chrt-idle",
        "ionice-idle",
        "oom-score",
        "coredump-filter",
    ],
)
async def test_what_a_command_changes_in_the_zygote_never_reaches_the_next_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], attack: str
) -> None:
    """The next command inherits exactly what a fresh bubblewrap's would: the kept
    sandbox that was changed is retired and a new one built."""
    _have("prlimit", "taskset", "chrt", "ionice", "renice")
    ctx = kept_sandbox_ctx(keeper, *dirs)
    before = await run_bash(ctx, INHERITED)
    await run_bash(ctx, f"{attack}; echo attacked")
    after = await run_bash(ctx, INHERITED)
    fresh = await run_bash(sandbox_ctx(*dirs), INHERITED)
    assert after.text == before.text, (before.text, after.text)
    assert _no_pids(after.text) == _no_pids(fresh.text), (after.text, fresh.text)


def _no_pids(text: str) -> str:
    """``taskset -p``/``chrt -p`` name the pid they were asked about."""
    return re.sub(r"pid \d+'s", "pid N's", text)


async def test_a_file_size_limit_set_on_pid_1_does_not_break_the_next_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """The consequence, not just the number: with RLIMIT_FSIZE lowered on the zygote a
    later command's write of 8 KiB died of SIGXFSZ."""
    _have("prlimit")
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(ctx, "true")
    await run_bash(ctx, "prlimit --pid 1 --fsize=4096:4096")
    result = await run_bash(ctx, "head -c 8192 /dev/zero > big && wc -c < big")
    assert "8192" in result.text, result.text
    assert (dirs[0] / "big").stat().st_size == 8192


# -- the kernel keyrings: not namespaced, on both paths ------------------------------

KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_REVOKE = 3
KEYCTL_UNLINK = 9
KEYCTL_SEARCH = 10
KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4
SYSCALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}

KEY_PROBE = """
import ctypes, os, sys
add_key, request_key, keyctl = {numbers}
libc = ctypes.CDLL(None, use_errno=True)
kid = libc.syscall(request_key, b"user", sys.argv[1].encode(), None, 0)
print("request", kid, ctypes.get_errno())
buf = ctypes.create_string_buffer(64)
print("read", libc.syscall(keyctl, 11, kid, buf, 64), buf.value)
for where in (-3, -4):
    made = libc.syscall(add_key, b"user", sys.argv[2].encode(), b"planted", 7, where)
    print("add", where, made, ctypes.get_errno())
"""


@pytest.fixture
def session_key() -> Iterator[tuple[str, int]]:
    """A secret in this process's session keyring (a new anonymous one), as a
    credential helper would keep it; revoked afterwards."""
    numbers = SYSCALLS.get(os.uname().machine)
    if numbers is None:
        pytest.skip("keyring system call numbers known for x86_64 and aarch64 only")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(numbers[2], KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        pytest.skip(f"no keyrings here (errno {ctypes.get_errno()})")
    name = f"rx-secret-{uuid.uuid4().hex}"
    kid = libc.syscall(
        numbers[0], b"user", name.encode(), b"TOPSECRET", 9, KEY_SPEC_SESSION_KEYRING
    )
    assert kid > 0, ctypes.get_errno()
    try:
        yield name, kid
    finally:
        libc.syscall(numbers[2], KEYCTL_REVOKE, kid)


def _revoke_planted(name: str) -> bool:
    """Whether a key ``name`` reached this process's session or user keyring (each
    found is revoked and unlinked)."""
    _add_key, _request_key, keyctl = SYSCALLS[os.uname().machine]
    libc = ctypes.CDLL(None, use_errno=True)
    found = False
    for keyring in (KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING):
        kid = libc.syscall(keyctl, KEYCTL_SEARCH, keyring, b"user", name.encode(), 0)
        if kid > 0:
            found = True
            libc.syscall(keyctl, KEYCTL_REVOKE, kid)
            libc.syscall(keyctl, KEYCTL_UNLINK, kid, keyring)
    return found


@pytest.mark.parametrize("path", ["kept", "fresh"])
async def test_commands_can_neither_read_nor_plant_kernel_keys(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], session_key: tuple[str, int], path: str
) -> None:
    """Before the seccomp filter refused the keyring calls, a sandboxed command read
    ``TOPSECRET`` from the session keyring it inherited and planted keys in the host's
    session and user keyrings, seen by the host and by every later command."""
    name, _ = session_key
    planted = f"rx-planted-{uuid.uuid4().hex}"
    ws = dirs[0]
    numbers = SYSCALLS[os.uname().machine]
    (ws / "probe.py").write_text(KEY_PROBE.format(numbers=numbers))
    ctx = kept_sandbox_ctx(keeper, *dirs) if path == "kept" else sandbox_ctx(*dirs)
    try:
        result = await run_bash(ctx, f"{PYTHON} -I probe.py {name} {planted}")
    finally:
        reached_host = _revoke_planted(planted)
    text = result.text
    assert "TOPSECRET" not in text, text
    assert "request -1 1" in text, text  # EPERM from the filter
    assert "add -3 -1 1" in text and "add -4 -1 1" in text, text
    assert not reached_host, "a sandboxed command planted a key on the host"


# -- what holds (each tried for real) ---------------------------------------------------


async def test_shell_state_and_descriptors_are_not_carried_to_the_next_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """Exported variables, umask, cwd, ulimit, traps and signal dispositions set by one
    command are its own; a command holds descriptors 0-2 only, as with a fresh one."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    show = "echo FOO=$FOO; umask; pwd -P; ulimit -n; trap -p; ls /proc/self/fd | wc -l"
    before = await run_bash(ctx, show)
    await run_bash(ctx, "export FOO=bar; umask 077; cd /; ulimit -n 50; trap '' TERM INT; echo set")
    after = await run_bash(ctx, show)
    fresh = await run_bash(sandbox_ctx(*dirs), show)
    assert after.text == before.text == fresh.text, (before.text, after.text, fresh.text)
    assert "FOO=\n" in after.text and "0022" in after.text
    assert "\n4\n" in after.text, after.text  # 0, 1, 2 and ls's own listing of /proc/self/fd
    assert keeper.built == 1


async def test_output_that_looks_like_protocol_frames_is_only_output(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """The zygote's frames travel on their own socket: a command printing a length
    prefix and a ``done`` or ``refused`` frame, NUL bytes and no final newline, on
    stdout and stderr, gets exactly that back, and the sandbox keeps serving."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    command = (
        'printf \'\\0\\0\\0\\x1b{"op":"done","status":0}\'; '
        "printf '\\0\\0\\0\\x10{\"op\":\"refused\"}' >&2; printf 'no-newline'; exit 3"
    )
    kept = await run_bash(ctx, command)
    fresh = await run_bash(sandbox_ctx(*dirs), command)
    assert kept.text == fresh.text, (kept.text, fresh.text)
    assert '{"op":"refused"}' in kept.text and "exit code 3" in kept.text
    again = await run_bash(ctx, "echo still")
    assert "still" in again.text and keeper.built == 1


async def test_large_output_arrives_as_through_a_fresh_bubblewrap(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    command = "seq 1 400000; echo end >&2"
    kept = await run_bash(kept_sandbox_ctx(keeper, *dirs), command)
    fresh = await run_bash(sandbox_ctx(*dirs), command)
    assert kept.text == fresh.text
    assert "end" in kept.text


async def test_a_command_that_closes_its_output_early_is_waited_for(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """The call returns once the command exits, not at the end of its output: what it
    does after closing stdout and stderr is done before the next command starts."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(ctx, "exec >&- 2>&-; sleep 1; echo late > late.txt")
    assert (dirs[0] / "late.txt").read_text() == "late\n"
    result = await run_bash(ctx, "cat late.txt; ps -e -o pid= | wc -l")
    assert "late" in result.text and keeper.built == 1


async def test_a_command_at_its_time_limit_leaves_nothing_and_the_next_is_confined(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """A command that ends about when its limit does (either way round), with a
    daemon behind it: nothing of it is there for the next command."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    for _ in range(3):
        await run_bash(ctx, "setsid sh -c 'sleep 300' & sleep 1", timeout_seconds=1)
        left = await run_bash(ctx, "ps -e -o comm= | grep -c sleep")
        assert left.text.startswith("0"), left.text


@pytest.mark.parametrize("gone", ["missing", "unusable"])
async def test_a_zygote_killed_while_bwrap_became_unusable_runs_nothing_unconfined(
    keeper: SandboxKeeper,
    dirs: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    gone: str,
) -> None:
    """Fail closed: the kept sandbox is gone and no bubblewrap can be built (none
    found, or one that cannot run): the command runs nowhere."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(ctx, "true")
    (kept,) = keeper.sandboxes
    os.kill(kept.zygote_pid, 9)
    path = None if gone == "missing" else str(dirs[1] / "no-such-bwrap")
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: path)
    marker = dirs[0] / "ran"
    result = await run_bash(ctx, f"touch {marker}; echo ran")
    assert not marker.exists(), result.text
    assert result.is_error, result.text


async def test_a_tmp_folder_the_sweep_cannot_empty_retires_the_sandbox(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """A folder left unreadable or unwritable (no capability lets the zygote override
    it, root included): the kept sandbox cannot be put back, so the next command gets
    a new one with an empty /tmp."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(
        ctx,
        "mkdir -p /tmp/locked /tmp/sealed && echo x > /tmp/locked/f && echo y > /tmp/sealed/g "
        "&& chmod 0 /tmp/locked && chmod 0500 /tmp/sealed",
    )
    result = await run_bash(ctx, "ls -A /tmp | grep -v pytest-of; echo listed")
    assert "locked" not in result.text and "sealed" not in result.text, result.text
    assert keeper.built == 2


async def test_a_fork_storm_left_behind_is_dead_before_the_next_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """Twenty loops forking detached sleepers as fast as they can, racing the sweep's
    ``kill(-1)``, and a pile of zombies whose parent never reaps them."""
    ctx = kept_sandbox_ctx(keeper, *dirs)
    storm = (
        "for i in $(seq 20); do setsid sh -c 'while :; do setsid sleep 300 & done' "
        ">/dev/null 2>&1 & done; "
        f"{PYTHON} -I -c 'import os\nfor _ in range(200):\n    os.fork() or os._exit(0)\n"
        "os.setsid(); import time; time.sleep(300)' & sleep 1; echo stormed"
    )
    result = await run_bash(ctx, storm)
    assert "stormed" in result.text, result.text
    left = await run_bash(ctx, "ps -e -o pid=,stat=,comm=")
    lines = [line for line in left.text.splitlines() if line.strip() and "[exit" not in line]
    assert len(lines) == 2, left.text  # the zygote and ps itself
    assert keeper.built == 1


# -- IPC objects do not outlive the command (--unshare-ipc, the zygote removes them) --

MQ_OPEN = (
    f"{PYTHON} -I -c \"import ctypes, sys; rt = ctypes.CDLL('librt.so.1', use_errno=True); "
    "fd = rt.mq_open(sys.argv[1].encode(), int(sys.argv[2], 8), 0o600, None); "
    "print('mq', 'found' if fd >= 0 else 'none', ctypes.get_errno())\""
)


async def test_a_posix_message_queue_does_not_outlive_its_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    name = f"/rx-{uuid.uuid4().hex}"
    ctx = kept_sandbox_ctx(keeper, *dirs)
    librt = ctypes.CDLL("librt.so.1", use_errno=True)
    try:
        made = await run_bash(ctx, f"{MQ_OPEN} {name} 102")  # O_CREAT | O_RDWR
        found = await run_bash(ctx, f"{MQ_OPEN} {name} 0")
        on_host = librt.mq_open(name.encode(), 0)
        if on_host >= 0:
            os.close(on_host)
        assert "mq found" in made.text, made.text  # creating one is allowed
        assert "mq none" in found.text, found.text
        assert on_host < 0, "a sandboxed command made a message queue on the host"
    finally:
        librt.mq_unlink(name.encode())


async def test_message_queues_the_zygote_cannot_list_retire_the_sandbox(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """A command that hides its queues from the zygote (``chmod 000 /dev/mqueue``) gets
    the sandbox retired: the next command has a new IPC namespace."""
    name = f"/rx-{uuid.uuid4().hex}"
    ctx = kept_sandbox_ctx(keeper, *dirs)
    made = await run_bash(ctx, f"{MQ_OPEN} {name} 102; chmod 000 /dev/mqueue; echo end")
    assert "mq found" in made.text and "end" in made.text, made.text
    found = await run_bash(ctx, f"{MQ_OPEN} {name} 0; stat -c %a /dev/mqueue")
    assert "mq none" in found.text and "1777" in found.text, found.text
    assert keeper.built == 2


@pytest.mark.parametrize(
    "attack",
    ["prlimit --pid 1 --nofile=4:4", "prlimit --pid 1 --as=20000000:20000000"],
    ids=["nofile-starved", "memory-starved"],
)
async def test_a_zygote_starved_of_resources_fails_closed(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], outside: Path, attack: str
) -> None:
    """Limits the zygote itself cannot live with: the call that set them may fail,
    the zygote's namespace dies with everything in it, and the next command runs in
    a new sandbox, confined."""
    _have("prlimit")
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(ctx, "true")
    (first,) = keeper.sandboxes
    await run_bash(ctx, f"setsid sleep 300 & {attack}; echo set")
    assert await all_gone([first.zygote_pid, first.bwrap.pid])
    marker = outside / "escaped"
    result = await run_bash(ctx, f"echo x 2>/dev/null > {marker}; ps -e -o comm= | grep -c sleep")
    assert result.text.startswith("0"), result.text
    assert not marker.exists()
    assert keeper.built == 2


# -- the host's kernel settings (found here; a fresh bubblewrap had it too) ------------

SYSCTL_PROBE = (
    f'{PYTHON} -I -c "import os\n'
    "for p in ('/proc/sys/kernel/core_pattern', '/proc/sys/kernel/hostname', "
    "'/proc/sys/vm/drop_caches', '/proc/sysrq-trigger'):\n"
    "    try:\n"
    "        os.close(os.open(p, os.O_WRONLY)); print('WRITABLE', p)\n"
    "    except OSError as exc:\n"
    "        print('refused', p, exc.errno)\n\""
)


@pytest.mark.parametrize("path", ["kept", "fresh"])
async def test_no_command_can_write_the_hosts_sysctls(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], path: str
) -> None:
    """bubblewrap covers /proc/sys only when the folder is writable, and it never is:
    run as root, a command without any capability opened every sysctl for writing
    (``kernel.hostname`` renamed the host; ``kernel.core_pattern`` set to a pipe to a
    workspace script runs it as root on the host at the next crash). Only opened
    here, never written."""
    ctx = kept_sandbox_ctx(keeper, *dirs) if path == "kept" else sandbox_ctx(*dirs)
    result = await run_bash(ctx, SYSCTL_PROBE)
    assert "WRITABLE" not in result.text, result.text
    assert "refused /proc/sys/kernel/hostname" in result.text, result.text


async def test_a_workspace_replaced_by_a_symlink_between_calls_is_bound_anew(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    """The kept sandbox bound the old folder; after the swap a command sees and writes
    what a fresh bubblewrap would (the new target), never the old folder."""
    ws = dirs[0]
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(ctx, "echo old > mark")
    old = tmp_path / "old-ws"
    other = tmp_path / "other"
    other.mkdir()
    (other / "mark").write_text("other\n")
    ws.rename(old)
    ws.symlink_to(other)
    command = "cat mark; echo written > out"
    kept = await run_bash(ctx, command)
    assert "other" in kept.text, kept.text
    assert not (old / "out").exists(), "a command wrote into the folder that was swapped out"
    assert (other / "out").read_text() == "written\n"
    fresh = await run_bash(sandbox_ctx(*dirs), command)
    assert fresh.text == kept.text
    assert keeper.built == 2


async def test_a_daemon_in_a_nested_user_namespace_does_not_survive(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """A process in a user namespace of its own (and, where the kernel allows it, a
    PID namespace of its own) is still in the zygote's namespace: killed by the sweep,
    gone on the host when the call returns."""
    _have("unshare")
    ctx = kept_sandbox_ctx(keeper, *dirs)
    mark = f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6}"
    started = await run_bash(
        ctx,
        f"unshare -U setsid sleep {mark} & unshare -U -p -f setsid sleep {mark} & "
        f"unshare -U sh -c 'setsid sleep {mark} &' ; sleep 0.5; "
        f"echo running=$(ps -eo args | grep -c '^sleep {mark}')",
    )
    assert "running=0" not in started.text, started.text
    left = await run_bash(ctx, f"ps -eo args | grep -c '^sleep {mark}'")
    assert left.text.startswith("0"), left.text
    on_host = [
        pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid) == f"sleep\0{mark}\0"
    ]
    assert not on_host, f"left running on the host: {on_host}"


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


async def test_with_the_network_on_commands_still_cannot_read_kernel_keys(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], session_key: tuple[str, int]
) -> None:
    name, _ = session_key
    planted = f"rx-planted-{uuid.uuid4().hex}"
    (dirs[0] / "probe.py").write_text(KEY_PROBE.format(numbers=SYSCALLS[os.uname().machine]))
    ctx = kept_sandbox_ctx(keeper, *dirs, network=True)
    try:
        result = await run_bash(ctx, f"{PYTHON} -I probe.py {name} {planted}")
    finally:
        _revoke_planted(planted)
    assert "TOPSECRET" not in result.text, result.text
