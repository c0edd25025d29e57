"""BM25 search over this workspace's session transcripts (and their archives).

Each ``{"type":"message"}`` record of every ``<sessions>/<workspace-key>/*.jsonl``
transcript (plus ``archive/``, ``archives/`` and ``.archive/`` beneath it) is
one document. What is indexed per role:

- ``user``: the text the user typed; the ``<workspace-context>`` and
  ``<memory-recall>`` blocks the agent appended are stripped.
- ``assistant``: the answer text plus ``[tool call] name arguments`` (arguments
  cut to 300 chars); chain-of-thought is not indexed.
- ``tool``: the bounded, provider-visible result text - never the local raw
  copy (``meta.full_content``). Tool messages are only searched when ``kind``
  is ``tool`` or ``all``: raw tool output is excluded by default.

Transcripts are parsed incrementally (they are append-only): a search after a
few new messages reads only the new lines of the live transcript; a replaced or
truncated file is parsed again.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from reasonix_core.goal_block import without_goal_block
from reasonix_core.memory.bm25 import BM25, tokenize
from reasonix_core.messages import HOST_TURN

__all__ = [
    "DEFAULT_KINDS",
    "KINDS",
    "HistoryEntry",
    "HistoryHit",
    "HistoryIndex",
    "clean_user_text",
]

KINDS: tuple[str, ...] = ("user", "assistant", "tool", "all")
#: Searched when ``kind`` is not given: the conversation, not tool output.
DEFAULT_KINDS: frozenset[str] = frozenset({"user", "assistant"})
ARCHIVE_DIRS: tuple[str, ...] = ("archive", "archives", ".archive")
RELATIVE_FLOOR = 0.3
_ARGS_MAX = 300
_MAX_FILE = 256 * 1024 * 1024

_BLOCKS = re.compile(r"\n*<(workspace-context|memory-recall)\b[^>]*>.*?</\1>\n*", re.DOTALL)


def clean_user_text(text: str) -> str:
    """A user message without the context blocks the agent appended to it."""
    return without_goal_block(_BLOCKS.sub("\n", text))


def _roles(kind: str | None) -> frozenset[str]:
    if kind is None:
        return DEFAULT_KINDS
    if kind == "all":
        return frozenset({"user", "assistant", "tool"})
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    return frozenset({kind})


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    session_id: str
    index: int  # ordinal of the message record within its transcript (0-based)
    role: str
    text: str
    created: str  # the session's creation time
    archived: bool = False

    @property
    def ref(self) -> str:
        return f"{self.session_id}#{self.index}"


@dataclass(frozen=True, slots=True)
class HistoryHit:
    entry: HistoryEntry
    score: float


def _message_text(message: dict) -> str:
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if role == "user":
        meta = message.get("meta")
        if isinstance(meta, dict) and meta.get(HOST_TURN):
            return ""  # a goal round the host sent: nothing the user asked
        return clean_user_text(text)
    if role == "assistant":
        parts = [text.strip()] if text.strip() else []
        for call in message.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            args = str(call.get("arguments", ""))
            if len(args) > _ARGS_MAX:
                args = args[:_ARGS_MAX] + "…"
            parts.append(f"[tool call] {call.get('name', '?')} {args}")
        return "\n".join(parts)
    if role == "tool":
        return text
    return ""


class _Transcript:
    """One transcript, parsed incrementally: transcripts are append-only, so a
    grown file is read from where the last complete line ended."""

    __slots__ = (
        "archived",
        "created",
        "entries",
        "header_seen",
        "inode",
        "offset",
        "ordinal",
        "path",
        "session_id",
        "signature",
        "tokens",
    )

    def __init__(self, path: Path, archived: bool) -> None:
        self.path = path
        self.archived = archived
        self._reset()

    def _reset(self) -> None:
        self.session_id = self.path.stem
        self.created = ""
        self.header_seen = False
        self.entries: list[HistoryEntry] = []
        self.tokens: list[list[str]] = []
        self.ordinal = -1
        self.offset = 0
        self.inode = -1
        self.signature: tuple[int, int, int] = (-1, -1, -1)

    def update(self, st: os.stat_result) -> None:
        signature = (st.st_size, st.st_mtime_ns, st.st_ino)
        if signature == self.signature:
            return
        if st.st_ino != self.inode or st.st_size < self.offset:
            self._reset()  # replaced or truncated: start over
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(max(st.st_size - self.offset, 0))
        end = data.rfind(b"\n") + 1  # a torn last line waits for its newline
        for line in data[:end].split(b"\n"):
            self._consume(line)
        self.offset += end
        self.inode = st.st_ino
        self.signature = signature

    def _consume(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            record = json.loads(line.decode("utf-8", "replace"))
        except json.JSONDecodeError:
            return
        if not isinstance(record, dict):
            return
        kind = record.get("type")
        if kind == "session":
            self.header_seen = True
            self.session_id = str(record.get("id") or self.session_id)
            self.created = str(record.get("created") or "")
            return
        message = record.get("message")
        if kind != "message" or not isinstance(message, dict):
            return
        self.ordinal += 1
        role = message.get("role")
        if role not in ("user", "assistant", "tool"):
            return
        text = _message_text(message)
        if text.strip():
            entry = HistoryEntry(
                self.session_id, self.ordinal, role, text, self.created, self.archived
            )
            self.entries.append(entry)
            self.tokens.append(tokenize(text))

    @property
    def searchable(self) -> bool:
        return self.header_seen


def parse_transcript(path: Path, *, archived: bool = False) -> tuple[str, list[HistoryEntry]]:
    """(session id, entries) of one transcript; tolerant of torn or odd lines."""
    transcript = _Transcript(path, archived)
    transcript.update(os.stat(path))
    return transcript.session_id, transcript.entries if transcript.searchable else []


class HistoryIndex:
    """Search and browse this workspace's transcripts."""

    def __init__(self, sessions_root: Path, workspace: Path, *, current_session: str = "") -> None:
        from reasonix_core.home import session_dir

        self.folder = session_dir(sessions_root, workspace)
        self.current_session = current_session
        self._files: dict[Path, _Transcript] = {}
        self._index_key: tuple[object, ...] | None = None
        self._index: tuple[BM25, list[HistoryEntry]] | None = None
        # Read-only calls may run in parallel worker threads.
        self._lock = threading.RLock()

    # -- loading ----------------------------------------------------------
    def transcripts(self) -> list[tuple[Path, bool]]:
        out: list[tuple[Path, bool]] = []
        if not self.folder.is_dir() or self.folder.is_symlink():
            return out
        out.extend((p, False) for p in sorted(self.folder.glob("*.jsonl")))
        for name in ARCHIVE_DIRS:
            sub = self.folder / name
            if sub.is_dir() and not sub.is_symlink():
                out.extend((p, True) for p in sorted(sub.rglob("*.jsonl")))
        return [(p, a) for p, a in out if not p.is_symlink()]

    def refresh(self) -> list[_Transcript]:
        """Parse new or changed transcripts; drop vanished ones."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> list[_Transcript]:
        seen: list[_Transcript] = []
        live: set[Path] = set()
        for path, archived in self.transcripts():
            try:
                st = os.stat(path)
            except OSError:
                continue
            if st.st_size > _MAX_FILE:
                continue
            live.add(path)
            transcript = self._files.get(path)
            if transcript is None:
                transcript = self._files[path] = _Transcript(path, archived)
            try:
                transcript.update(st)
            except OSError:
                continue
            if transcript.searchable:
                seen.append(transcript)
        for gone in set(self._files) - live:
            del self._files[gone]
        return seen

    def _build(self, roles: frozenset[str]) -> tuple[BM25, list[HistoryEntry]]:
        with self._lock:
            return self._build_locked(roles)

    def _build_locked(self, roles: frozenset[str]) -> tuple[BM25, list[HistoryEntry]]:
        files = self._refresh()
        key = (roles, tuple((str(t.path), t.signature) for t in files))
        if self._index is not None and self._index_key == key:
            return self._index
        entries: list[HistoryEntry] = []
        tokens: list[list[str]] = []
        for transcript in files:
            for entry, toks in zip(transcript.entries, transcript.tokens, strict=True):
                if entry.role in roles:
                    entries.append(entry)
                    tokens.append(toks)
        built = (BM25(tokens), entries)
        self._index_key, self._index = key, built
        return built

    # -- queries ----------------------------------------------------------
    def search(self, query: str, *, kind: str | None = None, limit: int = 8) -> list[HistoryHit]:
        roles = _roles(kind)
        terms = tokenize(query)
        if not terms:
            return []
        index, entries = self._build(roles)
        top = index.top(terms, limit, relative_floor=RELATIVE_FLOOR)
        return [HistoryHit(entries[doc], score) for doc, score in top]

    def searched_count(self, kind: str | None = None) -> tuple[int, int]:
        """(messages, sessions) the last search over ``kind`` covered."""
        _, entries = self._build(_roles(kind))
        return len(entries), len({e.session_id for e in entries})

    def around(self, ref: str, radius: int = 3) -> tuple[list[HistoryEntry], HistoryEntry]:
        """The messages within ``radius`` of ``ref`` in its transcript (all roles)."""
        session_id, sep, number = ref.strip().partition("#")
        if not sep or not number.isdigit() or not session_id:
            raise ValueError(
                f"invalid ref {ref!r}: use the ref printed by a history search, e.g. "
                "'20250101-120000-ab12cd#14'"
            )
        target = int(number)
        for parsed in self.refresh():
            if parsed.session_id != session_id:
                continue
            by_index = {e.index: e for e in parsed.entries}
            center = by_index.get(target)
            if center is None:
                raise ValueError(
                    f"session {session_id} has no searchable message #{target} "
                    f"(it has messages #0-#{max(by_index, default=0)})"
                )
            window = [e for e in parsed.entries if target - radius <= e.index <= target + radius]
            return window, center
        raise ValueError(f"no transcript of this project has session id {session_id!r}")

    def sessions(self) -> Iterable[str]:
        return [p.session_id for p in self.refresh()]
