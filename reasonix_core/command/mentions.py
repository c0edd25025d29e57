"""``@path`` references: resolution on send and one-level listing for completion.

A reference is expanded only when the path exists, so e-mail addresses and
``@mentions`` stay plain text. A file becomes a size-capped ``<file>`` block
(binaries are noted, never dumped) and a directory a depth-first listing that
skips noise directories. Everything here is blocking file I/O: callers on an
event loop run :func:`expand_mentions` in a thread.

A reference is user input spliced into the model's turn without any tool or
permission check, and the text may come from a project's custom command, so
two kinds of path are never attached: anything inside a protected path (the
Reasonix home, credential folders: the caller's ``forbid_read`` list) and a
workspace-relative name whose symlinks lead out of the workspace. A reference
the user did not type (a command file's, an MCP prompt's: the caller names
them ``confined``) attaches only inside the workspace; the caller asks the user
first (:func:`outside_workspace`) and passes what was approved. ``skipped``
references (a skill body's) are left as text.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix_core.fsutil import within
from reasonix_core.home import reasonix_home
from reasonix_core.images import IMAGE_SUFFIXES, MAX_IMAGE_BYTES, ImageError, ImagePart, image_part

if TYPE_CHECKING:  # the TUI imports this module before its first frame: no anyio there
    from reasonix_core.tool.ledger import FileLedger

SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
FILE_CAP_BYTES = 64 * 1024
LISTING_CAP = 400
_MENTION = re.compile(r"(?<![\w.@/])@([^\s@]+)")
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True, kw_only=True)
class MentionExpansion:
    """Blocks to append to the user turn, and notices for references that failed."""

    blocks: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    # Image files among them (reasonix_core/images.py): sent as images, beside the
    # ``<image>`` line that marks each one's place in the text.
    images: list[ImagePart] = field(default_factory=list)

    def apply(self, text: str) -> str:
        if not self.blocks:
            return text
        return text + "\n\n" + "\n\n".join(self.blocks)


# Where :meth:`MentionExpansion.apply` starts appending (the first block it adds).
_APPENDED = re.compile(r'\n\n<(?:file|directory|image|image-description) path="')


def without_attachments(turn: str) -> str:
    """A user turn as typed: without the blocks :meth:`MentionExpansion.apply` appended
    (for redrawing a saved session)."""
    found = _APPENDED.search(turn)
    return turn[: found.start()] if found else turn


# One whole-file block as :func:`_file_block` writes it, up to the next appended block.
_FILE_BLOCK = re.compile(
    r'<file path="([^"]*)">\n(.*?)\n</file>(?=\n\n<(?:file|directory|image) path="|\Z)', re.DOTALL
)


def observe_attached(turn: str, workspace: Path, ledger: FileLedger) -> list[str]:
    """Count each file attached to ``turn`` with ``@`` as observed by the model (the file
    tools then edit it without a read first), if the attached text is exactly the file's
    content now: a truncated, binary or since-changed file is not. Returns the labels."""
    from reasonix_core.tool.ledger import read_version

    found = _APPENDED.search(turn)
    if found is None:
        return []
    observed: list[str] = []
    for block in _FILE_BLOCK.finditer(turn, found.start()):
        label, text = block.group(1), block.group(2)
        path = _label_path(label, workspace)
        version = read_version(path)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        if version is None or version.size != len(data):
            continue
        if hashlib.sha256(data).hexdigest() == version.sha256:
            ledger.observe(path, version)
            observed.append(label)
    return observed


@dataclass(frozen=True, slots=True, kw_only=True)
class PathCandidate:
    name: str  # entry name, "src" or "app.py"
    completion: str  # text after "@", e.g. "src/" or "src/app.py"
    is_dir: bool


def pasted_image_mention(text: str) -> str | None:
    """``@path`` for a paste that is just the path of an image file (what a terminal
    types when a file is dropped on it: maybe quoted, maybe a ``file://`` URL), so
    the turn attaches it as an ``@`` reference would; None for any other paste.
    A path with whitespace cannot be a mention and stays text."""
    name = text.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        name = name[1:-1]
    name = name.removeprefix("file://")
    if not name or any(ch.isspace() for ch in name) or "@" in name:
        return None
    path = Path(os.path.expanduser(name))
    if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_absolute():
        return None
    try:
        return f"@{name}" if path.is_file() else None
    except OSError:
        return None


def find_mentions(text: str) -> list[str]:
    """Raw ``@`` tokens in order (trailing punctuation kept; see resolution)."""
    return _MENTION.findall(text)


def _resolve(token: str, workspace: Path) -> tuple[str, Path] | None:
    candidates = [token]
    stripped = token.rstrip(_TRAILING)
    if stripped and stripped != token:
        candidates.append(stripped)
    for candidate in candidates:
        path = _label_path(candidate, workspace)
        try:
            if path.exists():
                return candidate, path
        except OSError:
            continue
    return None


def _label_path(label: str, workspace: Path) -> Path:
    path = Path(os.path.expanduser(label))
    return path if path.is_absolute() else workspace / path


def _outside(path: Path, workspace: Path) -> bool:
    return not within(os.path.realpath(path), os.path.realpath(workspace))


def outside_workspace(text: str, workspace: Path, tokens: Collection[str]) -> list[tuple[str, str]]:
    """``(token, label)`` for each of ``tokens`` (raw mentions of ``text``) that
    names an existing path outside the workspace, links followed. Blocking."""
    out: list[tuple[str, str]] = []
    for token in dict.fromkeys(find_mentions(text)):
        if token not in tokens:
            continue
        resolved = _resolve(token, workspace)
        if resolved is not None and _outside(resolved[1], workspace):
            out.append((token, resolved[0]))
    return out


def user_named(token: str, typed: str) -> bool:
    """Did the user name ``token`` (a raw mention) in ``typed``, as a mention or
    as a word (``/review ~/notes.md`` into a body's ``@$1``)?"""
    words = set(find_mentions(typed)) | set(typed.split())
    try:
        words.update(shlex.split(typed))
    except ValueError:
        pass
    return token in words or token.rstrip(_TRAILING) in words


def _refusal(label: str, path: Path, workspace: Path, protected: Sequence[str]) -> str | None:
    """Why ``path`` (named ``label``) must not be attached, or None."""
    real = os.path.realpath(path)
    if any(within(real, root) for root in protected):
        return f"@{label}: a protected path (keys and credentials); not attached"
    relative = not (label.startswith("~") or Path(label).is_absolute())
    if relative and not within(real, os.path.realpath(workspace)):
        return f"@{label}: a link that leads out of the workspace; not attached"
    return None


def expand_mentions(
    text: str,
    workspace: Path,
    *,
    file_cap: int = FILE_CAP_BYTES,
    listing_cap: int = LISTING_CAP,
    protected: Sequence[Path | str] = (),
    denied: Callable[[str], bool] | None = None,
    confined: Collection[str] = (),
    skipped: Collection[str] = (),
    confined_why: str = "",
) -> MentionExpansion:
    """Attach each existing ``@path``; ``protected``: the run's ``forbid_read``
    paths (the Reasonix home is always among them); ``denied``: the run's
    ``Read`` deny rules (``Policy.read_denied`` for read_file), so a project
    command's ``@.env`` or a planted link to it does not pass ``Read(.env)``.
    ``confined``: raw tokens attached only inside the workspace (checked as they
    are read), ``confined_why`` ends the notice for one refused; ``skipped``:
    raw tokens left as text."""
    blocks: list[str] = []
    notices: list[str] = []
    paths: list[str] = []
    images: list[ImagePart] = []
    shielded = [os.path.realpath(p) for p in (reasonix_home(), *protected)]
    for token in dict.fromkeys(find_mentions(text)):
        if token in skipped:
            continue
        resolved = _resolve(token, workspace)
        if resolved is None:
            continue
        label, path = resolved
        refusal = _refusal(label, path, workspace, shielded)
        if refusal is None and token in confined and _outside(path, workspace):
            refusal = f"@{label}: outside the workspace; not attached ({confined_why})"
        if refusal is None and _denied(path, denied):
            refusal = f"@{label}: denied by your Read rules; not attached"
        if refusal is not None:
            notices.append(refusal)
            continue

        def hidden(entry: str) -> bool:
            real = os.path.realpath(entry)
            return any(within(real, root) for root in shielded) or _denied(Path(entry), denied)

        try:
            if path.is_dir():
                blocks.append(_directory_block(label, path, listing_cap, hidden))
            elif path.suffix.lower() in IMAGE_SUFFIXES:
                block, image = _image_attachment(label, path, hidden)
                blocks.append(block)
                images.append(image)
            else:
                blocks.append(_file_block(label, path, file_cap, hidden))
            paths.append(label)
        except OSError as exc:
            notices.append(f"@{label}: {exc.strerror or exc}")
        except ImageError as exc:
            notices.append(f"@{exc}; not attached")
    return MentionExpansion(blocks=blocks, notices=notices, paths=paths, images=images)


def _denied(path: Path, denied: Callable[[str], bool] | None) -> bool:
    """``denied`` on ``path`` as named and as resolved: the rule check resolves
    only a last component that is a link, and a folder on the way may be one
    (``@alias/k`` with ``alias -> secrets`` is ``secrets/k``)."""
    if denied is None:
        return False
    named = os.fspath(path)
    return denied(named) or denied(os.path.realpath(named))


def _file_block(
    label: str, path: Path, cap: int, hidden: Callable[[str], bool] = lambda real: False
) -> str:
    """The file's text; ``hidden`` judges what was opened (a folder on the way
    may have been swapped for a link since the checks by name)."""
    data, size = _read_capped(path, cap, hidden)
    if b"\x00" in data[:8192]:
        return f'<file path="{label}" binary="true" size="{size}" />'
    truncated = len(data) > cap
    body = data[:cap].decode("utf-8", errors="replace")
    note = f"\n[truncated: showing {cap} of {size} bytes]" if truncated else ""
    return f'<file path="{label}">\n{body}{note}\n</file>'


def _image_attachment(
    label: str, path: Path, hidden: Callable[[str], bool] = lambda real: False
) -> tuple[str, ImagePart]:
    """An image file: the ``<image>`` line that marks its place in the text, and the
    part itself (ImageError for a file that is not the image its name says)."""
    data, _ = _read_capped(path, MAX_IMAGE_BYTES, hidden)
    part = image_part(IMAGE_SUFFIXES[path.suffix.lower()], data, label)
    return f'<image path="{label}" media_type="{part.media_type}" size="{part.size}" />', part


def _read_capped(path: Path, cap: int, hidden: Callable[[str], bool]) -> tuple[bytes, int]:
    """Up to ``cap + 1`` bytes of a regular file, and its size."""
    # lazily: not on the TUI's start path
    from reasonix_core.tool.fs_walk import read_regular_capped

    return read_regular_capped(path, cap, hidden, "changed since it was checked; not attached")


def _directory_block(
    label: str, path: Path, cap: int, hidden: Callable[[str], bool] = lambda entry: False
) -> str:
    """A listing of ``path``; entries ``hidden`` refuses are left out unnamed
    (a protected folder inside, a file a deny rule covers)."""
    lines: list[str] = []
    more = False

    def walk(directory: Path, depth: int) -> None:
        nonlocal more
        try:
            entries = sorted(os.scandir(directory), key=lambda e: (not e.is_dir(), e.name))
        except OSError:
            return
        for entry in entries:
            if len(lines) >= cap:
                more = True
                return
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and entry.name in SKIP_DIRS:
                continue
            if hidden(entry.path):
                continue
            lines.append("  " * depth + entry.name + ("/" if is_dir else ""))
            if is_dir:
                walk(Path(entry.path), depth + 1)

    walk(path, 0)
    if more:
        lines.append(f"[listing truncated at {cap} entries]")
    body = "\n".join(lines)
    return f'<directory path="{label}">\n{body}\n</directory>'


def path_candidates(workspace: Path, partial: str, *, limit: int = 50) -> list[PathCandidate]:
    """Entries of the one directory named by ``partial`` (up to its last ``/``)
    whose names start with the rest, directories first. Never recursive."""
    head, _, prefix = partial.rpartition("/")
    base = Path(os.path.expanduser(head)) if head else Path()
    directory = base if base.is_absolute() else workspace / base
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    lowered = prefix.lower()
    out: list[PathCandidate] = []
    for entry in entries:
        if not entry.name.lower().startswith(lowered):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir and entry.name in SKIP_DIRS:
            continue
        if entry.name.startswith(".") and not prefix.startswith("."):
            continue
        stem = f"{head}/" if head else ""
        out.append(
            PathCandidate(
                name=entry.name + ("/" if is_dir else ""),
                completion=f"{stem}{entry.name}" + ("/" if is_dir else ""),
                is_dir=is_dir,
            )
        )
    out.sort(key=lambda c: (not c.is_dir, c.name.lower()))
    return out[:limit]
