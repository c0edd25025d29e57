"""A small ``.gitignore`` matcher and glob-segment helpers.

Supports what search tools need from gitignore(5): comments, blank lines,
escaped ``\\#`` / ``\\!`` / trailing ``\\ ``, negation (``!``), directory-only
patterns (trailing ``/``), anchored patterns (a leading or inner ``/``),
``*``, ``?``, ``[...]`` classes and ``**`` (leading ``**/``, trailing ``/**``
and inner ``/**/``), plus nested ``.gitignore`` files where a deeper file
overrides a shallower one and, within a file, the last matching line wins.

As in git, a path inside an ignored directory stays ignored: walkers prune
ignored directories, so negations cannot re-include their contents.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any


def _translate_class(pat: str, i: int) -> tuple[str, int] | None:
    """Translate a ``[...]`` class starting at ``pat[i] == '['``; None if unterminated."""
    j = i + 1
    if j < len(pat) and pat[j] in "!^":
        j += 1
    if j < len(pat) and pat[j] == "]":
        j += 1
    while j < len(pat) and pat[j] != "]":
        j += 1
    if j >= len(pat):
        return None
    body = pat[i + 1 : j]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    body = re.sub(r"([\\\[\]^])", r"\\\1", body)
    if negate:
        return "[^/" + body + "]", j + 1
    return "(?!/)[" + body + "]", j + 1


_STAR = object()


def translate_segment(seg: str) -> str:
    """Regex (no anchors) for one path segment: ``*``, ``?``, ``[...]``, ``\\x``."""
    out: list[Any] = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            while i < len(seg) and seg[i] == "*":
                i += 1
            out.append(_STAR)
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            cls = _translate_class(seg, i)
            if cls is None:
                out.append(re.escape(c))
            else:
                out.append(cls[0])
                i = cls[1]
                continue
        elif c == "\\" and i + 1 < len(seg):
            i += 1
            out.append(re.escape(seg[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return _join_stars(out)


def _join_stars(parts: list[Any]) -> str:
    """Join translated pieces; each ``*`` followed by a fixed run (and another
    ``*``) becomes an atomic lazy group, as :mod:`fnmatch` does: a plain
    ``[^/]*`` per star backtracks polynomially, so ``a*a*a*…b`` from a
    repository's ``.gitignore`` or a glob argument against a long name never
    finished."""
    out: list[str] = []
    i, n = 0, len(parts)
    while i < n and parts[i] is not _STAR:
        out.append(parts[i])
        i += 1
    while i < n:
        i += 1  # the star
        fixed: list[str] = []
        while i < n and parts[i] is not _STAR:
            fixed.append(parts[i])
            i += 1
        if i == n:  # the last star: greedy, the fixed run (if any) anchors at the end
            out.append("[^/]*" + "".join(fixed))
        else:
            out.append("(?>[^/]*?" + "".join(fixed) + ")")
    return "".join(out)


@lru_cache(maxsize=1024)
def segment_regex(seg: str) -> re.Pattern[str]:
    try:
        return re.compile(translate_segment(seg) + r"\Z", re.DOTALL)
    except re.error:  # e.g. a reversed range [z-a]: match the text literally
        return re.compile(re.escape(seg) + r"\Z", re.DOTALL)


def has_magic(seg: str) -> bool:
    return any(c in seg for c in "*?[")


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    pattern: str
    negated: bool
    dir_only: bool
    # Segment globs, and _ANY_DIRS / _SOME_DIRS for ``**``.
    segments: tuple[str, ...]
    # A rule of one unanchored name (``*.log``, ``build/``) judges only the last
    # path part: its regex, so a walk tests each entry with one match.
    name_only: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        single = len(self.segments) == 2 and self.segments[0] == _ANY_DIRS
        name = self.segments[-1] if single else None
        rx = segment_regex(name) if name is not None and not name.startswith("\x00") else None
        object.__setattr__(self, "name_only", rx)

    def matches(self, rel: str, is_dir: bool) -> bool:
        return self.matches_parts(rel.split("/"), is_dir)

    def matches_parts(self, parts: Sequence[str], is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return _match_segments(self.segments, parts)


# ``**`` as zero or more directories, and a trailing ``/**`` (one or more).
# A NUL never occurs in a pattern line's segment text.
_ANY_DIRS = "\x00**"
_SOME_DIRS = "\x00**+"


def _match_segments(segments: Sequence[str], parts: Sequence[str]) -> bool:
    """Match path ``parts`` against ``segments`` in O(segments x parts): a whole-path
    regex with one ``(?:.*/)?`` per ``**`` backtracks polynomially, so a repository's
    ``a/**/a/**/…/b`` line never finished on a deep path."""
    n = len(parts)
    reachable = {0}
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if i == last and seg not in (_ANY_DIRS, _SOME_DIRS):
            # Only the final part can complete the match: one regex, not one per
            # reachable position (the common ``**/name`` rule tests the basename).
            return n - 1 in reachable and segment_regex(seg).match(parts[n - 1]) is not None
        if seg == _ANY_DIRS:
            reachable = set(range(min(reachable), n + 1))
        elif seg == _SOME_DIRS:
            reachable = set(range(min(reachable) + 1, n + 1))
        else:
            rx = segment_regex(seg)
            reachable = {p + 1 for p in reachable if p < n and rx.match(parts[p]) is not None}
        if not reachable:
            return False
    return n in reachable


def _rule_segments(body: str, anchored: bool) -> tuple[str, ...] | None:
    """The segments of a rule body (None when a segment is malformed, as git ignores it)."""
    parts = body.split("/")
    out: list[str] = [] if anchored or body.startswith("**") else [_ANY_DIRS]
    for idx, part in enumerate(parts):
        if part == "**":
            last = idx == len(parts) - 1
            out.append(_SOME_DIRS if last and len(parts) > 1 else _ANY_DIRS)
            continue
        try:
            re.compile(translate_segment(part))
        except re.error:
            return None
        out.append(part)
    return tuple(out)


def parse_rule(line: str) -> IgnoreRule | None:
    """Parse one ``.gitignore`` line; None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are ignored unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line:
        return None
    negated = False
    if line.startswith("!"):
        negated = True
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/") if dir_only else line
    if not line:
        return None
    anchored = "/" in line
    body = line.lstrip("/") if line.startswith("/") else line
    if not body:
        return None
    segments = _rule_segments(body, anchored)
    if segments is None:  # git ignores malformed patterns too
        return None
    return IgnoreRule(pattern=line, negated=negated, dir_only=dir_only, segments=segments)


