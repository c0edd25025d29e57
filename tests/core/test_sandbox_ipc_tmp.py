"""IPC objects, kernel keyrings with the network on and tmpfs sizes, attacked on both
sandbox paths (a fresh bubblewrap per command and the session's kept sandbox).

- a POSIX message queue or a SysV shared memory segment, semaphore set or message
  queue a command makes is neither there for the next command nor seen by a host
  process of the same uid (``--unshare-ipc``; the kept sandbox's zygote removes every
  one after each command);
- with ``[sandbox] network = true`` the keyring system calls are still refused;
- /tmp and /dev/shm have a size cap (``[sandbox] tmp_size``): writing past it fails
  with ENOSPC inside, /dev itself is read-only, and the next command can write again.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import uuid
from collections.abc import AsyncIterator
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
IPC_CREAT = 0o1000
IPC_RMID = 0
LIBC = ctypes.CDLL(None, use_errno=True)


@pytest.fixture(params=["kept", "fresh"], autouse=True)
async def sandbox_path(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[str]:
    """Each test on both paths, as in test_sandbox_per_command.py."""
    if request.param == "fresh":
        yield "fresh"
        return
    keeper = SandboxKeeper()
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "sandbox_ctx", functools.partial(kept_sandbox_ctx, keeper))
    pids: list[int] = []
    try:
        yield "kept"
        pids = kept_pids(keeper)
    finally:
        await keeper.aclose()
    assert keeper.disabled is None and keeper.built >= 1, "the kept sandbox was not used"
    assert await all_gone(pids), f"left running after the keeper closed: {pids}"


# -- IPC ----------------------------------------------------------------------------

MQ_PROBE = (
    "import ctypes, sys\n"
    "rt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
    "fd = rt.mq_open(sys.argv[1].encode(), int(sys.argv[2], 8), 0o600, None)\n"
    "print('mq', 'found' if fd >= 0 else 'none', ctypes.get_errno())\n"
)

#: get (flags from argv) a SysV object of a kind by key, print whether it exists.
SYSV_PROBE = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "kind, key, flags = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 8)\n"
    "if kind == 'shm':\n"
    "    got = libc.shmget(key, 4096, flags)\n"
    "elif kind == 'sem':\n"
    "    got = libc.semget(key, 1, flags)\n"
    "else:\n"
    "    got = libc.msgget(key, flags)\n"
    "print(kind, 'found' if got >= 0 else 'none', ctypes.get_errno())\n"
)


def _host_sysv(kind: str, key: int) -> int:
    """The id of the host's SysV object of ``kind`` under ``key``, or -1."""
    if kind == "shm":
        return LIBC.shmget(key, 0, 0)
    if kind == "sem":
        return LIBC.semget(key, 0, 0)
    return LIBC.msgget(key, 0)


def _remove_host_sysv(kind: str, ident: int) -> None:
    if kind == "shm":
        LIBC.shmctl(ident, IPC_RMID, None)
    elif kind == "sem":
        LIBC.semctl(ident, 0, IPC_RMID)
    else:
        LIBC.msgctl(ident, IPC_RMID, None)


async def test_a_posix_message_queue_neither_outlives_its_command_nor_reaches_the_host(
    dirs: tuple[Path, Path],
) -> None:
    ws, tmp = dirs
    (ws / "mq.py").write_text(MQ_PROBE)
    name = f"/rx-{uuid.uuid4().hex}"
    ctx = sandbox_ctx(ws, tmp)
    librt = ctypes.CDLL("librt.so.1", use_errno=True)
    try:
        made = await run_bash(ctx, f"{PYTHON} -I mq.py {name} 102")  # O_CREAT | O_RDWR
        on_host = librt.mq_open(name.encode(), 0)
        if on_host >= 0:
            os.close(on_host)
        found = await run_bash(ctx, f"{PYTHON} -I mq.py {name} 0")
        assert "mq found" in made.text, made.text  # making one is allowed
        assert on_host < 0, "a sandboxed command made a message queue on the host"
        assert "mq none" in found.text, found.text
    finally:
        librt.mq_unlink(name.encode())


@pytest.mark.parametrize("kind", ["shm", "sem", "msg"])
async def test_a_sysv_ipc_object_neither_outlives_its_command_nor_reaches_the_host(
    dirs: tuple[Path, Path], kind: str
) -> None:
    ws, tmp = dirs
    (ws / "sysv.py").write_text(SYSV_PROBE)
    key = int.from_bytes(os.urandom(3)) + 0x5E000000
    ctx = sandbox_ctx(ws, tmp)
    try:
        made = await run_bash(ctx, f"{PYTHON} -I sysv.py {kind} {key} 1600")  # IPC_CREAT | 0600
        on_host = _host_sysv(kind, key)
        found = await run_bash(ctx, f"{PYTHON} -I sysv.py {kind} {key} 0")
        assert f"{kind} found" in made.text, made.text
        assert on_host < 0, f"a sandboxed command made a SysV {kind} object on the host"
        assert f"{kind} none" in found.text, found.text
    finally:
        ident = _host_sysv(kind, key)
        if ident >= 0:
            _remove_host_sysv(kind, ident)


# -- keyrings with the network on -------------------------------------------------------

KEYCTL = {"x86_64": 250, "aarch64": 219}
KEY_PROBE = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create)
    "got = libc.syscall(int(sys.argv[1]), 0, -3, 1)\n"
    "print('keyctl', got, 'errno', ctypes.get_errno())\n"
)


async def test_with_the_network_on_the_keyring_calls_are_refused(dirs: tuple[Path, Path]) -> None:
    number = KEYCTL.get(os.uname().machine)
    if number is None:
        pytest.skip("keyctl number unknown for this machine")
    ws, tmp = dirs
    (ws / "key.py").write_text(KEY_PROBE)
    ctx = sandbox_ctx(ws, tmp, network=True)
    result = await run_bash(ctx, f"{PYTHON} -I key.py {number}")
    assert "keyctl -1 errno 1" in result.text, result.text  # EPERM
    # and the network is still there: an inet socket can be made
    inet = await run_bash(
        ctx, f"{PYTHON} -I -c 'import socket; socket.socket(); print(\"inet ok\")'"
    )
    assert "inet ok" in inet.text, inet.text


# -- tmpfs sizes ------------------------------------------------------------------------

CAP = 8 * 1024 * 1024


@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
async def test_writing_past_the_tmpfs_cap_fails_and_the_next_command_can_write(
    dirs: tuple[Path, Path], folder: str
) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp, tmp_size=CAP)
    filled = await run_bash(
        ctx, f"head -c {2 * CAP} /dev/zero > {folder}/fill; echo rc=$?; ls -l {folder}/fill"
    )
    assert "No space left on device" in filled.text, filled.text
    assert "rc=1" in filled.text, filled.text
    # Nothing of it on the host, and the next command has its room back.
    assert not Path(folder, "fill").exists() or Path(folder, "fill").stat().st_size != CAP
    again = await run_bash(
        ctx, f"ls -A {folder}; head -c {CAP // 2} /dev/zero > {folder}/half; echo rc=$?"
    )
    assert "fill" not in again.text and "rc=0" in again.text, again.text


async def test_dev_is_read_only(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    result = await run_bash(
        ctx, "echo x > /dev/planted; echo rc=$?; echo ok > /dev/null; echo null=$?"
    )
    assert "rc=1" in result.text and "null=0" in result.text, result.text
