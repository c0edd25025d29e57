"""grep: regular-expression search over a file or a tree.

The pattern is checked with Python ``re`` (its syntax and its error messages are
the contract) and run with the ``regex`` package: ``re`` holds the GIL and has
no timeout, so one backtracking pattern over a hostile line would freeze the
whole process (event loop and TUI included). ``regex`` matches with the GIL
released and stops at a deadline; a file the pattern is too slow on is skipped
with a note. ``regex`` is imported on the first search, never at start-up.

One cost escapes that timeout: ``regex`` builds its Boyer-Moore table for a
literal stretch on first use, holding the GIL, in time growing with the cube of
the stretch's length when it repeats (3000 ``b`` in a row: seconds; 10,000:
minutes). Patterns with a literal stretch over ``MAX_LITERAL_RUN`` are refused.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import threading
import time
from pathlib import Path
from re import (  # re's own parse tree: what is literal
    _constants as re_constants,  # pyright: ignore[reportAttributeAccessIssue]
)
from re import _parser as re_parser  # pyright: ignore[reportAttributeAccessIssue]
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import (
    BinaryFile,
    Entry,
    ToolFailure,
    Walker,
    WalkFilter,
    decode_text,
    displayer,
    guarded,
    read_filter,
    run_reader,
    services,
    split_lines,
    suggest_missing,
)
from reasonix_core.tool.builtin.specs import GREP as SPEC
from reasonix_core.tool.builtin.specs import (
    MAX_LINE_CHARS,
    MAX_MATCHES,
    MAX_OUTPUT_BYTES,
    SpecifiedTool,
)
from reasonix_core.tool.fs_walk import FILE_FLAGS
from reasonix_core.tool.ignore import GlobPattern, expand_braces, names_matching
from reasonix_core.tool.ledger import FS_NOT_FOUND
from reasonix_core.tool.sandbox import SandboxPolicy

if TYPE_CHECKING:
    import regex

MAX_FILE_BYTES = 16 << 20
TIME_BUDGET_SECONDS = 30.0
# When the search budget runs out, the walk may go on listing (not reading) for
# this share of it, to count the files left.
COUNT_BUDGET_SHARE = 1 / 6
# Matching time one file may take (whole-text prefilter plus every line);
# past it the file is skipped: only a pathological pattern gets near it.
PATTERN_BUDGET_SECONDS = 2.0
# Longest stretch of literal characters a pattern may hold (see the module doc):
# at most a fraction of a second of table building with the GIL held.
MAX_LITERAL_RUN = 1000


class GrepArgs(BaseModel):
    model_config = ARGS_CONFIG

    pattern: str = Field(min_length=1, max_length=10_000)
    path: str | None = Field(default=None, min_length=1)
    glob: str | None = Field(default=None, min_length=1, max_length=4096)
    case_insensitive: bool = False


class _FileFilter:
    """The ``glob`` argument: basename match without ``/``, else relative path."""

    def __init__(self, pattern: str) -> None:
        self.patterns = [GlobPattern(p) for p in expand_braces(pattern)]
        self.mentions_hidden = any(p.mentions_hidden for p in self.patterns)
        # Every pattern, basename or path, judges the file's own name last.
        self.wanted_names = names_matching(self.patterns)

    def accepts(self, parts: tuple[str, ...]) -> bool:
        for p in self.patterns:
            if len(p.segments) == 1 and p.segments[0] != "**":
                if p.match(parts[-1:]):
                    return True
            elif p.match(parts):
                return True
        return False


def _read_all(fd: int, size: int) -> bytes:
    """The bytes of the regular file open as ``fd``, ``size`` long when stat-ed:
    one read for a file that did not grow since."""
    first = os.read(fd, size + 1)
    if len(first) <= size:
        return first
    chunks = [first]
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


class _Search:
    def __init__(
        self,
        pattern: regex.Pattern[str],
        prefilter: bool,
        sandbox: SandboxPolicy,
        literal: str = "",
    ) -> None:
        self.pattern = pattern
        self.prefilter = prefilter
        self.literal = literal
        self.sandbox = sandbox
        self.out: list[str] = []
        self.bytes = 0
        self.matches = 0
        self.files_searched = 0
        self.files_done = 0  # files handled: searched, or skipped as binary or large
        self.files_matched = 0
        self.skipped_binary = 0
        self.skipped_large = 0
        self.too_slow: list[str] = []  # display paths the pattern ran out of budget on
        self.display = displayer(sandbox)
        self.full = False

    def search_file(self, path: Path) -> None:
        """Search the file at ``path``, following a symlink to what it names:
        what was opened is then judged against ``forbid_read``."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return
        self._search_open(fd, path, check_opened=True)

    def search_entry(self, entry: Entry) -> None:
        """Search a file the walk listed, opened through its directory's
        descriptor without following a symlink: the walk already judged that
        directory and this name, so nothing else can be reached by it."""
        if entry.is_symlink:
            self.search_file(entry.path)
            return
        try:
            fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.dir_fd)
        except OSError:  # gone, or swapped for a symlink since it was listed
            return
        self._search_open(fd, entry.text, check_opened=False)

    def _search_open(self, fd: int, path: Path | str, *, check_opened: bool) -> None:
        self.files_done += 1
        try:
            # What matters is the file actually opened (a name listed may have
            # been replaced since).
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode) or st.st_size == 0:
                return
            if check_opened and self.sandbox.opened_is_hidden(fd):
                return
            if st.st_size > MAX_FILE_BYTES:
                self.skipped_large += 1
                return
            data = _read_all(fd, st.st_size)
        except OSError:
            return
        finally:
            os.close(fd)
        try:
            text = decode_text(data)
        except BinaryFile:
            self.skipped_binary += 1
            return
        self.files_searched += 1
        if "\r\n" in text:
            text = text.replace("\r\n", "\n")
        hit = False
        deadline = time.monotonic() + PATTERN_BUDGET_SECONDS

        def found(subject: str) -> bool:
            # concurrent: the GIL is released while matching, so the event loop
            # runs on; the timeout raises TimeoutError once the file's budget is spent.
            timeout = max(deadline - time.monotonic(), 0.0)
            return self.pattern.search(subject, timeout=timeout, concurrent=True) is not None

        literal = self.literal
        if literal and literal not in text:
            return  # a text without the pattern's literal part cannot match
        try:
            if self.prefilter and not found(text):
                return
            display = self.display(path)
            for n, line in enumerate(split_lines(text), 1):
                if (literal and literal not in line) or not found(line):
                    continue
                hit = True
                if not self._add(display, n, line):
                    break
        except TimeoutError:
            # The matches already listed from this file stay: they are real.
            self.too_slow.append(self.display(path))
        finally:
            if hit:
                self.files_matched += 1

    def _add(self, display: str, n: int, line: str) -> bool:
        """List one matching line; False once the output is full."""
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"… [{len(line) - MAX_LINE_CHARS} more chars]"
        entry = f"{display}:{n}:{line}"
        size = len(entry.encode("utf-8", "replace")) + 1
        if self.matches >= MAX_MATCHES or self.bytes + size > MAX_OUTPUT_BYTES:
            self.full = True
            return False
        self.out.append(entry)
        self.bytes += size
        self.matches += 1
        return True