def parse_gitignore(text: str) -> list[IgnoreRule]:
    rules = []
    for line in text.splitlines():
        rule = parse_rule(line)
        if rule is not None:
            rules.append(rule)
    return rules


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ignore file, relative to the directory ``base``."""

    base: Path
    rules: tuple[IgnoreRule, ...]
    # ``base`` as text ending in "/": paths are judged as text, a walk's hot path.
    _prefix: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_prefix", str(self.base).rstrip("/") + "/")

    def decide(self, path: Path | str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included, None = no rule matched.

        ``path`` is absolute and normal (no ``.``, ``..`` or doubled ``/``),
        as a walker builds it."""
        text = os.fspath(path)
        if not text.startswith(self._prefix) or len(text) == len(self._prefix):
            return None
        rel = text[len(self._prefix) :]
        parts: list[str] | None = None
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            by_name = rule.name_only
            if by_name is not None:
                hit = by_name.match(rel[rel.rfind("/") + 1 :]) is not None
            else:
                if parts is None:
                    parts = rel.split("/")
                hit = _match_segments(rule.segments, parts)
            if hit:
                return not rule.negated
        return None


def load_ignore_file(directory: Path, name: str = ".gitignore") -> IgnoreFile | None:
    file = directory / name
    try:
        if not file.is_file() or file.stat().st_size > 1 << 20:
            return None
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    rules = parse_gitignore(text)
    return IgnoreFile(directory, tuple(rules)) if rules else None


class IgnoreMatcher:
    """A stack of ignore files from the outermost directory to the current one."""

    __slots__ = ("_files",)

    def __init__(self, files: Sequence[IgnoreFile] = ()) -> None:
        self._files: tuple[IgnoreFile, ...] = tuple(files)

    @classmethod
    def for_directory(cls, directory: Path, stop_at: Path | None = None) -> IgnoreMatcher:
        """Matcher for walking ``directory``, including the ``.gitignore`` files of
        its ancestors up to the enclosing git repository root (a directory
        holding ``.git``) or ``stop_at``, whichever comes first, plus that
        repository's ``.git/info/exclude``."""
        chain: list[Path] = []
        current = directory
        repo_root: Path | None = None
        for _ in range(64):
            chain.append(current)
            if (current / ".git").exists():
                repo_root = current
                break
            if current == stop_at or current.parent == current:
                break
            current = current.parent
        inside = stop_at is not None and (directory == stop_at or stop_at in directory.parents)
        if repo_root is None and not inside:
            # Outside the workspace and not in a repository: only the directory itself.
            chain = [directory]
        files: list[IgnoreFile] = []
        if repo_root is not None:
            exclude = load_ignore_file(repo_root / ".git" / "info", "exclude")
            if exclude is not None:
                files.append(IgnoreFile(repo_root, exclude.rules))
        for d in reversed(chain):
            f = load_ignore_file(d)
            if f is not None:
                files.append(f)
        return cls(files)

    def child(self, directory: Path) -> IgnoreMatcher:
        """Matcher for the contents of ``directory`` (adds its ``.gitignore``)."""
        f = load_ignore_file(directory)
        if f is None:
            return self
        return IgnoreMatcher((*self._files, f))

    def is_ignored(self, path: Path | str, is_dir: bool) -> bool:
        for f in reversed(self._files):
            decision = f.decide(path, is_dir)
            if decision is not None:
                return decision
        return False

    def __bool__(self) -> bool:
        return bool(self._files)


