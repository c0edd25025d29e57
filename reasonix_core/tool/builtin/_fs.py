"""Shared helpers of the file tools: session services, text decoding and
encoding, the publish sequence and diffs. The tree walker used by ls, glob and
grep lives in :mod:`._walk` (re-exported here).

Everything here is synchronous; the tools call it inline for small work or
through :func:`run_reader` / :func:`run_writer` in a worker thread.
"""

from __future__ import annotations

import codecs
import difflib
import errno
import os
import re
import secrets
import stat as stat_mod
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import anyio
import anyio.to_thread

from reasonix_core.tool.base import FOR_MODEL, SUMMARY, ToolContext, ToolResult
from reasonix_core.tool.builtin._walk import PSEUDO_FS as PSEUDO_FS
from reasonix_core.tool.builtin._walk import SKIP_DIRS as SKIP_DIRS
from reasonix_core.tool.builtin._walk import WALK_MAX_ENTRIES as WALK_MAX_ENTRIES
from reasonix_core.tool.builtin._walk import WALK_TIME_BUDGET as WALK_TIME_BUDGET
from reasonix_core.tool.builtin._walk import Entry as Entry
from reasonix_core.tool.builtin._walk import Walker as Walker
from reasonix_core.tool.builtin._walk import WalkFilter as WalkFilter
from reasonix_core.tool.builtin._walk import read_filter as read_filter
from reasonix_core.tool.fs_walk import Located, list_directory, open_final
from reasonix_core.tool.ledger import (
    FS_ALREADY_EXISTS,
    FS_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_STALE_VERSION,
    FS_SUMMARIES,
    FileLedger,
    FileVersion,
    version_of_fd,
)
from reasonix_core.tool.sandbox import PathDenied, SandboxPolicy

T = TypeVar("T")

BINARY_SNIFF = 8192
DIFF_MAX_CHARS = 4_000_000


# --------------------------------------------------------------------------- services


def services(ctx: ToolContext) -> tuple[SandboxPolicy, FileLedger]:
    """The session's sandbox policy and observation ledger.

    The ledger is created on first use and kept in ``ctx.ledger``; without a
    configured ``ctx.sandbox`` the default policy (workspace + session temp
    dir) is used, without being stored.
    """
    ledger = ctx.ledger
    if ledger is None:
        ledger = ctx.ledger = FileLedger()
    sandbox = ctx.sandbox
    if sandbox is None:
        sandbox = SandboxPolicy(workspace=ctx.workspace, temp_dir=ctx.temp_dir)
    return sandbox, ledger


def displayer(sandbox: SandboxPolicy) -> Callable[[Path | str], str]:
    """:meth:`SandboxPolicy.display` for many physical paths (absolute, normal),
    with the workspace resolved once rather than at every call."""
    root = str(sandbox.root)
    under = root.rstrip("/") + "/"

    def show(path: Path | str) -> str:
        text = os.fspath(path)
        if text == root:
            return "."
        return text[len(under) :] if text.startswith(under) else text

    return show


# --------------------------------------------------------------------------- failures


class ToolFailure(Exception):
    """An ordinary failure carrying the text the model sees."""

    def __init__(self, text: str, code: str | None = None, *, summary: str = "") -> None:
        super().__init__(text)
        self.text = text
        self.code = code
        # People's words when ``text`` tells the model what to do next (an edit that
        # did not apply); a code's own summary otherwise.
        self.summary = summary

    def result(self) -> ToolResult:
        meta: dict[str, Any] = {"code": self.code} if self.code else {}
        summary = self.summary or FS_SUMMARIES.get(self.code or "")
        if summary is not None:  # the code's text is the model's (what to do next)
            meta.update({SUMMARY: summary, FOR_MODEL: True})
        return ToolResult.error(self.text, **meta)


def fs_failure(code: str, display: str, verb: str = "editing") -> ToolFailure:
    """The standard FS_* failure for ``display`` (a workspace-relative path)."""
    if code == FS_NOT_OBSERVED:
        text = f"{code}: read {display} before {verb} it (any read_file window counts)"
    elif code == FS_STALE_VERSION:
        text = (
            f"{code}: {display} changed on disk since you last read or wrote it; "
            f"read it again before {verb} it"
        )
    elif code == FS_NOT_FOUND:
        text = f"{code}: {display} does not exist"
    elif code == FS_ALREADY_EXISTS:
        text = f"{code}: {display} already exists"
    else:
        text = f"{code}: {display}"
    return ToolFailure(text, code)