def grep_sync(
    target: Path,
    display: str,
    pattern: regex.Pattern[str],
    prefilter: bool,
    file_filter: _FileFilter | None,
    sandbox: SandboxPolicy,
    stop: threading.Event,
    hide: WalkFilter | None = None,
    literal: str = "",
) -> ToolResult:
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise ToolFailure(
            f"{FS_NOT_FOUND}: {display} does not exist{suggest_missing(target, sandbox)}",
            FS_NOT_FOUND,
        ) from None
    search = _Search(pattern, prefilter, sandbox, literal)
    timed_out = False
    walker: Walker | None = None
    total = 0  # files the walk offered, searched or not
    total_known = True
    if not stat_mod.S_ISDIR(st.st_mode):
        search.search_file(target)
        if search.skipped_binary:
            return ToolResult(text=f"{display} is a binary file; grep only searches text")
    else:
        deadline = time.monotonic() + TIME_BUDGET_SECONDS
        walker = Walker(
            root=target,
            sandbox=sandbox,
            include_hidden=file_filter.mentions_hidden if file_filter else False,
            want_name=file_filter.wanted_names if file_filter else None,
            hide=hide,
            stop=stop,
            # Past the search budget the walk goes on a little, listing only, so
            # the note can say how much was left.
            time_budget=TIME_BUDGET_SECONDS * (1 + COUNT_BUDGET_SHARE),
        )
        for entry in walker:
            if entry.is_dir:
                continue
            if entry.is_symlink and not os.path.isfile(entry.path):
                continue
            if file_filter is not None and not file_filter.accepts(entry.parts):
                continue
            total += 1
            if timed_out:
                continue
            search.search_entry(entry)
            if search.full:
                break
            if time.monotonic() >= deadline:
                timed_out = True
        total_known = not walker.truncated
        timed_out = timed_out or walker.truncated

    notes: list[str] = []
    if search.full:
        notes.append(
            f"… results capped at {MAX_MATCHES} matches / {MAX_OUTPUT_BYTES // 1024} KiB; "
            "narrow the pattern, path or glob to see the rest"
        )
    if timed_out:
        of = f"{total:,}" if total_known else f"at least {total:,}"
        notes.append(
            f"… search stopped early (time or size budget, {TIME_BUDGET_SECONDS:.0f} s) after "
            f"{search.files_done:,} of {of} files; results are incomplete - narrow the path "
            "or glob"
        )
    if search.too_slow:
        notes.append(_too_slow_note(search.too_slow))
    skipped = []
    if search.skipped_binary:
        skipped.append(f"{search.skipped_binary} binary")
    if search.skipped_large:
        skipped.append(f"{search.skipped_large} larger than {MAX_FILE_BYTES >> 20} MiB")
    meta: dict[str, Any] = {
        "matches": search.matches,
        "files_searched": search.files_searched,
        "capped": search.full,
    }
    if timed_out and not search.full:
        meta["files_done"] = search.files_done
        meta["files_total"] = total
        meta["files_total_known"] = total_known
    if search.too_slow:
        meta["too_slow"] = len(search.too_slow)
    if not search.out:
        text = (
            f"no matches for /{pattern.pattern}/ in {display} "
            f"({search.files_searched} file{'s' if search.files_searched != 1 else ''} searched"
        )
        if skipped:
            text += "; skipped " + ", ".join(skipped) + " files"
        text += ")"
        if walker is not None and walker.skipped_ignored:
            text += f"; {walker.skipped_ignored} gitignored entries were not searched"
        return ToolResult(text="\n".join([text, *notes]), meta=meta)
    if skipped:
        notes.append("(skipped " + ", ".join(skipped) + " files)")
    return ToolResult(text="\n".join(search.out + notes), meta=meta)