class GlobPattern:
    """A slash-separated glob (``*``, ``?``, ``[...]``, ``**``) matched segment-wise.

    :meth:`match` tests a relative path; :meth:`could_descend` tells a walker
    whether a directory may contain matches, so the walk can be pruned.
    """

    def __init__(self, pattern: str) -> None:
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        # Collapse runs of ** and treat a**b as a*b.
        segs: list[str] = []
        for p in parts:
            if p == "**" and segs and segs[-1] == "**":
                continue
            segs.append(p)
        self.pattern = pattern
        self.segments: tuple[str, ...] = tuple(segs)
        self.mentions_hidden = any(s.startswith(".") for s in segs)

    def name_filter(self) -> re.Pattern[str] | None:
        """What a file's own name must match for the path to match, or None
        when any name may (the pattern ends in ``**``)."""
        if not self.segments or self.segments[-1] == "**":
            return None
        return segment_regex(self.segments[-1])

    def _seg(self, i: int, name: str) -> bool:
        return segment_regex(self.segments[i]).match(name) is not None

    def match(self, parts: Sequence[str]) -> bool:
        segs = self.segments
        if "**" not in segs:  # one part per segment: no search
            return len(parts) == len(segs) and all(
                self._seg(i, part) for i, part in enumerate(parts)
            )
        if len(segs) == 2 and segs[0] == "**":  # **/name: the name decides
            return bool(parts) and self._seg(1, parts[-1])
        memo: dict[tuple[int, int], bool] = {}

        def go(si: int, pi: int) -> bool:
            key = (si, pi)
            if key in memo:
                return memo[key]
            if si == len(segs):
                res = pi == len(parts)
            elif segs[si] == "**":
                res = go(si + 1, pi) or (pi < len(parts) and go(si, pi + 1))
            elif pi == len(parts):
                res = False
            else:
                res = self._seg(si, parts[pi]) and go(si + 1, pi + 1)
            memo[key] = res
            return res

        return go(0, 0)

    def could_descend(self, parts: Sequence[str]) -> bool:
        """Could something strictly below the directory ``parts`` match?"""
        segs = self.segments
        memo: dict[tuple[int, int], bool] = {}

        def go(si: int, pi: int) -> bool:
            key = (si, pi)
            if key in memo:
                return memo[key]
            if pi == len(parts):
                res = si < len(segs)
            elif si == len(segs):
                res = False
            elif segs[si] == "**":
                res = go(si + 1, pi) or go(si, pi + 1)
            else:
                res = self._seg(si, parts[pi]) and go(si + 1, pi + 1)
            memo[key] = res
            return res

        return go(0, 0)


def names_matching(patterns: Sequence[GlobPattern]) -> Callable[[str], bool] | None:
    """A check on a file's name that every path matching one of ``patterns``
    passes (a walk drops other files unseen), or None when any name may match."""
    filters = [p.name_filter() for p in patterns]
    if not filters or any(f is None for f in filters):
        return None
    matchers = [f.match for f in filters if f is not None]
    if len(matchers) == 1:
        only = matchers[0]
        return lambda name: only(name) is not None
    return lambda name: any(m(name) is not None for m in matchers)


def expand_braces(pattern: str, limit: int = 256) -> list[str]:
    """Expand ``{a,b}`` alternatives (nested allowed); unbalanced braces stay literal."""
    results: list[str] = []

    def go(p: str) -> None:
        if len(results) >= limit:
            return
        depth = 0
        start = -1
        for i, c in enumerate(p):
            if c == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif c == "}" and depth:
                depth -= 1
                if depth == 0:
                    inner = p[start + 1 : i]
                    options: list[str] = []
                    level = 0
                    cur = ""
                    for ch in inner:
                        if ch == "," and level == 0:
                            options.append(cur)
                            cur = ""
                            continue
                        if ch == "{":
                            level += 1
                        elif ch == "}":
                            level -= 1
                        cur += ch
                    options.append(cur)
                    if len(options) < 2:
                        continue
                    for opt in options:
                        go(p[:start] + opt + p[i + 1 :])
                    return
        results.append(p)

    go(pattern)
    return list(dict.fromkeys(results))
