"""The seccomp filter every sandboxed command runs under: keyrings always, unix sockets
with the network off.

``--unshare-net`` gives a sandboxed command its own network namespace, but a
unix socket is reached through the filesystem: with the network off a command
could still ``connect()`` to ``/run/docker.sock``, the D-Bus session bus or a
socket inside the workspace and ask a host daemon to act for it. Masking
socket directories cannot cover a socket in the workspace, so with the network
off bubblewrap loads this classic-BPF program (``bwrap --seccomp FD``) and the
kernel refuses:

- ``socket(AF_UNIX, ...)`` with ``EPERM`` (other families are left to the
  unshared network namespace);
- ``socketpair(AF_UNIX, SOCK_DGRAM, ...)``: a datagram socket from a pair can
  still ``connect()`` or ``sendto()`` a path. Stream and seqpacket pairs are
  born connected and cannot be pointed anywhere else, so they keep working
  (pipes, asyncio, multiprocessing use them);
- ``io_uring_setup``: an io_uring ``IORING_OP_SOCKET`` creates sockets without
  the ``socket`` system call;
- ``add_key``, ``request_key`` and ``keyctl``, with ``EPERM``: the kernel keyrings
  are not namespaced by bubblewrap. A command could read the keys of the session
  keyring it inherits and, as root, of the host user's keyring (a secret stored
  there by a credential helper), write keys there for the host or a later command
  to find, and pass data between commands (Docker's default profile refuses them
  too);
- any system call made through another ABI (i386 ``socketcall`` on x86_64,
  x32, 32-bit ARM): the process is killed, since this program only knows the
  native numbers.

With ``[sandbox] network = true`` the socket rules are left out (the network
and host sockets are granted then), but the keyring calls are still refused and
foreign ABIs still killed: :func:`sandbox_filter` with ``network=True``.

The program is assembled by hand for x86_64 and aarch64; on any other
architecture :func:`sandbox_filter` raises :class:`SeccompUnsupported`
and the caller refuses to run rather than run unfiltered.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct
from dataclasses import dataclass

from reasonix_core.errors import ReasonixError

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

# Seccomp return values (linux/seccomp.h).
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

# Offsets into struct seccomp_data: nr (u32), arch (u32), ip (u64), args[6] (u64).
# Both supported architectures are little-endian, so an argument's low 32 bits
# (where an int such as the socket domain lives) come first.
_NR = 0
_ARCH = 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


AF_UNIX = 1
SOCK_DGRAM = 2
SOCK_TYPE_MASK = 0xF  # SOCK_NONBLOCK / SOCK_CLOEXEC live above it
X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True, slots=True)
class _Arch:
    audit_arch: int
    socket: int
    socketpair: int
    io_uring_setup: int
    #: add_key, request_key, keyctl (consecutive on both architectures)
    add_key: int
    has_x32: bool


_ARCHES: dict[str, _Arch] = {
    "x86_64": _Arch(0xC000003E, socket=41, socketpair=53, io_uring_setup=425, add_key=248, has_x32=True),
    "aarch64": _Arch(0xC00000B7, socket=198, socketpair=199, io_uring_setup=425, add_key=217, has_x32=False),
}
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


class SeccompUnsupported(ReasonixError):
    """No unix-socket filter can be built for this machine's architecture."""


def _machine() -> str:
    machine = platform.machine().lower()
    return _MACHINE_ALIASES.get(machine, machine)


@functools.cache
def _assemble(arch: _Arch, network: bool) -> bytes:
    """The filter as ``struct sock_filter`` records (what bwrap reads from its fd);
    built once per process, architecture and network setting, not for every
    sandboxed command. ``network``: only the rules that hold either way (keyrings,
    foreign ABIs), none about sockets."""
    deny = _RET_ERRNO | errno.EPERM
    # (opcode, k, jump-if-true label, jump-if-false label); None = next instruction.
    program: list[tuple[str | None, int, int, str | None, str | None]] = [
        (None, _LD_W_ABS, _ARCH, None, None),
        (None, _JEQ_K, arch.audit_arch, None, "kill"),
        (None, _LD_W_ABS, _NR, None, None),
    ]
    if arch.has_x32:
        program.append((None, _JGE_K, X32_SYSCALL_BIT, "kill", None))
    if not network:
        program += [
            (None, _JEQ_K, arch.socket, "socket", None),
            (None, _JEQ_K, arch.socketpair, "socketpair", None),
            (None, _JEQ_K, arch.io_uring_setup, "deny", None),
        ]
    program += [
        (None, _JEQ_K, arch.add_key, "deny", None),  # add_key
        (None, _JEQ_K, arch.add_key + 1, "deny", None),  # request_key
        (None, _JEQ_K, arch.add_key + 2, "deny", "allow"),  # keyctl
    ]
    if not network:
        program += [
            ("socket", _LD_W_ABS, _arg_low(0), None, None),
            (None, _JEQ_K, AF_UNIX, "deny", "allow"),
            ("socketpair", _LD_W_ABS, _arg_low(1), None, None),
            (None, _AND_K, SOCK_TYPE_MASK, None, None),
            (None, _JEQ_K, SOCK_DGRAM, "deny", "allow"),
        ]
    program += [
        ("allow", _RET_K, _RET_ALLOW, None, None),
        ("deny", _RET_K, deny, None, None),
        ("kill", _RET_K, _RET_KILL_PROCESS, None, None),
    ]
    where = {label: n for n, (label, *_rest) in enumerate(program) if label}

    def offset(n: int, label: str | None) -> int:
        if label is None:
            return 0
        jump = where[label] - n - 1
        if not 0 <= jump <= 255:
            raise AssertionError(f"classic BPF jumps go forward, at most 255 (to {label})")
        return jump

    out = bytearray()
    for n, (_label, code, k, true, false) in enumerate(program):
        out += struct.pack("<HBBI", code, offset(n, true), offset(n, false), k)
    return bytes(out)


def sandbox_filter(*, network: bool, machine: str | None = None) -> bytes:
    """The compiled filter for ``machine`` (default: this one): with ``network`` off
    it also refuses unix sockets; either way it refuses the keyring calls.

    Raises :class:`SeccompUnsupported` for an architecture it was not written for.
    """
    raw = (machine or _machine()).lower()
    name = _MACHINE_ALIASES.get(raw, raw)
    arch = _ARCHES.get(name)
    if arch is None:
        supported = ", ".join(sorted(_ARCHES))
        raise SeccompUnsupported(
            f"the seccomp filter sandboxed commands run under exists for {supported} only, "
            f"not {name or 'this unknown architecture'}"
        )
    return _assemble(arch, network)


def unix_socket_filter(machine: str | None = None) -> bytes:
    """The filter with the network off (unix sockets and keyrings refused)."""
    return sandbox_filter(network=False, machine=machine)


def filter_fd(program: bytes) -> int:
    """A readable descriptor holding ``program``, for ``bwrap --seccomp FD``.

    A pipe, so nothing is left on disk that a sandboxed command could swap
    between two runs; the program (a few hundred bytes) fits its buffer. The
    caller passes the descriptor to the child and closes its own copy.
    """
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    except OSError:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end
