"""Background facts: one Markdown file per fact, revisioned, never silently lost.

Layout under ``$REASONIX_HOME/memory/``::

    global/                       scope "global": facts about the user, any project
    project/<workspace-key>/      scope "project": facts about this workspace
      <id>.md                     the active revision of each fact
      .revisions/<id>/<rev>.md    every superseded revision (snapshot before update)
      .archive/<id>.md            forgotten facts (``forget`` moves them here)

A fact has an immutable ``id`` (also its file name), a monotonic ``revision``
(every update, forget and restore adds one), ``created`` / ``updated``
timestamps, a ``type`` (user / feedback / project / reference) and a ``scope``
(project / global). The file is Markdown with a front matter whose values are
JSON, so it is readable, diffable and also valid YAML.

Safety: ids are validated (no separators, no dots), every directory on the
way down from ``memory/`` and every fact file is refused if it is a symlink,
files are opened with ``O_NOFOLLOW``, a new fact is published with a hard link
(create-only: it can never replace an existing file), a revision snapshot is
created exclusively (two concurrent updates of the same revision cannot both
win), and an update re-checks the revision right before it replaces the file.
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import stat as stat_mod
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reasonix_core.home import MEMORY_DIR

__all__ = [
    "AUTO_SAVE_MAX_BODY",
    "DEFAULT_SCOPE",
    "FACT_TYPES",
    "MAX_BODY",
    "MAX_TITLE",
    "SCOPES",
    "Fact",
    "FactConflict",
    "FactError",
    "FactNotFound",
    "FactStore",
    "auto_save_reason",
    "credential_reason",
    "sensitive_reason",
]

FACT_TYPES: tuple[str, ...] = ("user", "feedback", "project", "reference")
SCOPES: tuple[str, ...] = ("project", "global")
#: Where a fact goes when ``scope`` is not given.
DEFAULT_SCOPE: dict[str, str] = {
    "user": "global",
    "feedback": "global",
    "project": "project",
    "reference": "project",
}
MAX_TITLE = 120
MAX_BODY = 4000
MAX_KEYWORDS = 8
#: The largest body a create-only project/reference fact may have and still be
#: saved without asking (seed 000 §3.6: "bounded").
AUTO_SAVE_MAX_BODY = 1200
_MAX_FILE = 64 * 1024
_ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")
_REV_RE = re.compile(r"^(\d{6,})\.md$")
_KNOWN_KEYS = (
    "id",
    "revision",
    "type",
    "scope",
    "title",
    "keywords",
    "created",
    "updated",
    "source",
    "archived",
    "archive_reason",
)


class FactError(Exception):
    """A fact operation was refused; the message says why and what to do."""


class FactNotFound(FactError):
    pass


class FactConflict(FactError):
    """The operation would overwrite something or lost a race."""


# --------------------------------------------------------------------------
# Sensitivity
# --------------------------------------------------------------------------

_CREDENTIAL_PATTERNS: tuple[tuple[str, str], ...] = (
    ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ("an API key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"),
    ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a GitHub token", r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\."),
    (
        "a secret assignment",
        (
            r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)"
            r"\s*[:=]\s*['\"]?[^\s'\"]{6,}"
        ),
    ),
    ("credentials in a URL", r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@"),
)
_SENSITIVE_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "secret-related words",
        (
            r"(?i)\b(?:passwords?|passwd|secrets?|credentials?|private[ _-]?keys?|tokens?|"
            r"api[ _-]?keys?|ssn|social security|credit card|iban)\b|密码|密钥|口令|令牌|身份证|银行卡"
        ),
    ),
    ("an e-mail address", r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"),
    ("a phone number", r"(?<!\d)(?:\+?\d[\d -]{8,}\d)(?!\d)"),
    ("a long opaque string", r"\b[A-Za-z0-9+/_-]{40,}={0,2}"),
)


@functools.cache
def _compiled(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    # Compiled by the first check, not at import (~1.3 ms of every start-up).
    return tuple((label, re.compile(pattern)) for label, pattern in patterns)


def credential_reason(text: str) -> str | None:
    """Why ``text`` looks like it contains a credential (never stored), or None."""
    for label, pattern in _compiled(_CREDENTIAL_PATTERNS):
        if pattern.search(text):
            return f"it looks like it contains {label}"
    return None


def sensitive_reason(text: str) -> str | None:
    """Why ``text`` may be sensitive (so it is never saved without asking), or None."""
    found = credential_reason(text)
    if found:
        return found
    for label, pattern in _compiled(_SENSITIVE_PATTERNS):
        if pattern.search(text):
            return f"it mentions {label}"
    return None


def auto_save_reason(args: Mapping[str, Any]) -> str | None:
    """The permission hook for ``remember`` (seed 000 §3.6).

    Returns a reason when the call creates (no ``id``) a bounded, non-sensitive
    fact of type project or reference in the project scope: such a call is
    saved without asking. Anything else returns None and follows the preset.
    The decision uses the arguments only, so ``reasonix permissions check`` and
    the approval prompt see exactly what will run; the store itself refuses
    any overwrite, so "create-only" holds at execution time too.
    """
    if not isinstance(args, Mapping) or args.get("id") not in (None, ""):
        return None
    allowed = {"title", "content", "type", "scope", "keywords"}
    if set(args) - allowed:
        return None
    kind, title, body = args.get("type"), args.get("title"), args.get("content")
    if kind not in ("project", "reference"):
        return None
    if not isinstance(title, str) or not isinstance(body, str):
        return None
    scope = args.get("scope") or DEFAULT_SCOPE[kind]
    if scope != "project":
        return None
    keywords = args.get("keywords") or []
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        return None
    if not title.strip() or len(title) > MAX_TITLE or not body.strip():
        return None
    if len(body) > AUTO_SAVE_MAX_BODY or len(keywords) > MAX_KEYWORDS:
        return None
    if sensitive_reason("\n".join([title, body, *keywords])):
        return None
    return f"new {kind} fact for this project (bounded, non-sensitive, create-only)"


# --------------------------------------------------------------------------
# The fact record
# --------------------------------------------------------------------------


def _now_iso(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).isoformat(timespec="seconds")


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def normalize_title(title: str) -> str:
    text = unicodedata.normalize("NFKC", title).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", text).split())


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    id: str
    revision: int
    type: str
    scope: str
    title: str
    body: str
    keywords: tuple[str, ...] = ()
    created: str = ""
    updated: str = ""
    source: str = ""
    archived: str | None = None
    archive_reason: str = ""
    # Front-matter keys this version does not know; kept on rewrite.
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def updated_at(self) -> datetime | None:
        return parse_time(self.updated) or parse_time(self.created)

    def to_markdown(self) -> str:
        values: dict[str, Any] = {
            "id": self.id,
            "revision": self.revision,
            "type": self.type,
            "scope": self.scope,
            "title": self.title,
            "keywords": list(self.keywords),
            "created": self.created,
            "updated": self.updated,
            "source": self.source,
        }
        if self.archived:
            values["archived"] = self.archived
            values["archive_reason"] = self.archive_reason
        values.update({k: v for k, v in self.extra.items() if k not in values})
        lines = ["---"]
        lines += [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in values.items()]
        lines += ["---", self.body.rstrip("\n"), ""]
        return "\n".join(lines)

    @classmethod
    def from_markdown(cls, text: str) -> Fact:
        if not text.startswith("---\n"):
            raise FactError("not a fact file (no front matter)")
        end = text.find("\n---\n", 3)
        if end < 0:
            if text.endswith("\n---"):
                end = len(text) - 4
            else:
                raise FactError("not a fact file (front matter not closed)")
        head, body = text[4:end], text[end + 5 :]
        values: dict[str, Any] = {}
        for line in head.split("\n"):
            if not line.strip():
                continue
            key, sep, raw = line.partition(":")
            if not sep:
                raise FactError(f"bad front matter line {line!r}")
            try:
                values[key.strip()] = json.loads(raw.strip())
            except json.JSONDecodeError:
                values[key.strip()] = raw.strip()
        try:
            fact = cls(
                id=str(values["id"]),
                revision=int(values["revision"]),
                type=str(values["type"]),
                scope=str(values["scope"]),
                title=str(values.get("title", "")),
                body=body.rstrip("\n"),
                keywords=tuple(str(k) for k in values.get("keywords") or ()),
                created=str(values.get("created", "")),
                updated=str(values.get("updated", "")),
                source=str(values.get("source", "")),
                archived=values.get("archived") or None,
                archive_reason=str(values.get("archive_reason", "")),
                extra={k: v for k, v in values.items() if k not in _KNOWN_KEYS},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FactError(f"bad fact file ({exc})") from None
        if fact.type not in FACT_TYPES or fact.scope not in SCOPES or not _ID_RE.match(fact.id):
            raise FactError("bad fact file (type, scope or id invalid)")
        return fact

    def search_text(self) -> str:
        """What BM25 sees: the title counts twice, keywords once, then the body."""
        return "\n".join([self.title, self.title, " ".join(self.keywords), self.body])


def new_fact_id(title: str) -> str:
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:40].strip("-")
    return f"{slug or 'fact'}-{secrets.token_hex(3)}"


def validate_id(fact_id: str) -> str:
    if not isinstance(fact_id, str) or not _ID_RE.match(fact_id):
        raise FactError(
            f"invalid fact id {fact_id!r}: ids are lower-case letters, digits and '-' "
            "(as shown by the memory tool); paths are not accepted"
        )
    return fact_id


# --------------------------------------------------------------------------
# Safe file primitives
# --------------------------------------------------------------------------


def _check_dir(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat_mod.S_ISLNK(st.st_mode):
        raise FactError(f"refusing to use memory directory {path}: it is a symlink")
    if not stat_mod.S_ISDIR(st.st_mode):
        raise FactError(f"refusing to use memory directory {path}: it is not a directory")


def _ensure_dirs(base: Path, parts: Iterable[str]) -> Path:
    """``base/part1/part2…``, created as needed, no component a symlink."""
    current = base
    _check_dir(current)
    current.mkdir(parents=True, exist_ok=True, mode=0o700)
    _check_dir(current)
    for part in parts:
        current = current / part
        _check_dir(current)
        try:
            current.mkdir(mode=0o700)
        except FileExistsError:
            pass
        _check_dir(current)
    return current


def _read_file(path: Path) -> str | None:
    """The text of a regular file, None if missing; symlinks are refused."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise FactError(f"refusing to read {path.name}: it is a symlink") from None
        raise FactError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat_mod.S_ISREG(st.st_mode):
            raise FactError(f"refusing to read {path.name}: not a regular file")
        if st.st_size > _MAX_FILE:
            raise FactError(f"refusing to read {path.name}: larger than {_MAX_FILE} bytes")
        return fh.read().decode("utf-8", "replace")