def _too_slow_note(paths: list[str]) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (
        f"… pattern too slow on {shown}; skipped after {PATTERN_BUDGET_SECONDS:g} s "
        f"{'each ' if len(paths) > 1 else ''}- simplify the pattern (avoid nested or "
        "overlapping repeats such as (a+)+ or (a|aa)*)"
    )


_SYNTAX_HINT = "(Python re syntax; escape literal characters such as ( [ . * with a backslash)"


def _invalid(pattern: str, exc: Exception) -> ToolResult:
    pos = getattr(exc, "pos", None)
    where = f" at position {pos}" if pos is not None else ""
    msg = getattr(exc, "msg", None) or str(exc)
    return ToolResult.error(
        f"invalid regular expression {pattern!r}: {msg}{where} {_SYNTAX_HINT}",
        code="INVALID_REGEX",
    )


_Run = tuple[int, int, int, bool]  # (leading run, longest run, trailing run, all literal)
_TRANSPARENT = (re_constants.SUBPATTERN, re_constants.ATOMIC_GROUP)
_REPEATS = (re_constants.MAX_REPEAT, re_constants.MIN_REPEAT, re_constants.POSSESSIVE_REPEAT)


def _literal_runs(items: Any) -> _Run:
    """Literal runs of a parsed sequence, counting groups and ``{1}`` repeats as
    transparent: ``regex`` joins literals across them into one string."""
    lead = best = cur = 0
    pure = True
    for op, av in items:
        if op is re_constants.LITERAL:
            piece: _Run = (1, 1, 1, True)
        elif op in _TRANSPARENT:
            piece = _literal_runs(av[-1] if op is re_constants.SUBPATTERN else av)
        elif op in _REPEATS and av[0] == av[1] == 1:
            piece = _literal_runs(av[2])
        else:
            inner = 0
            if op in _REPEATS:
                inner = _literal_runs(av[2])[1]
            elif op is re_constants.BRANCH:
                inner = max(_literal_runs(alt)[1] for alt in av[1])
            elif op in (re_constants.ASSERT, re_constants.ASSERT_NOT):
                inner = _literal_runs(av[1])[1]
            elif op is re_constants.GROUPREF_EXISTS:
                inner = max(_literal_runs(alt)[1] for alt in av[1:] if alt is not None)
            piece = (0, inner, 0, False)
        p_lead, p_best, p_trail, p_pure = piece
        best = max(best, p_best, cur + p_lead)
        if p_pure:
            cur += p_lead
        else:
            if pure:
                lead = cur + p_lead
            pure = False
            cur = p_trail
    best = max(best, cur)
    return (cur if pure else lead), best, cur, pure


