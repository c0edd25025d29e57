"""Standing-instruction files, read as the agents that write them read them
(docs/CONFIG.md#instruction-files).

The user's own files come first (``~/.gemini/GEMINI.md``, ``~/.codex/AGENTS.md``,
``~/.claude/CLAUDE.md``, then ``~/.reasonix/REASONIX.md``), then the project's,
from the git root down to the workspace, in each folder ``REASONIX.md``,
``AGENTS.md``, ``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md`` and
``GEMINI.md``: a later file is the more specific one (docs/CONFIG.md).

Claude Code's and Gemini CLI's files (and Reasonix's) may import others with
``@path`` (relative to the importing file, ``~/`` or absolute): each imported
file follows its importer as its own section, up to :data:`MAX_IMPORT_DEPTH`
hops. An ``@`` inside a code span or a fenced block is text, not an import;
a name that is not an existing file (an e-mail, ``@someone``) stays text.
Codex reads ``AGENTS.md`` as plain text, and so does Reasonix.

Everything here is read once, at session start, into the frozen prefix. A
file reached twice (two names, two imports, an import cycle) is included once.
A project's file is the repository's: what it imports from outside the
project is included only when the user approves it (:attr:`Instructions.outside`;
the session asks, a headless run refuses with a notice), and a link inside the
project that leads out is refused. No import reads a protected path (the
Reasonix home, credential folders) or one the Read deny rules cover.

Blocking file I/O, once per new session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reasonix_core.command.mentions import find_mentions
from reasonix_core.fsutil import within
from reasonix_core.permission.summary import visible
from reasonix_core.project import file_label, project_folders

#: Each folder's instruction files, in prompt order.
PROJECT_FILES = (
    "REASONIX.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
)
#: The user-level files of the other agents (under the user's home), in prompt order;
#: ``~/.reasonix/REASONIX.md`` follows them.
USER_FILES = (".gemini/GEMINI.md", ".codex/AGENTS.md", ".claude/CLAUDE.md")
#: Files whose ``@path`` lines are imports (Codex's AGENTS.md has no imports).
IMPORTING = frozenset({"REASONIX.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"})
#: Hops from a top-level file to an imported one (Claude Code's limit).
MAX_IMPORT_DEPTH = 5
#: Read from one file, however large it is.
MAX_FILE_BYTES = 64 * 1024
#: All the files together: a chain of large imports must not fill the context.
MAX_TOTAL_BYTES = 256 * 1024

_TRAILING = ".,;:!?)]}'\""
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutsideImport:
    """An import of a project file that reads outside the project: asked about."""

    real: str  # the resolved path, what an approval names
    label: str  # as shown to the user
    importer: str  # the importing file's label


@dataclass(frozen=True, slots=True, kw_only=True)
class Instructions:
    """The sections of the system prompt, and what the user should hear about."""

    sections: list[tuple[str, str]] = field(default_factory=list)  # (label, text)
    notices: list[str] = field(default_factory=list)
    # Imports from outside the project that were not approved (not included).
    outside: list[OutsideImport] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Source:
    label: str
    path: Path  # as named (symlinks not followed)
    scope: Literal["user", "project"]
    depth: int = 0
    importer: str = ""


def gather_instructions(
    workspace: Path,
    home: Path | None = None,
    protected: Iterable[Path | str] = (),
    denied: Callable[[str], bool] | None = None,
    approved: Collection[str] = (),
) -> Instructions:
    """Every instruction file of the session, in prompt order, with its imports.

    ``home``: the Reasonix home (None: no user-level file at all); ``protected``:
    the run's ``forbid_read`` paths; ``denied``: the Read deny rules;
    ``approved``: real paths of outside imports the user allowed."""
    folders = project_folders(workspace)
    root = folders[0]
    shielded = [os.path.realpath(p) for p in protected]
    if home is not None:
        shielded.append(os.path.realpath(home))
    reader = _Reader(root, shielded, denied, frozenset(approved))
    if home is not None:
        for label, path in user_files():
            reader.top(_Source(label, path, "user"))
        # Reasonix's own, in its home: the one file read from a protected folder.
        reader.top(_Source("~/.reasonix/REASONIX.md", home / "REASONIX.md", "user"), own=True)
    for folder in folders:
        for name in PROJECT_FILES:
            path = folder / name
            reader.top(_Source(file_label(path, root), path, "project"))
    return reader.result


def user_files() -> list[tuple[str, Path]]:
    """(label, path) of the other agents' user-level files; Codex's follows
    ``$CODEX_HOME`` as Codex does."""
    user_home = Path(os.path.expanduser("~"))
    out = [(f"~/{name}", user_home / name) for name in USER_FILES]
    codex_home = os.environ.get("CODEX_HOME")
    if codex_home:
        codex = Path(codex_home).expanduser() / "AGENTS.md"
        out[USER_FILES.index(".codex/AGENTS.md")] = (str(codex), codex)
    return out


def load_instructions(
    workspace: Path,
    home: Path | None = None,
    protected: Iterable[Path | str] = (),
    denied: Callable[[str], bool] | None = None,
) -> list[tuple[str, str]]:
    """(label, text) for each instruction file (:func:`gather_instructions`), no
    outside import approved."""
    return gather_instructions(workspace, home, protected, denied).sections


class _Reader:
    def __init__(
        self,
        root: Path,
        shielded: list[str],
        denied: Callable[[str], bool] | None,
        approved: frozenset[str],
    ) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.shielded = shielded
        self.denied = denied
        self.approved = approved
        self.seen: set[str] = set()
        # Imports refused once: a second importer of one adds no second notice.
        self.refused: set[str] = set()
        self.total = 0
        self.result = Instructions()

    def top(self, source: _Source, *, own: bool = False) -> None:
        """A top-level file: silently absent, or skipped when it may not be read
        (``own``: Reasonix's user file, in the protected Reasonix home)."""
        try:
            if not source.path.is_file():
                return
        except OSError:
            return
        real = os.path.realpath(source.path)
        if real in self.seen:
            return
        if (self._shielded(real) and not own) or (
            source.scope == "project" and not self._inside(real)
        ):
            # A repository's AGENTS.md that links out (to ~/.reasonix/.env,
            # ~/.ssh/...) would put that file into every request.
            return
        if source.scope == "project" and self._denied(source.path):
            return  # ``Read(.env)`` in deny: AGENTS.md -> .env must not pass it either.
        self._include(source, real)

    def _include(self, source: _Source, real: str) -> None:
        self.seen.add(real)
        if self.total >= MAX_TOTAL_BYTES:
            self._notice(source, f"over {MAX_TOTAL_BYTES // 1024} KiB of instructions")
            return
        try:
            data, size = _read_regular(source.path, real)
        except OSError as exc:
            if source.depth:
                self._notice(source, exc.strerror or str(exc))
            return
        if b"\x00" in data[:8192]:
            self._notice(source, "a binary file")
            return
        if size > MAX_FILE_BYTES:
            data = data[:MAX_FILE_BYTES]
            where = f" (imported by {source.importer})" if source.importer else ""
            self.result.notices.append(
                visible(
                    f"{source.label}{where}: larger than {MAX_FILE_BYTES // 1024} KiB; "
                    f"only its first {MAX_FILE_BYTES // 1024} KiB are included"
                )
            )
        self.total += len(data)
        text = data.decode("utf-8", "replace").strip()
        if text:
            where = f" (imported by {source.importer})" if source.importer else ""
            self.result.sections.append((source.label + where, text))
        # An imported file imports in turn, whatever its name.
        if source.depth or source.path.name in IMPORTING:
            self._imports(source, text)

    def _imports(self, importer: _Source, text: str) -> None:
        base = Path(os.path.dirname(os.path.abspath(importer.path)))
        for token in dict.fromkeys(import_tokens(text)):
            found = _existing(token, base)
            if found is None:
                continue  # an e-mail, a handle, a file that is not there: text
            label_token, path = found
            real = os.path.realpath(path)
            if real in self.seen or real in self.refused:
                continue  # included already (a second name, a cycle), or refused

            source = _Source(
                self._label(path),
                path,
                importer.scope,
                importer.depth + 1,
                importer.label,
            )
            refusal = self._refusal(source, label_token, real)
            if refusal is not None:
                self.refused.add(real)
                self._notice(source, refusal, token=label_token)
                continue
            self._include(source, real)

    def _refusal(self, source: _Source, token: str, real: str) -> str | None:
        if source.depth > MAX_IMPORT_DEPTH:
            return f"more than {MAX_IMPORT_DEPTH} imports deep"
        if self._shielded(real):
            return "a protected path (keys and credentials)"
        if self._denied(source.path):
            return "denied by your Read rules"
        if source.scope == "user" or self._inside(real):
            return None
        named = os.path.normpath(source.path)
        relative = not (token.startswith("~") or Path(token).is_absolute())
        if relative and within(named, os.path.normpath(self.root)):
            return "a link that leads out of the project"
        if real in self.approved:
            return None
        self.result.outside.append(
            OutsideImport(real=real, label=visible(source.label), importer=visible(source.importer))
        )
        return "outside the project and not approved"

    def _notice(self, source: _Source, why: str, *, token: str = "") -> None:
        name = f"@{token}" if token else source.label
        where = f" (imported by {source.importer})" if source.importer else ""
        # A repository's file names reach the user's terminal here: escaped, so an
        # ESC or a bidi override in a name cannot redraw it.
        self.result.notices.append(visible(f"{name}{where}: {why}; not included"))

    def _label(self, path: Path) -> str:
        named = os.path.normpath(path)
        if within(named, os.path.normpath(self.root)):
            return file_label(Path(named), self.root)
        user_home = os.path.expanduser("~")
        if within(named, user_home):
            return "~/" + os.path.relpath(named, user_home)
        return named

    def _inside(self, real: str) -> bool:
        return within(real, self.real_root)

    def _shielded(self, real: str) -> bool:
        return any(within(real, p) for p in self.shielded)

    def _denied(self, path: Path) -> bool:
        if self.denied is None:
            return False
        named = os.fspath(path)
        return self.denied(named) or self.denied(os.path.realpath(named))


def import_tokens(text: str) -> list[str]:
    """The raw ``@`` tokens of ``text`` outside code spans and fenced blocks."""
    kept: list[str] = []
    fence = ""
    for line in text.splitlines():
        opener = _FENCE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = ""
            continue
        if opener:
            fence = opener.group(1)
            continue
        kept.append(_CODE_SPAN.sub(" ", line))
    return find_mentions("\n".join(kept))


def _existing(token: str, base: Path) -> tuple[str, Path] | None:
    """``(token as meant, path)`` when ``token`` (trailing punctuation dropped if
    need be) names an existing regular file, relative to ``base``."""
    candidates = [token]
    stripped = token.rstrip(_TRAILING)
    if stripped and stripped != token:
        candidates.append(stripped)
    for candidate in candidates:
        named = Path(os.path.expanduser(candidate))
        path = named if named.is_absolute() else base / named
        try:
            if path.is_file():
                return candidate, Path(os.path.normpath(path))
        except OSError:
            continue
    return None


def _read_regular(path: Path, real: str) -> tuple[bytes, int]:
    """Up to :data:`MAX_FILE_BYTES` + 1 bytes of ``path`` and its size; OSError when
    it is not a regular file or was swapped since ``real`` was checked."""
    # lazily: not on the TUI's start path
    from reasonix_core.tool.fs_walk import read_regular_capped

    return read_regular_capped(
        path, MAX_FILE_BYTES, lambda opened: opened != real, "changed while it was read"
    )