def _write_temp(folder: Path, text: str) -> Path:
    tmp = folder / f".tmp-{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(text.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def _create_only(path: Path, text: str) -> None:
    """Publish ``text`` at ``path`` atomically; never replace anything there."""
    if os.path.lexists(path):
        raise FactConflict(f"{path.name} already exists; refusing to overwrite it")
    tmp = _write_temp(path.parent, text)
    try:
        os.link(tmp, path)  # fails if path appeared meanwhile: no overwrite
    except FileExistsError:
        raise FactConflict(f"{path.name} already exists; refusing to overwrite it") from None
    except OSError:
        # No hard links here (some network/FUSE file systems): exclusive create.
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
            )
        except FileExistsError:
            raise FactConflict(f"{path.name} already exists; refusing to overwrite it") from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
    finally:
        tmp.unlink(missing_ok=True)


def _replace_regular(path: Path, text: str) -> None:
    st = os.lstat(path)
    if not stat_mod.S_ISREG(st.st_mode):
        raise FactError(f"refusing to replace {path.name}: not a regular file")
    tmp = _write_temp(path.parent, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------

ARCHIVE_DIR = ".archive"
REVISIONS_DIR = ".revisions"


class FactStore:
    """The facts of one workspace (project scope) plus the user's global facts."""

    def __init__(
        self,
        home: Path,
        workspace: Path,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        from reasonix_core.home import workspace_key

        self.home = home
        self.workspace = workspace
        self.clock = clock
        self.root = home / MEMORY_DIR
        self._parts: dict[str, tuple[str, ...]] = {
            "global": ("global",),
            "project": ("project", workspace_key(workspace)),
        }
        self._cache: dict[tuple[str, bool], tuple[tuple[Any, ...], list[Fact]]] = {}

    # -- paths ------------------------------------------------------------
    def scope_dir(self, scope: str, *, create: bool = False) -> Path:
        if scope not in SCOPES:
            raise FactError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        if create:
            return _ensure_dirs(self.root, self._parts[scope])
        path = self.root.joinpath(*self._parts[scope])
        current = self.root
        _check_dir(current)
        for part in self._parts[scope]:
            current = current / part
            _check_dir(current)
        return path

    def _active_path(self, scope: str, fact_id: str, *, create: bool = False) -> Path:
        return self.scope_dir(scope, create=create) / f"{validate_id(fact_id)}.md"

    def _archive_path(self, scope: str, fact_id: str, *, create: bool = False) -> Path:
        if create:
            folder = _ensure_dirs(self.scope_dir(scope, create=True), (ARCHIVE_DIR,))
        else:
            folder = self.scope_dir(scope) / ARCHIVE_DIR
            _check_dir(folder)
        return folder / f"{validate_id(fact_id)}.md"

    def _revision_dir(self, scope: str, fact_id: str, *, create: bool = False) -> Path:
        base = self.scope_dir(scope, create=create)
        if create:
            return _ensure_dirs(base, (REVISIONS_DIR, validate_id(fact_id)))
        folder = base / REVISIONS_DIR
        _check_dir(folder)
        folder = folder / validate_id(fact_id)
        _check_dir(folder)
        return folder

    # -- reading ----------------------------------------------------------
    def _load(self, path: Path) -> Fact | None:
        text = _read_file(path)
        if text is None:
            return None
        fact = Fact.from_markdown(text)
        if f"{fact.id}.md" != path.name:
            raise FactError(f"{path.name}: its id {fact.id!r} does not match the file name")
        return fact

    def locate(self, fact_id: str, *, archived: bool = False) -> Fact | None:
        """The active (or, with ``archived``, the archived) fact with this id."""
        validate_id(fact_id)
        for scope in SCOPES:
            path = (
                self._archive_path(scope, fact_id)
                if archived
                else self._active_path(scope, fact_id)
            )
            fact = self._load(path)
            if fact is not None:
                return fact
        return None

    def get(self, fact_id: str) -> Fact:
        """The active fact, else the archived one; FactNotFound otherwise."""
        fact = self.locate(fact_id) or self.locate(fact_id, archived=True)
        if fact is None:
            raise FactNotFound(
                f"no fact with id {fact_id!r}; use the memory tool (list or search) to find ids"
            )
        return fact

    def list(
        self,
        *,
        scope: str | None = None,
        type: str | None = None,
        archived: bool = False,
    ) -> list[Fact]:
        """Facts, most recently updated first. Unreadable files are skipped."""
        out: list[Fact] = []
        for sc in (scope,) if scope else SCOPES:
            out.extend(self._scan(sc, archived))
        if type:
            out = [f for f in out if f.type == type]
        out.sort(key=lambda f: (f.updated or f.created, f.id), reverse=True)
        return out

    def _scan(self, scope: str, archived: bool) -> list[Fact]:
        folder = self.scope_dir(scope)
        if archived:
            folder = folder / ARCHIVE_DIR
            _check_dir(folder)
        try:
            entries = sorted(
                (e for e in os.scandir(folder) if e.name.endswith(".md")),
                key=lambda e: e.name,
            )
        except (FileNotFoundError, NotADirectoryError):
            return []
        signature: list[Any] = []
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            signature.append((entry.name, st.st_mtime_ns, st.st_size, st.st_ino))
        key = (scope, archived)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == tuple(signature):
            return list(cached[1])
        facts: list[Fact] = []
        for entry in entries:
            if entry.is_symlink() or not _ID_RE.match(entry.name[:-3]):
                continue
            try:
                fact = self._load(Path(entry.path))
            except FactError:
                continue
            if fact is not None and fact.scope == scope:
                facts.append(fact)
        self._cache[key] = (tuple(signature), facts)
        return list(facts)

    def revisions(self, fact_id: str) -> list[Fact]:
        """Superseded revisions of a fact, oldest first."""
        fact = self.get(fact_id)
        folder = self._revision_dir(fact.scope, fact_id)
        out: list[Fact] = []
        try:
            names = sorted(e.name for e in os.scandir(folder) if _REV_RE.match(e.name))
        except FileNotFoundError:
            return []
        for name in names:
            try:
                old = self._load_revision(folder / name)
            except FactError:
                continue
            if old is not None:
                out.append(old)
        return out

    def _load_revision(self, path: Path) -> Fact | None:
        text = _read_file(path)
        return None if text is None else Fact.from_markdown(text)

    # -- writing ----------------------------------------------------------
    def _snapshot(self, fact: Fact) -> None:
        """Keep ``fact`` as a superseded revision; exclusive, so a concurrent
        writer that read the same revision loses instead of both winning."""
        folder = self._revision_dir(fact.scope, fact.id, create=True)
        try:
            _create_only(folder / f"{fact.revision:06d}.md", fact.to_markdown())
        except FactConflict:
            raise FactConflict(
                f"fact {fact.id} revision {fact.revision} was changed concurrently; "
                "read it again and retry"
            ) from None

    def create(
        self,
        *,
        type: str,
        title: str,
        body: str,
        scope: str | None = None,
        keywords: Iterable[str] = (),
        source: str = "remember",
    ) -> Fact:
        type, scope, title, body, kws = self._check_fields(type, scope, title, body, keywords)
        wanted = normalize_title(title)
        for other in self.list(scope=scope):
            if normalize_title(other.title) == wanted:
                raise FactConflict(
                    f"a {scope} fact with this title already exists (id {other.id}, "
                    f"revision {other.revision}); pass id={other.id!r} to update it instead"
                )
        now = _now_iso(self.clock)
        for _ in range(5):
            fact = Fact(
                id=new_fact_id(title),
                revision=1,
                type=type,
                scope=scope,
                title=title,
                body=body,
                keywords=kws,
                created=now,
                updated=now,
                source=source,
            )
            path = self._active_path(scope, fact.id, create=True)
            if os.path.lexists(self._archive_path(scope, fact.id)):
                continue
            try:
                _create_only(path, fact.to_markdown())
            except FactConflict:
                continue
            return fact
        raise FactConflict("could not allocate a fresh fact id; try again")

    def update(
        self,
        fact_id: str,
        *,
        title: str | None = None,
        body: str | None = None,
        type: str | None = None,
        keywords: Iterable[str] | None = None,
        expected_revision: int | None = None,
        source: str = "remember",
    ) -> Fact:
        current = self._updatable(fact_id, expected_revision)
        new_type, _, new_title, new_body, kws = self._check_fields(
            type or current.type,
            current.scope,
            current.title if title is None else title,
            current.body if body is None else body,
            current.keywords if keywords is None else keywords,
        )
        if normalize_title(new_title) != normalize_title(current.title):
            self._check_title_free(current, new_title)
        if (new_type, new_title, new_body, kws) == (
            current.type,
            current.title,
            current.body,
            current.keywords,
        ):
            return current
        updated = replace(
            current,
            revision=current.revision + 1,
            type=new_type,
            title=new_title,
            body=new_body,
            keywords=kws,
            updated=_now_iso(self.clock),
            source=source,
        )
        path = self._active_path(current.scope, fact_id)
        self._snapshot(current)
        again = self._load(path)
        if again is None or again.revision != current.revision:
            raise FactConflict(f"fact {fact_id} changed while updating; read it again and retry")
        _replace_regular(path, updated.to_markdown())
        return updated

    def _updatable(self, fact_id: str, expected_revision: int | None) -> Fact:
        """The active fact ``fact_id``, at ``expected_revision`` when one is given."""
        current = self.locate(fact_id)
        if current is None:
            if self.locate(fact_id, archived=True) is not None:
                raise FactNotFound(
                    f"fact {fact_id} is archived (forgotten); restore it or remember a new one"
                )
            raise FactNotFound(
                f"no active fact with id {fact_id!r}; use the memory tool to find ids, "
                "or omit id to create a new fact"
            )
        if expected_revision is not None and current.revision != expected_revision:
            raise FactConflict(
                f"fact {fact_id} is at revision {current.revision}, not {expected_revision}; "
                "read it again and retry"
            )
        return current

    def _check_title_free(self, current: Fact, new_title: str) -> None:
        """Refuse retitling ``current`` to the title of another fact of its scope."""
        for other in self.list(scope=current.scope):
            if other.id != current.id and normalize_title(other.title) == normalize_title(
                new_title
            ):
                raise FactConflict(
                    f"another {current.scope} fact already has this title (id {other.id})"
                )

    def forget(self, fact_id: str, *, reason: str = "") -> Fact:
        """Archive the fact (never delete): snapshot, move to ``.archive/``."""
        current = self.locate(fact_id)
        if current is None:
            if self.locate(fact_id, archived=True) is not None:
                raise FactNotFound(f"fact {fact_id} is already archived")
            raise FactNotFound(f"no active fact with id {fact_id!r}")
        now = _now_iso(self.clock)
        archived = replace(
            current,
            revision=current.revision + 1,
            updated=now,
            archived=now,
            archive_reason=reason.strip()[:500],
        )
        archive = self._archive_path(current.scope, fact_id, create=True)
        self._snapshot(current)
        _create_only(archive, archived.to_markdown())
        self._active_path(current.scope, fact_id).unlink()
        return archived

    def restore(self, fact_id: str) -> Fact:
        """Bring an archived fact back as a new, higher revision."""
        old = self.locate(fact_id, archived=True)
        if old is None:
            raise FactNotFound(f"no archived fact with id {fact_id!r}")
        active = self._active_path(old.scope, fact_id, create=True)
        if os.path.lexists(active):
            raise FactConflict(f"fact {fact_id} is active already; refusing to overwrite it")
        restored = replace(
            old,
            revision=old.revision + 1,
            updated=_now_iso(self.clock),
            archived=None,
            archive_reason="",
            source="restore",
        )
        self._snapshot(old)
        _create_only(active, restored.to_markdown())
        self._archive_path(old.scope, fact_id).unlink()
        return restored

    @staticmethod
    def _check_fields(
        type: str, scope: str | None, title: str, body: str, keywords: Iterable[str]
    ) -> tuple[str, str, str, str, tuple[str, ...]]:
        if type not in FACT_TYPES:
            raise FactError(f"unknown type {type!r}; use one of {', '.join(FACT_TYPES)}")
        scope = scope or DEFAULT_SCOPE[type]
        if scope not in SCOPES:
            raise FactError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        title = " ".join(title.split())
        body = body.strip()
        if not title:
            raise FactError("title is empty")
        if len(title) > MAX_TITLE:
            raise FactError(f"title is {len(title)} characters; keep it under {MAX_TITLE}")
        if not body:
            raise FactError("content is empty")
        if len(body) > MAX_BODY:
            raise FactError(
                f"content is {len(body)} characters; a fact holds at most {MAX_BODY}. "
                "Save the essential point, not a transcript"
            )
        kws = tuple(dict.fromkeys(k.strip() for k in keywords if k.strip()))
        if len(kws) > MAX_KEYWORDS:
            raise FactError(f"at most {MAX_KEYWORDS} keywords")
        secret = credential_reason("\n".join([title, body, *kws]))
        if secret:
            raise FactError(
                f"refusing to save this fact: {secret}. Memory never stores credentials; "
                "refer to where the secret lives (an env var name, a file path) instead"
            )
        return type, scope, title, body, kws
