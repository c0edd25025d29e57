"""Custom slash commands written as Markdown files.

``<project>/.reasonix/commands/review.md`` becomes ``/review`` and
``git/commit.md`` becomes ``/git:commit``. A file may start with a small
front matter block (``description``, ``argument-hint``; other keys, such as
Claude Code's ``allowed-tools``, are ignored); the body is a template
in which ``$ARGUMENTS`` is the whole argument string, ``$1 … $N`` are the
shell-split arguments and ``$$`` is a literal dollar. Project commands override
user commands of the same name. A file that cannot be read or parsed is
reported as a :class:`LoadProblem` and skipped; loading never raises.

Other agents' command folders are read as they are (:func:`command_dirs`):
Claude Code's ``.claude/commands`` and Codex's ``.codex/prompts`` (Markdown, the
same placeholders) and Gemini CLI's ``.gemini/commands/*.toml`` (``prompt`` with
``{{args}}``). On a name clash Reasonix's own ``.reasonix/commands`` wins, and the
loser is reported.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reasonix_core.command.frontmatter import (
    FrontMatter,
    FrontMatterEntry,
    FrontMatterError,
    split_front_matter,
)
from reasonix_core.fsutil import within
from reasonix_core.project import project_folders

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
    # Whose folder it came from: a Reasonix command wins a clash with another agent's.
    agent: Literal["gemini", "codex", "claude", "reasonix"] = "reasonix"

    def render(self, arguments: str) -> str:
        return expand_template(self.body, arguments)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadProblem:
    path: Path
    message: str
    # The command a clash is about ("" for a file that could not be loaded).
    name: str = ""


#: Codex's spelling of a custom prompt, ``/prompts:NAME``: the same command as ``/NAME``.
CODEX_PROMPTS_PREFIX = "prompts:"


def command_name(name: str, known: Callable[[str], bool]) -> str:
    """The custom command ``/name`` means: ``name`` itself when ``known`` (a
    ``.reasonix/commands/prompts/x.md`` is ``/prompts:x``), else Codex's
    ``prompts:NAME`` read as ``NAME``."""
    if known(name) or not name.startswith(CODEX_PROMPTS_PREFIX):
        return name
    short = name.removeprefix(CODEX_PROMPTS_PREFIX)
    return short if known(short) else name


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


@dataclass(frozen=True, slots=True)
class CommandDir:
    """A folder of command files, in the format of the agent that reads it."""

    path: Path
    scope: Literal["project", "user"]
    agent: Literal["gemini", "codex", "claude", "reasonix"]

    @property
    def pattern(self) -> str:
        return "*.toml" if self.agent == "gemini" else "*.md"


#: Each agent's command folder inside a project (and inside the user's home), lowest
#: precedence first: on a name clash Reasonix's own folder wins.
AGENT_DIRS: tuple[tuple[Literal["gemini", "codex", "claude", "reasonix"], str], ...] = (
    ("gemini", ".gemini/commands"),
    ("codex", ".codex/prompts"),
    ("claude", ".claude/commands"),
    ("reasonix", ".reasonix/commands"),
)


def command_dirs(project_root: Path | None, user_home: Path | None) -> list[CommandDir]:
    """Every folder commands are loaded from, lowest precedence first: the user's
    (``~/.gemini/commands``, ``~/.codex/prompts``, ``~/.claude/commands``, then
    ``<user_home>/commands``), then the project's, each agent's folder in every
    folder from the git root down to ``project_root``. A folder reached twice
    (``.claude/commands -> ../.reasonix/commands``) counts once, at its higher place."""
    dirs: list[CommandDir] = []
    if user_home is not None:
        home = Path(os.path.expanduser("~"))
        for agent, relative in AGENT_DIRS[:-1]:
            dirs.append(CommandDir(home / relative, "user", agent))
        dirs.append(CommandDir(user_home / "commands", "user", "reasonix"))
    if project_root is not None:
        folders = project_folders(project_root)
        for agent, relative in AGENT_DIRS:
            dirs.extend(CommandDir(folder / relative, "project", agent) for folder in folders)
    last: dict[str, int] = {os.path.realpath(d.path): i for i, d in enumerate(dirs)}
    return [d for i, d in enumerate(dirs) if last[os.path.realpath(d.path)] == i]


def load_custom_commands(
    project_root: Path | None, user_home: Path | None
) -> tuple[list[CustomCommand], list[LoadProblem]]:
    """Load the commands of every :func:`command_dirs` folder.

    Returns the commands sorted by name (a later folder wins on a clash: project over
    user, Reasonix's own over another agent's, which is reported) and the problems
    found on the way.
    """
    by_name: dict[str, CustomCommand] = {}
    problems: list[LoadProblem] = []
    root = project_folders(project_root)[0] if project_root is not None else None
    for directory in command_dirs(project_root, user_home):
        # A project's command is the repository's file: a link out of the project
        # (``review.md -> ~/.reasonix/.env``) would send that file as the prompt.
        inside = root if directory.scope == "project" else None
        for command in _load_dir(directory, problems, inside):
            earlier = by_name.get(command.name)
            if earlier is not None and earlier.agent != command.agent:
                problems.append(
                    LoadProblem(
                        path=earlier.source,
                        message=f"/{command.name} is taken by {command.source} "
                        f"({command.scope} {command.agent} command), which wins",
                        name=command.name,
                    )
                )
            by_name[command.name] = command
    return sorted(by_name.values(), key=lambda c: c.name), problems


def _load_dir(
    directory: CommandDir,
    problems: list[LoadProblem],
    inside: Path | None = None,
) -> list[CustomCommand]:
    folder = directory.path
    try:
        if not folder.is_dir():
            return []
        if inside is not None and not _within(folder, inside):
            problems.append(LoadProblem(path=folder, message="links out of the project"))
            return []
        files = sorted(folder.rglob(directory.pattern))
    except OSError as exc:
        problems.append(LoadProblem(path=folder, message=f"cannot list: {exc.strerror}"))
        return []
    commands = []
    for path in files:
        if inside is not None and not _within(path, inside):
            problems.append(LoadProblem(path=path, message="links out of the project"))
            continue
        try:
            commands.append(_load_file(directory, path))
        except _BadCommand as exc:
            problems.append(LoadProblem(path=path, message=str(exc)))
    return commands


def _within(path: Path, root: Path) -> bool:
    return within(os.path.realpath(path), os.path.realpath(root))


class _BadCommand(Exception):
    pass


def _load_file(directory: CommandDir, path: Path) -> CustomCommand:
    segments = path.relative_to(directory.path).with_suffix("").parts
    if not segments or not all(_NAME_SEGMENT.match(s) for s in segments):
        raise _BadCommand("invalid command name (use letters, digits, '-', '_', '.')")
    raw = _read_regular(path)
    if len(raw) > _MAX_BYTES:
        raise _BadCommand(f"larger than {_MAX_BYTES // 1024} KiB")
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise _BadCommand("not valid UTF-8") from exc
    if directory.agent == "gemini":
        meta, body = _gemini_command(text)
    else:
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
        scope=directory.scope,
        agent=directory.agent,
    )


def _gemini_command(text: str) -> tuple[FrontMatter, str]:
    """Gemini CLI's ``.toml`` command: ``prompt`` (required) and ``description``;
    ``{{args}}`` is the argument string (with none, the arguments are appended, as
    Gemini does). A ``$`` of the prompt stays a literal dollar here."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise _BadCommand(f"invalid TOML: {exc}") from None
    prompt, description = data.get("prompt"), data.get("description", "")
    if not isinstance(prompt, str):
        raise _BadCommand('no prompt = "..." string')
    if not isinstance(description, str):
        raise _BadCommand("description must be a string")
    body = prompt.replace("$", "$$").replace("{{args}}", "$ARGUMENTS")
    return FrontMatter({"description": FrontMatterEntry(description.strip(), 1)}), body


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