def required_literal(pattern: str, case_insensitive: bool) -> str:
    """The longest run of literal characters every match of ``pattern`` holds
    ("" when none is known): a text without it is skipped without running the
    pattern, whose every call costs a timeout's set-up (as grep tools do).

    Only the top-level sequence counts (a branch, a repeat or an optional
    group may do without its literals), and only for case-sensitive patterns
    (case folding has surprises: ``K`` matches the Kelvin sign)."""
    flags = re.MULTILINE | (re.IGNORECASE if case_insensitive else 0)
    try:
        parsed = re_parser.parse(pattern, flags)
    except (re.error, RecursionError, OverflowError, ValueError):
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best = run = ""
    for op, av in parsed:
        if op is re_constants.LITERAL:
            run += chr(av)
            continue
        best = max(best, run, key=len)
        run = ""
    return max(best, run, key=len)


def _compile(pattern: str, case_insensitive: bool) -> regex.Pattern[str] | ToolResult:
    """The search pattern, or the error result for one that does not compile.

    ``re`` judges the syntax, so what it accepts and its error messages stay
    the contract (``regex`` alone would also take ``\\p{L}``, ``(?|...)`` and
    more); ``regex`` then compiles it for the search.
    """
    flags = re.IGNORECASE if case_insensitive else 0
    try:
        # MULTILINE: the same pattern also serves as a whole-file prefilter.
        re.compile(pattern, flags | re.MULTILINE)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        return _invalid(pattern, exc)
    try:
        longest = _literal_runs(re_parser.parse(pattern, flags | re.MULTILINE))[1]
    except RecursionError:  # deep nesting re took: bound it by the whole length
        longest = len(pattern)
    if longest > MAX_LITERAL_RUN:
        return ToolResult.error(
            f"pattern too long to search: it holds {longest} literal characters in a row; "
            f"grep takes at most {MAX_LITERAL_RUN} - search for a shorter distinctive part",
            code="PATTERN_TOO_LONG",
        )
    import regex  # lazily: only a search needs it

    # regex's default VERSION0 follows re's semantics; IGNORECASE and MULTILINE
    # have the same values in both modules.
    try:
        return regex.compile(pattern, flags | regex.MULTILINE)
    except (regex.error, RecursionError, OverflowError, ValueError) as exc:
        return _invalid(pattern, exc)


class Grep(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: GrepArgs = validate_args(GrepArgs, args)
        sandbox, _ = services(ctx)
        compiled = _compile(a.pattern, a.case_insensitive)
        if isinstance(compiled, ToolResult):
            return compiled
        # The whole-text prefilter is sound unless the pattern anchors on \A / \Z.
        prefilter = not any(esc in a.pattern for esc in ("\\A", "\\Z", "\\z"))
        file_filter = _FileFilter(a.glob) if a.glob else None
        literal = required_literal(a.pattern, a.case_insensitive)
        hide = read_filter(ctx, self.name)

        async def body() -> ToolResult:
            target = sandbox.check_read(a.path or ".")
            display = sandbox.display(target)
            return await run_reader(
                lambda stop: grep_sync(
                    target,
                    display,
                    compiled,
                    prefilter,
                    file_filter,
                    sandbox,
                    stop,
                    hide,
                    literal,
                )
            )

        return await guarded(body, sandbox)