def os_failure(exc: OSError, display: str) -> ToolFailure:
    if isinstance(exc, PermissionError):
        return ToolFailure(f"permission denied: {display} ({exc.strerror or exc})")
    if isinstance(exc, FileNotFoundError):
        return fs_failure(FS_NOT_FOUND, display)
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENAMETOOLONG:
        reason = "file name too long"
    return ToolFailure(f"cannot access {display}: {reason}")


async def guarded(
    body: Callable[[], Awaitable[ToolResult]], sandbox: SandboxPolicy | None = None
) -> ToolResult:
    """Run a tool body, turning ordinary failures into error results."""
    try:
        return await body()
    except ToolFailure as failure:
        return failure.result()
    except PathDenied as exc:
        return ToolResult.error(str(exc), code="PATH_DENIED")
    except OSError as exc:
        return os_failure(exc, _error_name(exc, sandbox)).result()


def _error_name(exc: OSError, sandbox: SandboxPolicy | None) -> str:
    if not isinstance(exc.filename, str):
        return "the path"
    if sandbox is None or not os.path.isabs(exc.filename):
        return exc.filename
    try:
        return sandbox.display(Path(exc.filename))
    except (PathDenied, ValueError):
        return exc.filename


async def run_writer(fn: Callable[[], T]) -> T:
    """Run a publishing step in a worker thread; cancellation waits for it."""
    return await anyio.to_thread.run_sync(fn)


async def run_reader(fn: Callable[[threading.Event], T]) -> T:
    """Run a read-only walk in a worker thread; on cancellation the thread is
    told to stop and abandoned."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(fn, stop, abandon_on_cancel=True)
    finally:
        stop.set()


def suggest_missing(path: Path, sandbox: SandboxPolicy, hide: WalkFilter | None = None) -> str:
    """A hint for a missing path: similar names in its directory, never one a
    listing would leave out (forbid_read, or what ``hide`` denies)."""
    parent = path.parent
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return f" (its directory {sandbox.display(parent)} does not exist either)"
    except OSError:
        return ""
    try:
        if sandbox.opened_is_hidden(fd):  # swapped for a link to a hidden folder
            return ""
        names = [
            n
            for n in os.listdir(fd)
            if not sandbox.is_hidden(parent / n)
            and (hide is None or not hide.denied(str(parent / n), None))
        ]
    except OSError:
        return ""
    finally:
        os.close(fd)
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if not close:
        return ""
    shown = ", ".join(sandbox.display(parent / n) for n in close)
    return f"; did you mean {shown}?"


# --------------------------------------------------------------------------- text


class BinaryFile(Exception):
    """The bytes do not look like text."""


@dataclass(frozen=True, slots=True)
class TextFormat:
    """How a file's text is stored, so a rewrite keeps it byte-compatible."""

    encoding: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"

    @property
    def label(self) -> str:
        name = self.encoding + (" with BOM" if self.bom else "")
        return name + (", CRLF" if self.newline == "\r\n" else "")


_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def sniff_encoding(head: bytes) -> tuple[str, bytes] | None:
    """Encoding and BOM from the first bytes; None when no BOM / UTF-16 pattern."""
    first = head[:1]
    if first and first not in b"\xef\xfe\xff\x00" and b"\x00" not in head[:BINARY_SNIFF]:
        # The common case, decided at C speed: no BOM starts this way, and
        # BOM-less UTF-16 needs NUL bytes.
        return None
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc, bom
    # BOM-less UTF-16: mostly-ASCII text has a NUL in (nearly) every other byte.
    sample = head[: BINARY_SNIFF - BINARY_SNIFF % 2]
    if len(sample) % 2:
        sample = sample[:-1]
    if len(sample) >= 16:
        even, odd = sample[0::2], sample[1::2]
        half = len(sample) // 2
        for enc, zeros, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
            if zeros.count(0) >= half * 0.5 and other.count(0) == 0 and _plausible(sample, enc):
                return enc, b""
    return None


def _plausible(sample: bytes, encoding: str) -> bool:
    text = sample.decode(encoding, errors="replace")
    if text.count("\ufffd") > 1:  # one may be a pair cut at the sample's end
        return False
    return not any(ord(c) < 0x20 and c not in "\t\n\r\f" for c in text)


def looks_binary(head: bytes) -> bool:
    return sniff_encoding(head) is None and b"\x00" in head[:BINARY_SNIFF]


