"""Finding and reading ``SKILL.md`` folders.

Four roots, highest precedence first (:mod:`reasonix_core.skills.roots`; a
name found again later is hidden, with a notice naming both files):

1. ``$REASONIX_HOME/skills``  (``~/.reasonix/skills``)
2. ``~/.claude/skills``
3. ``<workspace>/.reasonix/skills``
4. ``<workspace>/.claude/skills``

(3 and 4 in every folder from the git root down to the workspace, the deeper first.)

What a hostile folder cannot do (docs/SKILLS.md): a project root that links out
of the workspace is not read; no skill folder or ``SKILL.md`` is read through a
link that leads out of its root (the path is walked by directory descriptor,
:mod:`reasonix_core.tool.fs_walk`, and the file opened where the walk ended, so
a link swapped in meanwhile cannot redirect the read); FIFOs, devices, files
over :data:`MAX_SKILL_BYTES`, text that is not UTF-8 or holds NUL bytes, bad
front matter and invalid names are reported and skipped. Loading never raises.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from reasonix_core.command.custom import LoadProblem
from reasonix_core.command.frontmatter import FrontMatter, FrontMatterError, split_front_matter
from reasonix_core.fsutil import within
from reasonix_core.permission.summary import visible
from reasonix_core.project import project_folders
from reasonix_core.skills.model import RunAs, Skill
from reasonix_core.skills.roots import SkillRoot, skill_roots
from reasonix_core.tool.fs_walk import PathUnusable, locate, open_final

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 128 * 1024
MAX_SKILLS_PER_ROOT = 500
# Claude Code's documented limits: a name of at most 64 characters, a
# description of at most 1024.
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A parsed ``SKILL.md``: the skill, and how it may be invoked (Claude Code's
    ``argument-hint``, ``disable-model-invocation`` and ``user-invocable``)."""

    skill: Skill
    argument_hint: str = ""
    model_invocable: bool = True
    user_invocable: bool = True


@dataclass(frozen=True, slots=True)
class FoundSkill:
    """A skill file and where to read it again: the physical root and its folder name."""

    file: SkillFile
    root: Path
    folder: str
    label: str

    @property
    def skill(self) -> Skill:
        return self.file.skill


class SkillFileError(Exception):
    """A ``SKILL.md`` that cannot be used; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def discover(
    workspace: Path | None, home: Path | None, user_home: Path | None
) -> tuple[list[FoundSkill], list[LoadProblem]]:
    """Every usable skill (first root wins a name), sorted by name, and the
    problems met on the way (skipped files, warnings, hidden duplicates)."""
    problems: list[LoadProblem] = []
    by_name: dict[str, FoundSkill] = {}
    seen_roots: set[Path] = set()
    # A project's skills folders must stay inside the project: its git root (or the
    # workspace outside a repository).
    inside = project_folders(workspace)[0] if workspace is not None else None
    for root in skill_roots(workspace, home, user_home):
        physical = _physical_root(root, inside if root.scope == "project" else None, problems)
        # One folder reached twice (a workspace that is the home directory) is read once.
        if physical is None or physical in seen_roots:
            continue
        seen_roots.add(physical)
        for found in _load_root(physical, root.label, problems):
            name = found.skill.name
            if name in by_name:
                winner = by_name[name]
                problems.append(
                    LoadProblem(
                        path=found.skill.path,
                        message=f"skill {name!r} is hidden by {winner.skill.path} "
                        f"({winner.label} comes first)",
                    )
                )
                continue
            by_name[name] = found
    return sorted(by_name.values(), key=lambda f: f.skill.name), problems


def read_skill(root: Path, folder: str, problems: list[LoadProblem] | None = None) -> SkillFile:
    """Read ``<root>/<folder>/SKILL.md`` (``root`` physical) and parse it.

    Raises :class:`SkillFileError`. Warnings that do not stop the skill from
    loading are appended to ``problems``.
    """
    data, path = _read_contained(root, folder)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFileError("not valid UTF-8 text") from None
    if "\x00" in text:
        raise SkillFileError("contains NUL bytes (not a text file)")
    try:
        meta, body = split_front_matter(text.replace("\r\n", "\n"))
    except FrontMatterError as exc:
        raise SkillFileError(exc.message, exc.line) from None
    body = body.strip("\n")
    if not body.strip():
        raise SkillFileError("the skill has no instructions (empty body)", meta.body_line)
    name = meta.text("name").strip() or folder
    if len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name):
        raise SkillFileError(
            f"invalid skill name {name[:80]!r}: use lowercase letters, digits, '-' and '_' "
            f"(at most {MAX_NAME_CHARS})",
            meta.line("name"),
        )
    description = _description(meta, body, path, problems)
    skill = Skill(
        name=name,
        description=description,
        body=body,
        path=path,
        run_as=_run_as(meta),
        model=meta.text("model").strip() or None,
        effort=meta.text("effort").strip() or None,
        read_only=_flag(meta, "read-only"),
        allowed_tools=_tool_list(meta),
    )
    return SkillFile(
        skill=skill,
        argument_hint=_hint(meta),
        model_invocable=not _flag(meta, "disable-model-invocation"),
        user_invocable=_flag(meta, "user-invocable", default=True),
    )


def _description(
    meta: FrontMatter, body: str, path: Path, problems: list[LoadProblem] | None
) -> str:
    """The skill's description: the front matter's, else the body's first paragraph,
    shortened to MAX_DESCRIPTION_CHARS; each fallback is a warning in ``problems``."""
    # One line, and nothing a terminal would not show as itself (the / menu shows it).
    description = visible(" ".join(meta.text("description").split()))
    warn = problems.append if problems is not None else (lambda _p: None)
    if not description:
        description = visible(_first_paragraph(body))
        warn(
            LoadProblem(
                path=path,
                message=f"line {meta.line('description') or 1}: no description; the first "
                "paragraph of the body is used (the model picks a skill by its description)",
            )
        )
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
        warn(
            LoadProblem(
                path=path,
                message=f"line {meta.line('description')}: description longer than "
                f"{MAX_DESCRIPTION_CHARS} characters, shortened",
            )
        )
    return description


def _physical_root(
    root: SkillRoot, inside: Path | None, problems: list[LoadProblem]
) -> Path | None:
    """The root's physical path, or None when it is absent or refused."""
    try:
        with locate(str(root.path), Path("/")) as located:
            physical = located.path
            if located.missing:
                return None
    except (OSError, PathUnusable):
        return None
    if not os.path.isdir(physical):
        return None
    if inside is not None and not within(str(physical), str(inside)):
        # A repository's .claude/skills -> ~/.ssh would offer the user's files as skills.
        problems.append(LoadProblem(path=root.path, message="links out of the project; not read"))
        return None
    return physical


