"""Custom slash commands written as Markdown files.

``<project>/.reasonix/commands/review.md`` becomes ``/review`` and
``git/commit.md`` becomes ``/git:commit``. A file may start with a small
front matter block (``description``, ``argument-hint``); the body is a template
in which ``$ARGUMENTS`` is the whole argument string, ``$1 … $N`` are the
shell-split arguments and ``$$`` is a literal dollar. Project commands override
user commands of the same name. A file that cannot be read or parsed is
reported as a :class:`LoadProblem` and skipped; loading never raises.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reasonix_core.command.frontmatter import FrontMatterError, split_front_matter
from reasonix_core.fsutil import within

_NAME_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PLACEHOLDER = re.compile(r"\$(\$|ARGUMENTS|\d+)")
_MAX_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomCommand:
    name: str  # without the leading slash, e.g. "git:commit"
    body: str
    description: str = ""
    argument_hint: str = ""
    source: Path
    scope: Literal["project", "user"]

    def render(self, arguments: str) -> str:
        return expand_template(self.body, arguments)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadProblem:
    path: Path
    message: str


def expand_template(body: str, arguments: str) -> str:
    """Substitute ``$ARGUMENTS``, ``$1…$N`` and ``$$`` in one pass.

    A missing positional argument expands to the empty string. When the
    template has no placeholder at all and arguments were given, they are
    appended on a new line so they are never silently dropped.
    """
    arguments = arguments.strip()
    try:
        positional = shlex.split(arguments)
    except ValueError:
        positional = arguments.split()
    used = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal used
        token = match.group(1)
        if token == "$":
            return "$"
        used = True
        if token == "ARGUMENTS":
            return arguments
        index = int(token)
        return positional[index - 1] if 1 <= index <= len(positional) else ""

    rendered = _PLACEHOLDER.sub(substitute, body)
    if not used and arguments:
        rendered = f"{rendered.rstrip()}\n\n{arguments}"
    return rendered


def load_custom_commands(
    project_root: Path | None, user_home: Path | None
) -> tuple[list[CustomCommand], list[LoadProblem]]:
    """Load ``<user_home>/commands`` then ``<project_root>/.reasonix/commands``.

    Returns the commands sorted by name (project wins on a clash) and the
    problems found on the way.
    """
    by_name: dict[str, CustomCommand] = {}
    problems: list[LoadProblem] = []
    sources: list[tuple[Path, Literal["project", "user"]]] = []
    if user_home is not None:
        sources.append((user_home / "commands", "user"))
    if project_root is not None:
        sources.append((project_root / ".reasonix" / "commands", "project"))
    for directory, scope in sources:
        # A project's command is the repository's file: a link out of the project
        # (``review.md -> ~/.reasonix/.env``) would send that file as the prompt.
        inside = project_root if scope == "project" else None
        for command in _load_dir(directory, scope, problems, inside):
            by_name[command.name] = command
    return sorted(by_name.values(), key=lambda c: c.name), problems


def _load_dir(
    directory: Path,
    scope: Literal["project", "user"],
    problems: list[LoadProblem],
    inside: Path | None = None,
) -> list[CustomCommand]:
    try:
        if not directory.is_dir():
            return []
        if inside is not None and not _within(directory, inside):
            problems.append(LoadProblem(path=directory, message="links out of the project"))
            return []
        files = sorted(directory.rglob("*.md"))
    except OSError as exc:
        problems.append(LoadProblem(path=directory, message=f"cannot list: {exc.strerror}"))
        return []
    commands = []
    for path in files:
        if inside is not None and not _within(path, inside):
            problems.append(LoadProblem(path=path, message="links out of the project"))
            continue
        try:
            commands.append(_load_file(directory, path, scope))
        except _BadCommand as exc:
            problems.append(LoadProblem(path=path, message=str(exc)))
    return commands


def _within(path: Path, root: Path) -> bool:
    return within(os.path.realpath(path), os.path.realpath(root))


class _BadCommand(Exception):
    pass


def _load_file(root: Path, path: Path, scope: Literal["project", "user"]) -> CustomCommand:
    segments = path.relative_to(root).with_suffix("").parts
    if not segments or not all(_NAME_SEGMENT.match(s) for s in segments):
        raise _BadCommand("invalid command name (use letters, digits, '-', '_', '.')")
    raw = _read_regular(path)
    if len(raw) > _MAX_BYTES:
        raise _BadCommand(f"larger than {_MAX_BYTES // 1024} KiB")
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise _BadCommand("not valid UTF-8") from exc
    try:
        meta, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise _BadCommand(str(exc)) from None
    if not body.strip():
        raise _BadCommand("empty command body")
    return CustomCommand(
        name=":".join(segments),
        body=body.strip("\n"),
        description=meta.text("description"),
        argument_hint=meta.text("argument-hint"),
        source=path,
        scope=scope,
    )


def _read_regular(path: Path) -> bytes:
    """At most one byte over the cap of a regular file. A FIFO planted under a
    command name would block the reader (and the TUI's start) forever."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _BadCommand(f"cannot read: {exc.strerror}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _BadCommand("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise _BadCommand(f"cannot read: {exc.strerror}") from exc
    finally:
        os.close(fd)