def detect_newline(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def decode(data: bytes) -> tuple[str, TextFormat]:
    """Decode file bytes; raises :class:`BinaryFile` for binary content."""
    text, encoding, bom = _decoded(data)
    return text, TextFormat(encoding, bom, detect_newline(text))


def decode_text(data: bytes) -> str:
    """The text of :func:`decode` alone (a search needs no format); raises
    :class:`BinaryFile` for binary content."""
    return _decoded(data)[0]


def _decoded(data: bytes) -> tuple[str, str, bytes]:
    sniffed = sniff_encoding(data[:BINARY_SNIFF])
    if sniffed is not None:
        enc, bom = sniffed
        body = data[len(bom) :]
        try:
            text = body.decode(enc, errors=_errors(enc))
        except UnicodeDecodeError:
            text = body.decode(enc, errors="replace")
        return text, enc, bom
    if b"\x00" in data[:BINARY_SNIFF]:
        raise BinaryFile
    for enc in ("utf-8", "gb18030"):
        try:
            return data.decode(enc), enc, b""
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1", b""


def _errors(encoding: str) -> str:
    # Lone surrogates in UTF-16/32 files survive a decode/encode round trip.
    return (
        "surrogatepass"
        if encoding.startswith("utf-16") or encoding.startswith("utf-32")
        else "strict"
    )


def encode(text: str, fmt: TextFormat, display: str) -> bytes:
    try:
        return fmt.bom + text.encode(fmt.encoding, errors=_errors(fmt.encoding))
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        if fmt.encoding == "utf-8":
            why = f"it contains {bad!r}, which is not valid Unicode text"
        else:
            why = f"{display} is stored as {fmt.encoding} and {bad!r} cannot be represented in it"
        raise ToolFailure(f"cannot encode the new text: {why}; nothing was written") from None


def split_lines(text: str) -> list[str]:
    """Lines without terminators (``\\n`` or ``\\r\\n``); no phantom last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def line_of(text: str, index: int) -> int:
    """1-based line number of character ``index``."""
    return text.count("\n", 0, index) + 1


# --------------------------------------------------------------------------- diffs


def unified_diff(old: str, new: str, display: str) -> str | None:
    if len(old) + len(new) > DIFF_MAX_CHARS:
        return None

    def lines(text: str) -> list[str]:
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    old_label = f"a/{display}" if old else "/dev/null"
    return "".join(
        difflib.unified_diff(lines(old), lines(new), fromfile=old_label, tofile=f"b/{display}")
    )


def diff_stats(diff: str | None) -> tuple[int, int]:
    if not diff:
        return 0, 0
    plus = minus = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


# --------------------------------------------------------------------------- publishing


@dataclass(frozen=True, slots=True)
class Loaded:
    """A file read under its lock, with the version it had."""

    data: bytes
    version: FileVersion
    mode: int


def open_existing(located: Located, display: str) -> int | None:
    """Open ``located``'s final name for reading through its directory
    descriptor, never following a symlink; None if it does not exist.

    A symlink there now was put in after the walk resolved the path (the walk
    follows links itself): the call fails rather than follow it.
    """
    try:
        return open_final(located)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolFailure(
                f"{display} was replaced by a symlink while it was being opened; "
                "nothing was changed (try again)"
            ) from None
        raise


def load_current(located: Located, display: str) -> Loaded | None:
    """Read the current bytes of a regular file; None if it does not exist."""
    fd = open_existing(located, display)
    if fd is None:
        return None
    with open_regular(fd, display, "is a directory, not a file; use ls to list it") as fh:
        fst = os.fstat(fh.fileno())
        data = fh.read()
    return Loaded(data, FileVersion.of_bytes(data, fst), stat_mod.S_IMODE(fst.st_mode))


def open_regular(fd: int, display: str, directory_text: str) -> BinaryIO:
    """A binary file object over ``fd`` if it is a regular file; closes ``fd``
    and fails with ``{display} {directory_text}`` for a directory, or the
    not-a-regular-file message for a device, FIFO or socket."""
    try:
        mode = os.fstat(fd).st_mode
        if stat_mod.S_ISDIR(mode):
            raise ToolFailure(f"{display} {directory_text}")
        if not stat_mod.S_ISREG(mode):
            raise ToolFailure(f"{display} is not a regular file (device, FIFO or socket)")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def check_unchanged(located: Located, loaded: Loaded, display: str, verb: str) -> None:
    """The pre-publish comparison: the file must still hold the loaded content."""
    fd = open_existing(located, display)
    if fd is None:
        raise fs_failure(FS_NOT_FOUND, display) from None
    try:
        current = version_of_fd(fd)
    finally:
        os.close(fd)
    if current is None:
        raise fs_failure(FS_NOT_FOUND, display) from None
    if not current.same_content(loaded.version):
        raise fs_failure(FS_STALE_VERSION, display, verb)


def same_location(located: Located, checked: Path, display: str) -> None:
    """Refuse to go on when the descriptor walk reached another path than the
    check before taking the lock: a directory or link on the way was swapped."""
    if located.path != checked:
        raise ToolFailure(
            f"{display} changed while it was being opened (a directory or symlink on its "
            "path was replaced); nothing was changed - try again"
        )


# A temp file is named after its writer's pid so a later write can tell a
# leftover of a killed run (pid gone) from a write in flight.
_TEMP_NAME = re.compile(r"\.rx-(\d{1,10})-[0-9a-f]+\.tmp")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # never signal a process group; keep what cannot be judged
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def sweep_stale_temps(dir_fd: int) -> int:
    """Remove ``.rx-<pid>-*.tmp`` files in ``dir_fd`` whose writer is gone.

    A run killed mid-write (SIGKILL) cannot clean up; the next write in the
    same directory does. Returns how many were removed.
    """
    try:
        names = list_directory(dir_fd)
    except OSError:
        return 0
    removed = 0
    me = os.getpid()
    for name in names:
        m = _TEMP_NAME.fullmatch(name)
        if m is None or int(m.group(1)) == me or _pid_alive(int(m.group(1))):
            continue
        try:
            os.unlink(name, dir_fd=dir_fd)
        except OSError:
            continue
        removed += 1
    return removed


def _temp_in(located: Located) -> tuple[str, int]:
    """Create an empty temp file beside ``located`` inside its open directory."""
    sweep_stale_temps(located.dir_fd)
    for _ in range(16):
        tmp = f".rx-{os.getpid()}-{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o666,
                dir_fd=located.dir_fd,
            )
        except FileExistsError:
            continue
        return tmp, fd
    raise ToolFailure(f"could not create a temporary file next to {located.path}")


def _write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def publish_replace(located: Located, data: bytes, mode: int) -> None:
    """Atomically replace the file: a temp file in the same (open) directory,
    then ``os.replace`` between the two names in that directory."""
    tmp, fd = _temp_in(located)
    try:
        os.fchmod(fd, mode)
        _write_all(fd, data)
        os.replace(tmp, located.name, src_dir_fd=located.dir_fd, dst_dir_fd=located.dir_fd)
    except OSError as exc:
        _unlink_quietly(tmp, located.dir_fd)
        raise _naming(exc, located) from None
    except BaseException:
        _unlink_quietly(tmp, located.dir_fd)
        raise


def _naming(exc: OSError, located: Located) -> OSError:
    """``exc`` naming the file being written (descriptor calls name only the temp)."""
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(located.path))


def publish_new(located: Located, data: bytes, display: str) -> None:
    """Create the file with ``data`` without ever clobbering an existing one."""
    tmp, fd = _temp_in(located)
    pfd = located.dir_fd
    try:
        _write_all(fd, data)
        try:
            os.link(tmp, located.name, src_dir_fd=pfd, dst_dir_fd=pfd, follow_symlinks=False)
        except FileExistsError:
            raise ToolFailure(
                f"{FS_ALREADY_EXISTS}: {display} was created by someone else while writing; "
                "read it and try again",
                FS_ALREADY_EXISTS,
            ) from None
        except OSError:
            # No hard links here (some FUSE/network filesystems): exclusive create.
            try:
                out = os.open(
                    located.name,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o666,
                    dir_fd=pfd,
                )
            except FileExistsError:
                raise ToolFailure(
                    f"{FS_ALREADY_EXISTS}: {display} was created by someone else while "
                    "writing; read it and try again",
                    FS_ALREADY_EXISTS,
                ) from None
            _write_all(out, data)
    except ToolFailure:
        raise
    except OSError as exc:
        raise _naming(exc, located) from None
    finally:
        _unlink_quietly(tmp, pfd)


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def ensure_writable(located: Located, display: str) -> None:
    if not os.access(located.name, os.W_OK, dir_fd=located.dir_fd):
        raise ToolFailure(
            f"permission denied: {display} is read-only; it was not changed "
            "(change its permissions first if it should be editable)"
        )


def record_write(ledger: FileLedger, located: Located, data: bytes) -> None:
    """Refresh the observation after a publish, from the bytes written."""
    try:
        st = os.stat(located.name, dir_fd=located.dir_fd, follow_symlinks=False)
    except OSError:
        ledger.forget(located.path)
        return
    ledger.observe(located.path, FileVersion.of_bytes(data, st))
