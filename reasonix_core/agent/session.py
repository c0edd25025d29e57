"""Append-only JSONL session transcripts under ``<home>/sessions/``.

One file per session, one record per line, each written straight to the file
(no buffer) so a killed process loses at most the record in flight. A torn last
line is ignored on load and moved aside to ``<file>.torn`` before the next append
(so no record ever follows it); a record that does not fit on the disk is cut off
at once (:class:`DiskFull`). A record nested deeper than any Reasonix writes is
skipped with a warning naming its line. The transcript is otherwise never
rewritten.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reasonix_core.agent.compaction_meta import COMPACTION_KEY
from reasonix_core.errors import DiskFull, SessionError
from reasonix_core.fsutil import PRIVATE_FILE, atomic_write_text, open_private, private_dir
from reasonix_core.home import session_dir as session_dir
from reasonix_core.home import workspace_key as workspace_key
from reasonix_core.jsontext import JSONTooDeep, dumps_utf8, loads_bounded
from reasonix_core.messages import HOST_TURN, PASTED, Message
from reasonix_core.pasted import collapse, spans_from_meta

log = logging.getLogger(__name__)
FORMAT_VERSION = 1


# Bounded: a 5,000-character id passed the pattern and failed the file system's
# name limit with a traceback.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def new_session_id(now: datetime) -> str:
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


@dataclass
class SessionHeader:
    """The first line of a session file: what the session was started with."""

    id: str
    workspace: str
    created: str
    model: str
    effort: str
    system_prompt: str
    tools_fingerprint: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "workspace": self.workspace,
            "created": self.created,
            "model": self.model,
            "effort": self.effort,
            "system_prompt": self.system_prompt,
            "tools_fingerprint": self.tools_fingerprint,
            **({"extra": self.extra} if self.extra else {}),
        }


@dataclass
class SessionSummary:
    """One saved session of a workspace, as listed."""

    id: str
    path: Path
    modified: float
    title: str
    messages: int
    # What the user sent: user messages, less the host's (goal rounds) and the
    # compaction summaries (a turn's tool steps are not prompts).
    prompts: int = 0


class SessionStore:
    """The writer for one session file."""

    def __init__(self, path: Path, header: SessionHeader) -> None:
        self.path = path
        self.header = header
        self._fd: int | None = None

    @property
    def id(self) -> str:
        return self.header.id

    @classmethod
    def create(cls, sessions_dir: Path, workspace: Path, header: SessionHeader) -> SessionStore:
        folder = sessions_dir / workspace_key(workspace)
        path = folder / f"{header.id}.jsonl"
        try:
            private_dir(folder)
            if path.exists():
                raise SessionError(f"session file already exists: {path}")
            store = cls(path, header)
            open_private(path).close()  # 0600 before its first record (fsutil)
            store._write(header.to_record())
        except DiskFull:
            raise
        except OSError as exc:
            if DiskFull.caused(exc):
                raise DiskFull(path, exc.strerror) from None
            raise SessionError(f"cannot create the session file {path}: {exc.strerror}") from None
        return store

    def _open(self) -> int:
        if self._fd is None:
            set_torn_tail_aside(self.path)
            self._fd = os.open(self.path, _APPEND_FLAGS)
        return self._fd

    def _write(self, record: dict[str, Any]) -> None:
        # A lone surrogate from the model must not make the record unwritable.
        line = dumps_utf8(record, separators=(",", ":")) + "\n"
        _append_whole(self._open(), line.encode("utf-8"), self.path)

    def append(self, message: Message) -> None:
        self._write({"type": "message", "message": message.to_record()})

    def append_event(self, kind: str, **data: object) -> None:
        self._write({"type": kind, **data})

    @property
    def checkpoint_path(self) -> Path:
        return checkpoint_path(self.path)

    def write_checkpoint(self, data: dict[str, Any]) -> None:
        """Replace the context checkpoint sidecar atomically (the transcript is untouched)."""
        write_checkpoint(self.path, data)

    def read_checkpoint(self) -> dict[str, Any] | None:
        return read_checkpoint(self.path)

    def close(self) -> None:
        # Nothing is buffered: closing never writes, so it cannot fail for want of space.
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class MemorySessionStore(SessionStore):
    """A session kept in memory only: nothing is written, no checkpoint is read.

    For a session that is no one's record: an ephemeral subagent (its spec says
    so) and the headless parent ``reasonix subagent run|try`` builds only to lend
    its child the session's services (the child's transcript is the record).
    ``path`` names a file in the session's temp dir, so anything derived from it
    (the cache ledger's request records) goes away with the session."""

    def _write(self, record: dict[str, Any]) -> None:
        pass

    def write_checkpoint(self, data: dict[str, Any]) -> None:
        pass

    def read_checkpoint(self) -> dict[str, Any] | None:
        return None


def checkpoint_path(session_path: Path) -> Path:
    """``<id>.context.json`` beside ``<id>.jsonl``: the latest context checkpoint.

    Compaction installs a projection here; the JSONL transcript is never
    rewritten. Only the latest checkpoint is kept (a restart restores it).
    """
    return session_path.with_name(session_path.stem + ".context.json")


def write_checkpoint(session_path: Path, data: dict[str, Any]) -> None:
    path = checkpoint_path(session_path)
    try:
        atomic_write_text(path, dumps_utf8(data, separators=(",", ":")), mode=PRIVATE_FILE)
    except OSError as exc:
        if DiskFull.caused(exc):
            raise DiskFull(path, exc.strerror) from None
        raise SessionError(f"cannot write context checkpoint {path}: {exc}") from None


def read_checkpoint(session_path: Path) -> dict[str, Any] | None:
    """The checkpoint sidecar, or None when absent or unreadable (then ignored)."""
    path = checkpoint_path(session_path)
    try:
        data = loads_bounded(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable context checkpoint %s: %s", path, exc)
        return None
    return data if isinstance(data, dict) else None


def requests_path(session_path: Path) -> Path:
    """``<id>.requests.ndjson`` beside ``<id>.jsonl``: one JSON record per line and
    billed request (tokens, cost, the prompt prefix's digest, a cache break),
    append-only; ``reasonix cache`` reads it (``agent/cache_ledger.py`` writes it).
    Not ``.jsonl``: whatever lists a folder's transcripts by that suffix skips it."""
    return session_path.with_name(session_path.stem + ".requests.ndjson")


def append_request_record(session_path: Path, record: dict[str, Any]) -> None:
    path = requests_path(session_path)
    line = dumps_utf8(record, separators=(",", ":")) + "\n"
    try:
        set_torn_tail_aside(path)
        fd = os.open(path, _APPEND_FLAGS | os.O_CREAT, PRIVATE_FILE)
        try:
            _append_whole(fd, line.encode("utf-8"), path)
        finally:
            os.close(fd)
    except DiskFull:
        raise
    except OSError as exc:
        if DiskFull.caused(exc):
            raise DiskFull(path, exc.strerror) from None
        raise SessionError(f"cannot write the request records {path}: {exc}") from None


def read_request_records(session_path: Path) -> list[dict[str, Any]]:
    """The request records of a session; lines that are not JSON objects (a torn
    last line, a hand edit) are skipped with a warning, a missing file is empty."""
    path = requests_path(session_path)
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SessionError(f"cannot read the request records {path}: {exc}") from None
    out: list[dict[str, Any]] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads_bounded(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            log.warning("%s:%d: skipping a bad request record", path, number)
            continue
        out.append(record)
    return out


_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


def _append_whole(fd: int, data: bytes, path: Path) -> None:
    """Append ``data`` to the file open on ``fd`` whole or not at all: a write cut
    short (the disk filled up) is cut off again, so the file still ends on a whole
    record and a later append does not follow a torn one. :class:`DiskFull` when
    the disk is full; other write errors as they are."""
    end = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        try:
            os.ftruncate(fd, end)  # never needs space
        except OSError:
            log.warning("cannot cut the unfinished record off %s", path)
        if DiskFull.caused(exc):
            raise DiskFull(path, exc.strerror) from None
        raise


def torn_path(path: Path) -> Path:
    """``<file>.torn`` beside an append-only record file: the torn last lines
    set aside before an append (not ``.jsonl``: listings skip it)."""
    return path.with_name(path.name + ".torn")


#: How far back :func:`_last_line_start` reads at a time.
_CHUNK = 1 << 16


def _last_line_start(fh: Any, size: int) -> int:
    """Offset of the last line of the open binary file (its own trailing
    newline, if any, belongs to it)."""
    end = size - 1  # the last byte is the line's own newline or part of it
    while end > 0:
        start = max(0, end - _CHUNK)
        fh.seek(start)
        found = fh.read(end - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def set_torn_tail_aside(path: Path) -> None:
    """Before appending: move a torn last line (a record that was in flight at a
    crash, with or without its newline) to :func:`torn_path`, so nothing
    appended follows it and its bytes are kept. A complete record that only
    lacks its newline gets one. Readers ignore a torn last line, so what they
    read is unchanged."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as fh:
        start = _last_line_start(fh, size)
        fh.seek(start)
        tail = fh.read()
        terminated = tail.endswith(b"\n")
        try:
            record = loads_bounded(tail.decode("utf-8", "replace"))
        except JSONTooDeep:
            return  # whole, only too deep: readers skip it, appending after it is safe
        except ValueError:
            record = None
        if isinstance(record, dict):
            if not terminated:
                fh.seek(0, os.SEEK_END)
                fh.write(b"\n")
            return
        sidecar = torn_path(path)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        with os.fdopen(os.open(sidecar, flags, PRIVATE_FILE), "ab") as aside:  # private (home)
            aside.write(tail if terminated else tail + b"\n")
            aside.flush()
            os.fsync(aside.fileno())
        fh.truncate(start)
    log.warning(
        "%s: moved a torn last line (%d bytes) to %s before appending", path, len(tail), sidecar
    )


@dataclass
class LoadedSession:
    """A session read back to be continued."""

    store: SessionStore
    header: SessionHeader
    messages: list[Message]


def iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for every record of a session file, in order;
    a torn last line is skipped."""
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SessionError(f"cannot read session {path}: {exc}") from None
    lines = raw.split("\n")
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads_bounded(line)
        except JSONTooDeep as exc:
            _warn_once(path, number, f"skipping a record {exc}; the rest of the session is read")
            continue
        except json.JSONDecodeError:
            if number == last:
                log.warning("ignoring torn last line of %s", path)
                continue
            raise SessionError(f"{path}:{number}: corrupt session record") from None
        if isinstance(record, dict):
            yield number, record


_warned: set[tuple[Path, int]] = set()


def _warn_once(path: Path, number: int, what: str) -> None:
    # A session is read more than once per command (listed, then opened).
    if (path, number) not in _warned:
        _warned.add((path, number))
        log.warning("%s:%d: %s", path, number, what)


#: A chat rewind: the conversation continues from the first ``keep`` messages
#: (the records after it are appended as usual; nothing is rewritten).
BRANCH = "branch"


def read_session(path: Path) -> tuple[SessionHeader, list[Message]]:
    header: SessionHeader | None = None
    messages: list[Message] = []
    for number, record in iter_records(path):
        kind = record.get("type")
        if kind == "session":
            header = SessionHeader(
                id=record["id"],
                workspace=record.get("workspace", ""),
                created=record.get("created", ""),
                model=record.get("model", ""),
                effort=record.get("effort", "auto"),
                system_prompt=record.get("system_prompt", ""),
                tools_fingerprint=record.get("tools_fingerprint", ""),
                extra=record.get("extra") or {},
            )
        elif kind == "message":
            try:
                messages.append(Message.from_record(record["message"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise SessionError(f"{path}:{number}: bad message record ({exc})") from None
        elif kind == BRANCH:
            keep = record.get("keep")
            if not isinstance(keep, int) or not 0 <= keep <= len(messages):
                raise SessionError(f"{path}:{number}: bad branch record")
            del messages[keep:]
    if header is None:
        raise SessionError(f"{path} is not a Reasonix session (no header record)")
    return header, messages


def _shown(message: Message) -> str:
    """A user message as the user saw it typed: large pastes as their chips."""
    spans = spans_from_meta(message.meta.get(PASTED))
    return collapse(message.content or "", spans) if spans else message.content or ""


def _is_prompt(message: Message) -> bool:
    return (
        message.role == "user"
        and not message.meta.get(HOST_TURN)
        and message.meta.get(COMPACTION_KEY) is None
    )


def list_sessions(sessions_root: Path, workspace: Path) -> list[SessionSummary]:
    """Sessions of this workspace, newest first (by last write)."""
    folder = session_dir(sessions_root, workspace)
    if not folder.is_dir():
        return []
    out: list[SessionSummary] = []
    for path in folder.glob("*.jsonl"):
        try:
            header, messages = read_session(path)
        except SessionError as exc:
            log.warning("skipping unreadable session: %s", exc)
            continue
        title = next(
            (
                _shown(m).split("<workspace-context>")[0].strip().splitlines()[0][:80]
                for m in messages
                if m.role == "user" and (m.content or "").strip()
            ),
            "(empty)",
        )
        out.append(
            SessionSummary(
                id=header.id,
                path=path,
                modified=path.stat().st_mtime,
                title=title,
                messages=len(messages),
                prompts=sum(1 for m in messages if _is_prompt(m)),
            )
        )
    out.sort(key=lambda s: (s.modified, s.id), reverse=True)
    return out


def newest_session_id(sessions_root: Path, workspace: Path) -> str | None:
    """The id ``-c`` (:func:`open_session` with no id) would open, by the order of
    :func:`list_sessions` (last write, then id) but from the files' times alone: no
    session is read."""
    folder = session_dir(sessions_root, workspace)
    ranked: list[tuple[float, str]] = []
    for path in folder.glob("*.jsonl") if folder.is_dir() else ():
        try:
            ranked.append((path.stat().st_mtime, path.stem))
        except OSError:
            continue
    return max(ranked)[1] if ranked else None


def session_path(sessions_root: Path, workspace: Path, session_id: str) -> Path:
    """Where session ``session_id`` of ``workspace`` lives under ``sessions_root``;
    SessionError for anything that is not a session id (a name, never a path)."""
    if not _SESSION_ID.fullmatch(session_id):
        raise SessionError(f"{session_id!r} is not a session id")
    return session_dir(sessions_root, workspace) / f"{session_id}.jsonl"


def open_session(sessions_root: Path, workspace: Path, session_id: str | None) -> LoadedSession:
    """Open a session for continuing: ``session_id`` None means the newest one."""
    if session_id is None:
        sessions = list_sessions(sessions_root, workspace)
        if not sessions:
            raise SessionError(f"no previous session for workspace {workspace}")
        path = sessions[0].path
    else:
        if not _SESSION_ID.fullmatch(session_id):
            # A name, never a path: "../x" must not open (and append to) a file elsewhere.
            raise SessionError(f"{session_id!r} is not a session id")
        path = session_dir(sessions_root, workspace) / f"{session_id}.jsonl"
        if not path.exists():
            matches = list(sessions_root.glob(f"*/{session_id}.jsonl"))
            if not matches:
                raise SessionError(f"no session with id {session_id!r}")
            path = matches[0]
    header, messages = read_session(path)
    return LoadedSession(store=SessionStore(path, header), header=header, messages=messages)


def forked_header(header: SessionHeader, now: datetime, **extra: object) -> SessionHeader:
    """A fork's header: a new id and time, the original's model, prompt and tools
    (so the fork's requests extend the original's), ``forked_from`` it; ``extra``:
    more header facts."""
    return SessionHeader(
        id=new_session_id(now),
        workspace=header.workspace,
        created=now.isoformat(),
        model=header.model,
        effort=header.effort,
        system_prompt=header.system_prompt,
        tools_fingerprint=header.tools_fingerprint,
        extra={**header.extra, "forked_from": header.id, **extra},
    )


def fork_session(
    loaded: LoadedSession, sessions_dir: Path, workspace: Path, now: datetime, **extra: Any
) -> SessionStore:
    """A new session holding a copy of ``loaded`` whole (``/fork``, ``--fork-session``,
    a subagent's ``fork_from``); the original is only read. Its conversation, its
    compaction checkpoint and its request records are copied, so the fork's first
    request extends the original's last byte for byte (the cache hits) and the cache
    ledger knows the prefix it extends. ``extra``: more header facts."""
    store = SessionStore.create(sessions_dir, workspace, forked_header(loaded.header, now, **extra))
    for message in loaded.messages:
        store.append(message)
    source = loaded.store.path
    checkpoint = read_checkpoint(source)
    if checkpoint is not None:
        write_checkpoint(store.path, checkpoint)
    for record in read_request_records(source):
        append_request_record(store.path, record)
    return store
