"""Glob patterns in permission rules: ``Bash(npm run *)`` commands and ``Edit(src/**)``
paths, and resolving a rule's path against the workspace. Pure; used by
:mod:`reasonix_core.permission.rules`."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

GLOB_CHARS = frozenset("*?")


def command_glob(pattern: str) -> re.Pattern[str]:
    """``*`` matches anything (spaces and ``/`` included), ``?`` one character.

    As in :mod:`fnmatch`, a star followed by a fixed run and another star is an
    atomic lazy group: one ``.*`` per star backtracks polynomially, and a
    project's deny rules (which apply untrusted) are tried on every command, so
    ``Bash(*a*a*…*b)`` against a long line hung the run."""
    pieces: list[str | None] = []  # None: a star
    for ch in pattern:
        if ch == "*":
            if not pieces or pieces[-1] is not None:
                pieces.append(None)
        elif ch == "?":
            pieces.append(".")
        else:
            pieces.append(re.escape(ch))
    out: list[str] = []
    i, n = 0, len(pieces)
    while i < n and pieces[i] is not None:
        out.append(pieces[i])  # type: ignore[arg-type]
        i += 1
    while i < n:
        i += 1  # the star
        fixed: list[str] = []
        while i < n and pieces[i] is not None:
            fixed.append(pieces[i])  # type: ignore[arg-type]
            i += 1
        if i == n:
            out.append(".*" + "".join(fixed))
        else:
            out.append("(?>.*?" + "".join(fixed) + ")")
    return re.compile("".join(out), re.DOTALL)


@functools.lru_cache(maxsize=256)
def _path_tokens(pattern: str) -> tuple[str, ...]:
    """:func:`path_glob`'s pattern as tokens: ``**/``, ``**``, ``*``, ``?``, a
    trailing ``/**`` (as ``"/**"``), or one literal character."""
    tail = pattern.endswith("/**")
    if tail:
        pattern = pattern[:-3]
    out: list[str] = []
    i = 0
    while i < len(pattern):
        for token in ("**/", "**", "*", "?"):
            if pattern.startswith(token, i):
                out.append(token)
                i += len(token)
                break
        else:
            out.append(pattern[i])
            i += 1
    if tail:
        out.append("/**")
    return tuple(out)


def path_glob_match(pattern: str, path: str) -> bool:
    """``path_glob(pattern).fullmatch(path)`` in O(pattern x path): the regex
    backtracks polynomially (``*a*a*…*b`` in a project's ``Read`` deny rule, which
    applies untrusted, hung a read of a long name)."""
    n = len(path)
    reachable = {0}
    for token in _path_tokens(pattern):
        if token == "**":  # .*
            reachable = set(range(min(reachable), n + 1))
        elif token == "**/":  # (?:.*/)?  : nothing, or anything up to and including a /
            low = min(reachable)
            reachable |= {q for q in range(low + 1, n + 1) if path[q - 1] == "/"}
        elif token == "/**":  # (?:/.*)?  : nothing, or a / and everything after it
            if any(p < n and path[p] == "/" for p in reachable):
                reachable = reachable | {n}
        elif token == "*":  # [^/]*
            grown: set[int] = set()
            for p in sorted(reachable):
                if p in grown:
                    continue
                q = p
                grown.add(q)
                while q < n and path[q] != "/":
                    q += 1
                    grown.add(q)
            reachable = grown
        elif token == "?":  # [^/]
            reachable = {p + 1 for p in reachable if p < n and path[p] != "/"}
        else:
            reachable = {p + 1 for p in reachable if p < n and path[p] == token}
        if not reachable:
            return False
    return n in reachable


@functools.lru_cache(maxsize=256)
def path_glob(pattern: str) -> re.Pattern[str]:
    """``**`` crosses directories, ``*`` and ``?`` stay within one name.

    The reference semantics of :func:`path_glob_match` (a differential test
    keeps them equal); rules match with that one, which cannot backtrack.

    A trailing ``/**`` also matches the directory itself.
    """
    tail = ""
    if pattern.endswith("/**"):
        pattern, tail = pattern[:-3], "(?:/.*)?"
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + tail, re.DOTALL)


def collapse_spaces(text: str) -> str:
    return " ".join(text.split())


def resolve_path(path: str, workspace: Path) -> str:
    """Absolute, symlink-free form of ``path`` (relative to ``workspace``)."""
    expanded = os.path.expanduser(path)
    joined = os.path.join(os.fspath(workspace), expanded)
    try:
        return os.path.realpath(joined)
    except (OSError, ValueError):
        # A NUL byte, or a component swapped mid-resolution (EINVAL): judge the
        # lexical form. The tool itself refuses such a path or re-resolves it by
        # descriptors, and a swap could as well come after this decision.
        return os.path.normpath(joined)


def resolve_pattern(pattern: str, workspace: Path) -> str:
    """Make a path glob absolute and resolve its literal (glob-free) leading part."""
    pattern = os.path.expanduser(pattern)
    if not os.path.isabs(pattern):
        pattern = os.path.join(os.path.realpath(workspace), pattern)
    pattern = os.path.normpath(pattern)
    parts = pattern.split("/")
    k = next((n for n, part in enumerate(parts) if GLOB_CHARS & set(part)), len(parts))
    literal = os.path.realpath("/".join(parts[:k]) or "/")
    rest = "/".join(parts[k:])
    if not rest:
        return literal
    return literal.rstrip("/") + "/" + rest