def _load_root(physical: Path, label: str, problems: list[LoadProblem]) -> list[FoundSkill]:
    try:
        names = sorted(os.listdir(physical))
    except OSError as exc:
        problems.append(LoadProblem(path=physical, message=f"cannot list: {exc.strerror}"))
        return []
    found: list[FoundSkill] = []
    seen = 0
    for folder in names:
        if folder.startswith(".") or not _is_folder(physical / folder):
            continue
        seen += 1
        if seen > MAX_SKILLS_PER_ROOT:
            # Start-up reads every SKILL.md: a folder of 100,000 would stall it.
            problems.append(
                LoadProblem(
                    path=physical,
                    message=f"more than {MAX_SKILLS_PER_ROOT} skill folders; {folder!r} "
                    "and the folders after it (by name) are not read",
                )
            )
            break
        skill_file = physical / folder / SKILL_FILE
        try:
            parsed = read_skill(physical, folder, problems)
        except SkillFileError as exc:
            where = f"line {exc.line}: " if exc.line is not None else ""
            problems.append(LoadProblem(path=skill_file, message=f"{where}{exc.message}; skipped"))
            continue
        found.append(FoundSkill(parsed, physical, folder, label))
    return found


def _is_folder(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _read_contained(root: Path, folder: str) -> tuple[bytes, Path]:
    """At most one byte over the cap of ``<root>/<folder>/SKILL.md``, read from
    the descriptor the walk checked; a link out of ``root`` is refused."""
    shown = root / folder / SKILL_FILE
    try:
        located = locate(str(shown), root)
    except PathUnusable:
        raise SkillFileError("the folder name is not valid text") from None
    except OSError as exc:
        raise SkillFileError(f"cannot read: {exc.strerror}") from None
    with located:
        if not within(str(located.path), str(root)):
            raise SkillFileError("links out of its skills folder; not read")
        try:
            fd = open_final(located)
        except OSError as exc:
            raise SkillFileError(f"cannot read: {exc.strerror}") from None
    if fd is None:
        raise SkillFileError(f"no {SKILL_FILE} in the folder")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkillFileError("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        raise SkillFileError(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_SKILL_BYTES:
        raise SkillFileError(f"larger than {MAX_SKILL_BYTES // 1024} KiB")
    return data, shown


def _first_paragraph(body: str) -> str:
    for paragraph in body.split("\n\n"):
        lines = [ln for ln in paragraph.splitlines() if ln.strip() and not ln.startswith("#")]
        if lines:
            return " ".join(" ".join(lines).split())
    raise SkillFileError("no description and no paragraph to take one from")


def _hint(meta: FrontMatter) -> str:
    # ``argument-hint: [file]`` is a YAML list; Claude Code shows it as written.
    entry = meta.entries.get("argument-hint")
    if entry is None:
        return ""
    value = entry.value
    return value.strip() if isinstance(value, str) else "[" + ", ".join(value) + "]"


def _run_as(meta: FrontMatter) -> RunAs:
    # Claude Code spells a skill that runs in its own context ``context: fork``.
    if "runas" not in meta and "run-as" not in meta:
        return "subagent" if meta.text("context").strip().lower() == "fork" else "inline"
    key = "runas" if "runas" in meta else "run-as"
    value = meta.text(key).strip().lower()
    if value not in ("inline", "subagent"):
        raise SkillFileError(
            f"runAs must be 'inline' or 'subagent', not {value[:40]!r}", meta.line(key)
        )
    return "subagent" if value == "subagent" else "inline"


def _flag(meta: FrontMatter, key: str, default: bool = False) -> bool:
    if key not in meta:
        return default
    value = meta.text(key).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SkillFileError(f"{key} must be true or false, not {value[:40]!r}", meta.line(key))


def _tool_list(meta: FrontMatter) -> tuple[str, ...] | None:
    """``allowed-tools`` as Claude Code writes it: a list, or one string of names
    separated by commas or spaces (``Read, Grep`` / ``Read Bash(git diff *)``)."""
    entry = meta.entries.get("allowed-tools")
    if entry is None:
        return None
    items = entry.value if isinstance(entry.value, tuple) else (entry.value,)
    names: list[str] = []
    for item in items:
        names.extend(_split_tools(item))
    return tuple(dict.fromkeys(names))


def _split_tools(text: str) -> list[str]:
    """Split on commas and blanks outside parentheses (``Bash(git diff *)`` is one)."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or ch.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        out.append("".join(current))
    return out
