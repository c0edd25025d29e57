"""A shell lexer for permission rules: what commands a bash line will run.

It evaluates nothing. It finds every simple command bash would run for a
line, the words of each (quotes removed), the leading ``FOO=1`` assignments,
the redirections, and the commands hidden inside other commands: command
substitution wherever bash expands it (unquoted words, double quotes,
unquoted heredoc bodies, ``${...}``, arithmetic ``$((...))`` / ``$[...]``),
process substitution, and the command a wrapper runs (``env``, ``sudo``,
``xargs``, ``timeout``, ``bash -c STR``, ``eval STR``, ``find -exec`` …).

The principle the rules build on: an allow rule may only cover what this
lexer fully understands. Anything it cannot see through is marked
(``ParsedCommand.complete`` false, or ``Segment.opaque``) so that only a bare
``Bash`` or an exact ``Bash=`` rule can allow it, while deny rules are checked
against every command that will actually run, in normalised form
(``Segment.forms``).

Stdlib only; no I/O.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from reasonix_core.permission.program_options import GIT_GLOBAL_VALUE_OPTIONS, program_effects

__all__ = [
    "HARMLESS_TARGETS",
    "ParsedCommand",
    "Redirect",
    "Segment",
    "normal_forms",
    "split_command",
]

#: Redirect targets that never change a file.
HARMLESS_TARGETS: frozenset[str] = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full"}
)
# Operators that open their target for writing (``<>`` opens read-write).
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
# Longest first so ``>>`` is not read as ``>``.
_REDIRECT_OPS: tuple[str, ...] = (
    "&>>",
    "&>",
    "<<<",
    "<<-",
    "<<",
    "<>",
    "<&",
    ">>",
    ">|",
    ">&",
    "<",
    ">",
)
# Nesting deeper than this (substitutions, wrappers, ``bash -c``) is not
# followed: the command is marked not understood instead of recursing on.
_MAX_DEPTH = 48


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection of a simple command.

    ``target`` is the target word with quotes removed, or None when it holds
    an expansion (``> $f``, ``> *.log``) whose value the lexer cannot know.
    """

    op: str
    fd: str
    target: str | None
    raw: str

    @property
    def writes(self) -> bool:
        """True when this redirection can create or change a file."""
        if self.op not in _REDIRECT_OPS:
            # A program's own option or script form (``sort -o``, ``find -fprint``).
            return self.target not in HARMLESS_TARGETS
        if self.op not in _WRITE_OPS:
            return False
        if self.op == ">&" and self.target is not None:
            # ``>&2`` / ``>&-`` duplicate or close a descriptor; ``>&file`` writes file.
            if self.target == "-" or self.target.isdigit():
                return False
        return self.target not in HARMLESS_TARGETS


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command bash will run.

    ``words``: the command's words with quotes removed, without its leading
    assignments, reserved words (``if``, ``!`` …) and redirections.
    ``raw``: the matching slice of the source text. ``assignments``: the
    leading ``NAME=value`` words (raw), which an allow rule has to name.
    ``redirects``: the command's redirections. ``forms``: normalised
    alternatives of the full words (program basename, ``rm`` flags) that deny
    and ask rules are also matched against. ``via``: for a command found
    inside another one (``env rm`` → ``rm``), how it was found; ``origin`` the
    full words of the outermost command it came from. ``opaque``: the command
    runs something the lexer cannot see (``eval "$x"``), so no prefix rule may
    cover it. ``program_glob``: the program word when it is a glob.
    """

    words: tuple[str, ...]
    raw: str
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    forms: tuple[tuple[str, ...], ...] = ()
    via: str = ""
    origin: tuple[str, ...] = ()
    opaque: bool = False
    # The program word when it is a glob (``/bin/r?``): deny rules whose
    # program it could match are checked as if it were that program.
    program_glob: str | None = None
    # A shell reading its script from stdin (``sh <<EOF``, ``echo cmd | bash``), judged
    # on the words' values: what that stdin holds is scanned as a command line too.
    stdin_script: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def full_words(self) -> tuple[str, ...]:
        """Assignments followed by the words: what an allow rule must name."""
        return self.assignments + self.words


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    command: str
    # Never empty: a blank command is one segment without words.
    segments: tuple[Segment, ...]
    # False when quotes, parentheses, substitutions or heredocs were left open,
    # or nesting went too deep.
    complete: bool = True

    @property
    def changes_directory(self) -> bool:
        """True when some command changes the directory later relative paths use."""
        return any(seg.words and _program(seg.words[0]) in _DIR_CHANGERS for seg in self.segments)

    @property
    def write_redirects(self) -> tuple[Redirect, ...]:
        """Every redirection in the line that can create or change a file."""
        return tuple(r for seg in self.segments for r in seg.redirects if r.writes)


_DIR_CHANGERS = frozenset({"cd", "pushd", "popd"})
_ASSIGN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_FD_VAR_RE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_RESERVED = frozenset(
    {
        "!",
        "{",
        "}",
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "time",
        "coproc",
    }
)
#: Bash's reserved words. A segment headed by one names no program (``for x in …``,
#: ``case``, ``[[ … ]]``); the ones a command may follow (``_RESERVED``) the lexer skips.
RESERVED_WORDS = _RESERVED | frozenset(
    {"for", "select", "case", "function", "esac", "in", "[[", "]]"}
)
_SPECIAL_PARAMS = frozenset("@*#?$!-0123456789_")


@dataclass(slots=True)
class _Word:
    value: str
    start: int
    end: int
    raw: str
    # Holds an expansion whose value is unknown here ($x, $(…), a glob).
    dynamic: bool = False
    # A redirection operator (the next word is its target).
    op: str | None = None
    fd: str = ""


@dataclass(slots=True)
class _SegBuilder:
    insert_at: int
    words: list[_Word] = field(default_factory=list)
    buf: list[str] | None = None
    wstart: int = 0
    dynamic: bool = False
    # Its command is a shell reading the script from stdin (``sh <<EOF``).
    stdin_script: bool = False
    # What it prints, when that is literal (``echo rm -rf x``), and what the
    # previous command of the pipeline printed into it.
    output: str | None = None
    piped_in: str | None = None


def _command_words(words: list[_Word]) -> tuple[list[_Word], list[_Word]]:
    """Skip reserved words (``time -p``, ``!``) and split ``X=1 cmd`` into its parts.

    Returns the assignments before the command and the command's own words.
    Assignments with no command after them are the command's words.
    """
    k = 0
    assignments: list[_Word] = []
    while k < len(words):
        w = words[k]
        if w.raw in _RESERVED and not assignments:
            k += 1
            if w.raw == "time" and k < len(words) and words[k].raw in ("-p", "--"):
                k += 1  # the time keyword's own option
            continue
        if _ASSIGN_RE.match(w.raw):
            j = k
            while j < len(words) and _ASSIGN_RE.match(words[j].raw):
                j += 1
            if j < len(words):  # a command follows the assignments
                assignments = words[k:j]
                k = j
                continue
        break
    return assignments, words[k:]


def _literal_output(words: list[_Word]) -> str | None:
    """What ``echo``/``printf`` with literal arguments prints (escapes read loosely)."""
    if not words or words[0].value not in ("echo", "printf") or any(w.dynamic for w in words):
        return None
    args = [w.value for w in words[1:]]
    if words[0].value == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args.pop(0)
    text = " ".join(args)
    return text.replace("\\n", "\n").replace("\\t", "\t").replace("%s", " ")


def _literal(value: str) -> _Word:
    return _Word(value, 0, 0, value)


def _target_value(target: _Word) -> str | None:
    """A redirection target's path, None when only running bash would know it."""
    if target.dynamic:
        return None
    if target.value.startswith("~") and not target.raw.startswith("~"):
        return "./" + target.value  # a quoted ~ is a plain name, not home
    return target.value


class _Scanner:
    """Scans one source string; nested sources (``bash -c STR``) get their own."""

    def __init__(self, src: str, depth: int = 0) -> None:
        self.s = src
        self.n = len(src)
        self.i = 0
        self.out: list[Segment] = []
        self.complete = True
        self.depth = depth
        # Pending heredocs: (delimiter, strip tabs, body is expanded, owner).
        self.heredocs: list[tuple[str, bool, bool, _SegBuilder]] = []
        # Literal values assigned earlier in the line (``x=rm; $x -rf y``).
        self.vars: dict[str, str] = {}

    # -- word / segment bookkeeping --------------------------------------
    def _start(self, seg: _SegBuilder) -> list[str]:
        if seg.buf is None:
            seg.buf = []
            seg.wstart = self.i
            seg.dynamic = False
        return seg.buf

    def _end_word(self, seg: _SegBuilder) -> None:
        if seg.buf is not None:
            raw = self.s[seg.wstart : self.i]
            seg.words.append(_Word("".join(seg.buf), seg.wstart, self.i, raw, seg.dynamic))
            seg.buf = None
            seg.dynamic = False

    def _finish(self, seg: _SegBuilder) -> None:
        self._end_word(seg)
        words, redirects, spans = self._take_redirects(seg.words)
        assignments, kept = _command_words(words)
        if not kept and not redirects:
            return
        if kept and not assignments:
            self._remember_assignments(kept)
        spans.extend((w.start, w.end) for w in kept)
        first = kept[0].start if kept else min(a for a, _ in spans)
        raw = self.s[first : max(b for _, b in spans)]
        top = _build_segment(
            kept, raw, tuple(a.raw for a in assignments), tuple(redirects), self.depth, self.vars
        )
        self.out[seg.insert_at : seg.insert_at] = top
        seg.stdin_script = any(seg_.stdin_script for seg_ in top)
        seg.output = _literal_output(kept)
        if seg.stdin_script:
            # bash <<< 'cmd', echo cmd | sh: the text is the script the shell runs.
            for r in redirects:
                if r.op == "<<<":
                    if r.target is None:
                        self.complete = False
                    else:
                        self._nested(r.target)
            if seg.piped_in is not None:
                self._nested(seg.piped_in)

    def _take_redirects(
        self, all_words: list[_Word]
    ) -> tuple[list[_Word], list[Redirect], list[tuple[int, int]]]:
        """Split a command's words from its redirections (each operator with its target).

        Returns the plain words, the redirections and the source spans the
        redirections cover.
        """
        words: list[_Word] = []
        redirects: list[Redirect] = []
        spans: list[tuple[int, int]] = []
        k = 0
        while k < len(all_words):
            w = all_words[k]
            if w.op is None:
                words.append(w)
                k += 1
                continue
            target = all_words[k + 1] if k + 1 < len(all_words) else None
            if target is None or target.op is not None:
                self.complete = False  # ``cmd >`` with nothing to redirect to
                redirects.append(Redirect(w.op, w.fd, None, w.raw))
                spans.append((w.start, w.end))
                k += 1
                continue
            value = _target_value(target)
            redirects.append(Redirect(w.op, w.fd, value, self.s[w.start : target.end]))
            spans.append((w.start, target.end))
            k += 2
        return words, redirects, spans

    def _remember_assignments(self, words: list[_Word]) -> None:
        """``x=rm`` on its own: later ``$x -rf y`` in the same line runs ``rm``."""
        for w in words:
            m = _ASSIGN_RE.match(w.raw)
            if m is None:
                return
            name = m.group(0).rstrip("+=").split("[")[0]
            if w.dynamic or m.group(1) is not None or m.group(0).endswith("+="):
                self.vars.pop(name, None)
            else:
                self.vars[name] = w.value[w.value.index("=") + 1 :]

    def _new(self) -> _SegBuilder:
        return _SegBuilder(insert_at=len(self.out))

    # -- scanning ---------------------------------------------------------
    def _peek(self, k: int = 1) -> str:
        j = self.i + k
        return self.s[j] if j < self.n else ""

    def scan(self, until: str | None) -> None:
        if self.depth >= _MAX_DEPTH:
            self.complete = False
            self.i = self.n
            return
        self.depth += 1
        try:
            self._scan(until)
        finally:
            self.depth -= 1

    def _scan(self, until: str | None) -> None:
        seg = self._new()
        while self.i < self.n:
            c = self.s[self.i]
            nxt = self._peek()
            if until is not None and c == until:
                self._finish(seg)
                self.i += 1
                return
            if c in " \t":  # not \r: bash reads it as part of a word
                self._end_word(seg)
                self.i += 1
            elif c in "\n;|&)" or (c == "(" and seg.buf is None):
                seg = self._control(seg, c, nxt)
            elif c == "#" and seg.buf is None:
                while self.i < self.n and self.s[self.i] != "\n":
                    self.i += 1
            else:
                self._word_part(seg, c, nxt)
        if until is not None:
            self.complete = False
        self._finish(seg)

    def _control(self, seg: _SegBuilder, c: str, nxt: str) -> _SegBuilder:
        """At ``\\n ; | & ( )``: end the command being read; return the one that follows."""
        if c == "&" and nxt == ">":
            self._redirect(seg)  # ``&>file``: a redirection, not a separator
            return seg
        if c == ")":
            # Unbalanced close at this level.
            self.complete = False
        self._finish(seg)
        if c == "(":
            return self._group(nxt)
        piped = seg.output if c == "|" and nxt != "|" else None
        seg = self._new()
        seg.piped_in = piped
        if c == "\n":
            self.i += 1
            self._read_heredocs()
        else:
            self.i += 2 if c + nxt in ("||", "|&", "&&") else 1
        return seg

    def _group(self, nxt: str) -> _SegBuilder:
        """At ``(`` between words: an arithmetic ``(( expr ))`` or a subshell."""
        seg = self._new()
        if nxt == "(" and self._try_arithmetic(seg, self.i + 2, ")"):
            return seg  # ``(( expr ))``: one word of this command
        # Subshell / group: its commands are segments of their own.
        self.i += 1
        self.scan(")")
        return self._new()

    def _word_part(self, seg: _SegBuilder, c: str, nxt: str) -> None:
        """At a character of a word: escapes, quotes, expansions, redirections, literals."""
        if c == "\\":
            if nxt == "\n":
                self.i += 2
            elif nxt:
                self._start(seg).append(nxt)
                self.i += 2
            else:
                self._start(seg).append(c)
                self.i += 1
        elif c == "'":
            buf = self._start(seg)
            end = self.s.find("'", self.i + 1)
            if end < 0:
                self.complete = False
                end = self.n
            buf.append(self.s[self.i + 1 : end])
            self.i = end + 1
        elif c == '"':
            self._start(seg)
            self._double_quoted(seg)
        elif c == "`":
            self._start(seg)
            self._backticks(seg)
        elif c == "$":
            self._start(seg)
            self._dollar(seg, in_dquote=False)
        elif c in "<>" and nxt == "(":
            self._start(seg)
            seg.dynamic = True
            self._substitution(seg, ")", 2)
        elif c in "<>":
            self._redirect(seg)
        else:
            if c in "*?[":
                self._start(seg)
                seg.dynamic = True  # a glob: the word's value is not known
            self._start(seg).append(c)
            self.i += 1

    # -- expansions ----------------------------------------------------------
    def _dollar(self, seg: _SegBuilder, *, in_dquote: bool) -> None:
        """At a ``$``: substitution, arithmetic, parameter, ANSI-C or locale string."""
        nxt = self._peek()
        buf = self._start(seg)
        if nxt == "(":
            seg.dynamic = True
            if self._peek(2) == "(":
                start = self.i
                if self._try_arithmetic(seg, self.i + 3, ")"):
                    return
                self.i = start
            self._substitution(seg, ")", 2)
        elif nxt == "[":
            seg.dynamic = True
            self._try_arithmetic(seg, self.i + 2, "]")
        elif nxt == "{":
            seg.dynamic = True
            self._param_expansion(seg, in_dquote=in_dquote)
        elif nxt == "'" and not in_dquote:
            self._ansi_c(buf)
        elif nxt == '"' and not in_dquote:
            self.i += 1  # $"…" is a translated double-quoted string
            self._double_quoted(seg)
        else:
            if nxt and (nxt.isalpha() or nxt in _SPECIAL_PARAMS):
                seg.dynamic = True
            buf.append("$")
            self.i += 1

    def _substitution(self, seg: _SegBuilder, until: str, skip: int) -> None:
        buf = self._start(seg)
        start = self.i
        self.i += skip
        self.scan(until)
        buf.append(self.s[start : self.i])

    def _backticks(self, seg: _SegBuilder) -> None:
        """`` `…` ``: bash unescapes ``\\` \\$ \\\\`` in the body, then parses it."""
        buf = self._start(seg)
        seg.dynamic = True
        start = self.i
        j = self.i + 1
        body: list[str] = []
        while j < self.n:
            ch = self.s[j]
            if ch == "\\" and j + 1 < self.n and self.s[j + 1] in "$`\\":
                body.append(self.s[j + 1])
                j += 2
            elif ch == "`":
                break
            else:
                body.append(ch)
                j += 1
        else:
            self.complete = False
        self.i = min(j + 1, self.n)
        self._nested("".join(body))
        buf.append(self.s[start : self.i])

    def _nested(self, source: str) -> None:
        """Parse ``source`` (a backtick body) as commands of its own."""
        sub = _Scanner(source, self.depth + 1)
        sub.scan(None)
        if sub.heredocs:
            sub.complete = False
        self.out.extend(sub.out)
        self.complete = self.complete and sub.complete

    def _try_arithmetic(self, seg: _SegBuilder, body: int, closer: str) -> bool:
        """Arithmetic ``$((…))``, ``((…))`` (closer ``)``) or ``$[…]`` (closer ``]``).

        Substitutions inside are commands of their own. Returns False (and
        rewinds) when ``((`` turns out not to close with ``))``: bash then
        reads ``$((a); b)`` as a command substitution holding a subshell.
        """
        buf = self._start(seg)
        mark = len(buf)
        start = self.i
        saved_out = len(self.out)
        saved_complete = self.complete
        self.i = body
        depth = 0
        while self.i < self.n:
            c = self.s[self.i]
            nxt = self._peek()
            if closer == "]" and c == "[":
                depth += 1
            elif closer == "]" and c == "]":
                if depth == 0:
                    self.i += 1
                    buf[mark:] = [self.s[start : self.i]]
                    return True
                depth -= 1
            elif closer == ")" and c == "(":
                depth += 1
            elif closer == ")" and c == ")":
                if depth > 0:
                    depth -= 1
                elif nxt == ")":
                    self.i += 2
                    buf[mark:] = [self.s[start : self.i]]
                    return True
                else:
                    del buf[mark:]
                    del self.out[saved_out:]
                    self.complete = saved_complete
                    self.i = start
                    return False
            if c == "\\":
                self.i += 2
                continue
            if c == "`":
                self._backticks(seg)
                continue
            if c == "$":
                self._dollar(seg, in_dquote=True)
                continue
            if c == '"':
                self._double_quoted(seg)
                continue
            if c == "'":
                end = self.s.find("'", self.i + 1)
                self.i = self.n if end < 0 else end + 1
                continue
            self.i += 1
        self.complete = False
        buf[mark:] = [self.s[start : self.i]]
        return True

    def _param_expansion(self, seg: _SegBuilder, *, in_dquote: bool) -> None:
        """``${…}``: its word may hold quotes and substitutions, never operators."""
        buf = self._start(seg)
        mark = len(buf)
        start = self.i
        self.i += 2
        depth = 0
        while self.i < self.n:
            c = self.s[self.i]
            if c == "}":
                if depth == 0:
                    self.i += 1
                    buf[mark:] = [self.s[start : self.i]]
                    return
                depth -= 1
                self.i += 1
            elif c == "\\":
                self.i += 2
            elif c == "'" and not in_dquote:
                end = self.s.find("'", self.i + 1)
                self.i = self.n if end < 0 else end + 1
            elif c == '"':
                self._double_quoted(seg)
            elif c == "`":
                self._backticks(seg)
            elif c == "$":
                if self._peek() == "{":
                    depth += 1
                    self.i += 2
                else:
                    self._dollar(seg, in_dquote=True)
            else:
                self.i += 1
        self.complete = False
        buf[mark:] = [self.s[start : self.i]]

    def _double_quoted(self, seg: _SegBuilder) -> None:
        buf = self._start(seg)
        self.i += 1
        while self.i < self.n:
            c = self.s[self.i]
            nxt = self._peek()
            if c == '"':
                self.i += 1
                return
            if c == "\\" and nxt in ('"', "\\", "$", "`", "\n"):
                if nxt != "\n":
                    buf.append(nxt)
                self.i += 2
            elif c == "`":
                self._backticks(seg)
            elif c == "$":
                self._dollar(seg, in_dquote=True)
            else:
                buf.append(c)
                self.i += 1
        self.complete = False

    def _ansi_c(self, buf: list[str]) -> None:
        """``$'…'``: decoded as bash does, so ``$'\\x72m'`` is seen as ``rm``."""
        start = self.i + 2
        j = start
        while j < self.n and self.s[j] != "'":
            j += 2 if self.s[j] == "\\" else 1
        if j >= self.n:
            self.complete = False
        body = self.s[start : min(j, self.n)]
        self.i = min(j + 1, self.n)
        buf.append(_decode_ansi_c(body))

    # -- redirections and heredocs ---------------------------------------------
    def _redirect(self, seg: _SegBuilder) -> None:
        """A redirection operator, with the ``2`` of ``2>`` or ``{fd}`` of ``{fd}>``."""
        fd = ""
        start = self.i
        if seg.buf is not None:
            raw = self.s[seg.wstart : self.i]
            if raw.isdigit() or _FD_VAR_RE.fullmatch(raw):
                fd, start = raw, seg.wstart
                seg.buf = None
            else:
                self._end_word(seg)
        op = next(o for o in _REDIRECT_OPS if self.s.startswith(o, self.i))
        self.i += len(op)
        if op in ("<<", "<<-"):
            self._heredoc(seg, op, fd, start)
            return
        seg.words.append(_Word(op, start, self.i, self.s[start : self.i], op=op, fd=fd))

    def _heredoc(self, seg: _SegBuilder, op: str, fd: str, op_start: int) -> None:
        seg.words.append(_Word(op, op_start, self.i, self.s[op_start : self.i], op=op, fd=fd))
        while self.i < self.n and self.s[self.i] in " \t":
            self.i += 1
        # The delimiter word: quotes are removed, any quoting disables expansion.
        dstart = self.i
        delim: list[str] = []
        quoted = False
        while self.i < self.n and self.s[self.i] not in " \t\n;|&<>()":
            c = self.s[self.i]
            if c in "'\"":
                quoted = True
                end = self.s.find(c, self.i + 1)
                if end < 0:
                    end = self.n
                delim.append(self.s[self.i + 1 : end])
                self.i = end + 1
            elif c == "\\" and self._peek():
                quoted = True
                delim.append(self._peek())
                self.i += 2
            else:
                delim.append(c)
                self.i += 1
        word = "".join(delim)
        if word:
            seg.words.append(_Word(word, dstart, self.i, self.s[dstart : self.i]))
            self.heredocs.append((word, op == "<<-", not quoted, seg))
        else:
            self.complete = False

    def _read_heredocs(self) -> None:
        """Consume the bodies of the heredocs opened on the line just ended.

        An unquoted body is expanded by bash, so its substitutions are
        commands; there backslash-newline also joins lines before the
        delimiter is looked for (``EO\\`` + ``F`` ends a body at ``EOF``).
        """
        pending, self.heredocs = self.heredocs, []
        for delim, strip_tabs, expands, owner in pending:
            body_start = self.i
            body_end = self.n
            found = False
            while self.i < self.n:
                line_start = self.i
                parts: list[str] = []
                while True:
                    end = self.s.find("\n", self.i)
                    line_end = self.n if end < 0 else end
                    piece = self.s[self.i : line_end]
                    self.i = line_end + 1 if end >= 0 else self.n
                    trailing = len(piece) - len(piece.rstrip("\\"))
                    if expands and trailing % 2 == 1 and end >= 0:
                        parts.append(piece[:-1])
                        continue
                    parts.append(piece)
                    break
                line = "".join(parts)
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    body_end = line_start
                    found = True
                    break
            if not found:
                self.complete = False
            if expands:
                self._expand_body(body_start, body_end)
            if owner.stdin_script:
                # sh <<EOF: the body is the script the shell runs.
                self._nested(self.s[body_start:body_end])

    def _expand_body(self, start: int, end: int) -> None:
        resume, limit = self.i, self.n
        self.i, self.n = start, end
        seg = self._new()
        self._start(seg)
        try:
            while self.i < self.n:
                c = self.s[self.i]
                if c == "\\":
                    self.i += 2
                elif c == "`":
                    self._backticks(seg)
                elif c == "$":
                    self._dollar(seg, in_dquote=True)
                else:
                    self.i += 1
        finally:
            self.i, self.n = resume, limit


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMERIC = re.compile(
    r"([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.)", re.DOTALL
)


def _decode_ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        m = _ANSI_NUMERIC.match(body, i + 1)
        if m is None:
            out.append(ch + nxt)  # unknown escape: kept as written
            i += 2
            continue
        octal, hex2, u4, u8, ctrl = m.groups()
        if ctrl is not None:
            code = ord(ctrl.upper()) ^ 0x40 if ctrl != "?" else 0x7F
        else:
            code = int(octal, 8) if octal else int(hex2 or u4 or u8, 16)
        if code == 0:
            break  # bash cuts the string at a NUL
        out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
        i = m.end()
    return "".join(out)


# --------------------------------------------------------------------------
# Commands inside commands, and normal forms
# --------------------------------------------------------------------------

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
# Wrapper → (options that take a value, options that take none are anything
# else starting with "-"). Long options with "=" carry their value.
_WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-C",
            "-D",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "-h",
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
            "--host",
            "--close-from",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "xargs": frozenset(
        {
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--eof",
            "--replace",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        }
    ),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "-n", "-t", "--class", "--classdata"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "unbuffer": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "unshare": frozenset({"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S"}),
}
# Programs that run one option's value as a shell command line.
_COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "su": frozenset({"-c", "--command"}),
    "runuser": frozenset({"-c", "--command"}),
    "script": frozenset({"-c", "--command"}),
}
# Wrappers whose first operand is not the command (timeout DURATION, flock FILE,
# taskset MASK, chrt PRIORITY).
_WRAPPER_SKIP_OPERANDS: dict[str, int] = {
    "timeout": 1,
    "flock": 1,
    "taskset": 1,
    "chrt": 1,
    "chroot": 1,
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_RM_LONG = {
    "--recursive": "r",
    "--force": "f",
    "--dir": "d",
    "--verbose": "v",
    "--interactive": "i",
}


# Every long option of GNU rm: getopt accepts any unambiguous prefix of one
# (``--rec --for`` is ``--recursive --force``).
_RM_ALL_LONG = (
    *_RM_LONG,
    "--one-file-system",
    "--no-preserve-root",
    "--preserve-root",
    "--help",
    "--version",
)


def _rm_long_letter(word: str) -> str | None:
    """The flag letter of an ``rm`` long option, abbreviated or not."""
    if word in _RM_LONG or "=" in word:
        return _RM_LONG.get(word)
    matches = [full for full in _RM_ALL_LONG if full.startswith(word)]
    return _RM_LONG.get(matches[0]) if len(matches) == 1 else None


def _program(word: str) -> str:
    """The program name a deny rule should see: the basename of a path."""
    return os.path.basename(word) if "/" in word else word


def _rm_forms(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``rm`` with its flags in one normal order: ``-rf`` = ``-fr`` = ``-r -f``.

    The normal form puts ``r`` (``-R``, ``--recursive``) then ``f``
    (``--force``) then the other letters in one bundle before the operands; a
    few spellings of the same are added so a rule written as ``rm -fr*`` or
    ``rm -r -f*`` catches every order too.
    """
    flags: set[str] = set()
    longs: list[str] = []
    operands: list[str] = []
    ended = False
    for w in words[1:]:
        if ended or w == "-" or not w.startswith("-"):
            operands.append(w)
        elif w == "--":
            ended = True
        elif w.startswith("--"):
            letter = _rm_long_letter(w)
            if letter:
                flags.add(letter)
            else:
                longs.append(w)
        else:
            flags.update("r" if ch == "R" else ch for ch in w[1:])
    head = [ch for ch in "rf" if ch in flags]
    others = "".join(sorted(flags - {"r", "f"}))
    tail = (*longs, *operands)
    forms: list[tuple[str, ...]] = []
    bundle = "".join(head) + others
    forms.append(("rm", "-" + bundle, *tail) if bundle else ("rm", *tail))
    if head:
        extra = ("-" + others,) if others else ()
        forms.append(("rm", "-" + "".join(head), *extra, *tail))
        if len(head) == 2:
            forms.append(("rm", "-fr" + others, *tail))
            forms.append(("rm", "-fr", *extra, *tail))
            forms.append(("rm", "-r", "-f", *extra, *tail))
            forms.append(("rm", "-f", "-r", *extra, *tail))
    return forms


def _git_form(words: tuple[str, ...], assignments: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``git`` without its global options: ``git -C x -c k=v push`` → ``git push``.

    An alias defined on the same line (``-c alias.p=push``, or the
    ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` assignments) is expanded, so
    ``git -c alias.p=push p`` is seen as ``git push``. (A ``!`` alias is a
    shell command; it is found where ``-c`` values are scanned.)"""
    aliases = _git_env_aliases(assignments)
    for _ in range(8):  # aliases may name aliases; git itself refuses loops
        k = 1
        while k < len(words) and words[k].startswith("-"):
            if words[k] == "-c" and k + 1 < len(words):
                _note_alias(words[k + 1], aliases)
            k += 2 if words[k] in GIT_GLOBAL_VALUE_OPTIONS else 1
        rest = words[k:]
        value = aliases.pop(rest[0].lower(), None) if rest else None
        if value is None or value.startswith("!") or not value.split():
            return ("git", *rest)
        words = ("git", *value.split(), *rest[1:])
    return ("git", *words[1:])


def _note_alias(setting: str, aliases: dict[str, str]) -> None:
    key, sep, value = setting.partition("=")
    if sep and key.lower().startswith("alias.") and len(key) > len("alias."):
        aliases[key[len("alias.") :].lower()] = value


def _git_env_aliases(assignments: tuple[str, ...]) -> dict[str, str]:
    """Aliases set through ``GIT_CONFIG_KEY_n=alias.x GIT_CONFIG_VALUE_n=…``."""
    env: dict[str, str] = {}
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        env[name] = value
    aliases: dict[str, str] = {}
    for name, key in env.items():
        if name.startswith("GIT_CONFIG_KEY_"):
            value = env.get("GIT_CONFIG_VALUE_" + name[len("GIT_CONFIG_KEY_") :])
            if value is not None:
                _note_alias(f"{key}={value}", aliases)
    return aliases


def normal_forms(
    words: tuple[str, ...], assignments: tuple[str, ...]
) -> tuple[tuple[str, ...], ...]:
    """Alternatives of ``words`` deny and ask rules are matched against."""
    if not words:
        return ()
    base = (_program(words[0]), *words[1:])
    forms: list[tuple[str, ...]] = []
    if assignments:
        forms.append(assignments + words)
    if base != words:
        forms.append(base)
    if base[0] == "rm":
        forms.extend(_rm_forms(base))
    elif base[0] == "git":
        forms.append(_git_form(base, assignments))
    return tuple(dict.fromkeys(f for f in forms if f != words))


def _take_options(words: list[_Word], k: int, value_opts: frozenset[str]) -> int:
    """Index of the first operand after the options starting at ``k``."""
    while k < len(words):
        w = words[k].value
        if w == "--":
            return k + 1
        if not w.startswith("-") or w == "-":
            return k
        if w.startswith("--"):
            k += 2 if w in value_opts else 1  # --opt=value carries its value
            continue
        k += 1
        # A short bundle: -Eu root takes the next word, -uroot has it attached.
        for p in range(1, len(w)):
            if "-" + w[p] in value_opts:
                if p == len(w) - 1:
                    k += 1
                break
    return k


@dataclass(slots=True)
class _Inner:
    """What a command runs inside itself, as found by :func:`_inner_commands`."""

    commands: list[tuple[str, list[_Word]]] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)
    writes: list[Redirect] = field(default_factory=list)
    opaque: bool = False
    # A shell reading its script from stdin (``sh <<EOF``, ``bash <<< STR``).
    stdin_script: bool = False


def _env_split_string(words: list[_Word], end: int, found: _Inner) -> bool:
    """``env -S "STR" args``: STR is split into the command. True when found."""
    for n in range(1, end):
        w = words[n].value
        if w in ("-S", "--split-string") and n + 1 < len(words):
            value_word, text = words[n + 1], words[n + 1].value
        elif w.startswith("--split-string="):
            value_word, text = words[n], w.split("=", 1)[1]
        elif w.startswith("-S") and not w.startswith("--"):
            value_word, text = words[n], w[2:]
        else:
            continue
        if value_word.dynamic or any(x.dynamic for x in words[end:]):
            found.opaque = True
        else:
            found.sources.append(("env -S", " ".join([text, *(x.raw for x in words[end:])])))
        return True
    return False


def _command_option(words: list[_Word], options: frozenset[str], name: str, found: _Inner) -> None:
    """``su -c CMD``: the option's value is a command line of its own."""
    for n in range(1, len(words)):
        w = words[n].value
        bundle = len(w) > 2 and w[0] == "-" and w[1] != "-" and w.endswith("c")  # -qc CMD
        if (w in options or bundle) and n + 1 < len(words):
            value_word, text = words[n + 1], words[n + 1].value
        elif w.startswith("--command="):
            value_word, text = words[n], w.split("=", 1)[1]
        else:
            continue
        if value_word.dynamic:
            found.opaque = True
        else:
            found.sources.append((f"{name} -c", text))
        return


def _inner_commands(words: list[_Word]) -> _Inner:
    """The commands ``words`` runs inside itself (wrappers, ``sh -c``, ``find -exec``)."""
    found = _Inner()
    if not words:
        return found
    name = _program(words[0].value)
    if words[0].dynamic:
        # ``$cmd args``: the program is not known, nothing may cover it.
        found.opaque = True
        return found
    if name in _WRAPPER_VALUE_OPTS:
        k = _take_options(words, 1, _WRAPPER_VALUE_OPTS[name])
        if name == "env" and _env_split_string(words, k, found):
            return found
        k += _WRAPPER_SKIP_OPERANDS.get(name, 0)
        if k < len(words):
            found.commands.append((name, words[k:]))
    elif name in _SHELLS:
        _shell_inner(name, words, found)
    elif name in _COMMAND_OPTIONS:
        _command_option(words, _COMMAND_OPTIONS[name], name, found)
    elif name == "watch":
        # watch runs its arguments, joined, through sh -c.
        k = _take_options(words, 1, frozenset({"-n", "--interval"}))
        if k < len(words):
            _joined_source("watch", words[k:], found)
    elif name == "trap":
        _trap_inner(words, found)
    elif name == "eval":
        if words[1:]:
            _joined_source("eval", words[1:], found)
    elif name == "find":
        _find_inner(words, found)
    return found


def _joined_source(how: str, args: list[_Word], found: _Inner) -> None:
    """``eval a b``, ``watch a b``: the arguments, joined by spaces, are a command line."""
    if any(w.dynamic for w in args):
        found.opaque = True
    else:
        found.sources.append((how, " ".join(w.value for w in args)))


def _shell_inner(name: str, words: list[_Word], found: _Inner) -> None:
    """``sh -c CMD``, ``busybox APPLET``, ``bash`` reading its script from stdin."""
    k = 1
    if name == "busybox" and len(words) > 1:
        if words[1].value not in _SHELLS:
            found.commands.append((name, words[1:]))  # busybox APPLET args
            return
        k = 2
    k, has_c = _shell_options(words, k)
    if has_c:
        if k >= len(words) or words[k].dynamic:
            found.opaque = True
        else:
            found.sources.append((f"{name} -c", words[k].value))
    elif k >= len(words) or words[k].value in ("-", "/dev/stdin"):
        found.stdin_script = True  # the script comes from stdin: heredoc, <<<


def _shell_options(words: list[_Word], k: int) -> tuple[int, bool]:
    """Skip a shell's options from ``k``: the first operand's index and whether ``-c`` was given."""
    has_c = False
    while k < len(words):
        w = words[k].value
        if w in ("-o", "-O", "+o", "+O", "--rcfile", "--init-file"):
            k += 2
            continue
        if w == "--":
            k += 1
            break
        if w.startswith(("-", "+")) and len(w) > 1 and not w.startswith("--"):
            has_c = has_c or "c" in w[1:]
            k += 1
            continue
        if w.startswith("--"):
            k += 1
            continue
        break
    return k, has_c


def _trap_inner(words: list[_Word], found: _Inner) -> None:
    """``trap 'CMD' SIGNAL…``: CMD runs later, in this shell."""
    k = 2 if len(words) > 2 and words[1].value == "--" else 1
    if (
        len(words) > k + 1
        and words[k].value not in ("-", "")
        and not words[k].value.startswith("-")
    ):
        if words[k].dynamic:
            found.opaque = True
        else:
            found.sources.append(("trap", words[k].value))


def _find_inner(words: list[_Word], found: _Inner) -> None:
    k = 1
    while k < len(words) and words[k].value in ("-H", "-L", "-P", "-D", "-O"):
        k += 2 if words[k].value == "-D" else 1
    while k < len(words) and re.fullmatch(r"-O\d", words[k].value):
        k += 1
    paths: list[_Word] = []
    while k < len(words) and not words[k].value.startswith(("-", "(", "!")):
        paths.append(words[k])
        k += 1
    while k < len(words):
        w = words[k].value
        if w == "-delete":
            # Normal form of a find that deletes: ``rm -rf <paths>``.
            fake = [_Word("rm", 0, 0, "rm"), _Word("-rf", 0, 0, "-rf")]
            found.commands.append(("find -delete", fake + (paths or [_Word(".", 0, 0, ".")])))
            k += 1
        elif w in _FIND_EXEC:
            j = k + 1
            while j < len(words) and words[j].value not in (";", "+"):
                j += 1
            if j >= len(words):
                found.opaque = True
            if j > k + 1:
                found.commands.append((f"find {w}", words[k + 1 : j]))
            k = j + 1
        elif w in _FIND_WRITES and k + 1 < len(words):
            target = words[k + 1]
            value = _target_value(target)
            found.writes.append(Redirect(w, "", value, f"{w} {target.raw}"))
            k += 2
        else:
            k += 1


def _build_segment(
    kept: list[_Word],
    raw: str,
    assignments: tuple[str, ...],
    redirects: tuple[Redirect, ...],
    depth: int,
    known_vars: dict[str, str] | None = None,
    via: str = "",
    origin: tuple[str, ...] = (),
) -> list[Segment]:
    """The segment for ``kept`` plus every command found inside it."""
    words = tuple(w.value for w in kept)
    full = assignments + words
    origin = origin or full
    inner = _inner_commands(kept) if depth < _MAX_DEPTH else _Inner(opaque=True)
    stdin_script = _reads_stdin_script(kept, depth, inner)
    _rewritten_commands(kept, known_vars or {}, inner)
    _configured_commands(kept, assignments, inner)
    _option_effects(kept, via, inner)
    extra = _nested_segments(inner, depth, origin)
    head = Segment(
        words,
        raw,
        assignments,
        redirects + tuple(inner.writes),
        normal_forms(words, assignments),
        via,
        origin if via else (),
        inner.opaque,
        _program_glob(kept),
        stdin_script,
    )
    return [head, *extra]


def _reads_stdin_script(kept: list[_Word], depth: int, inner: _Inner) -> bool:
    """Whether ``kept`` is a shell reading its script from stdin (``sh <<EOF``)."""
    # Whether a shell reads its script from stdin depends on the words' values only,
    # once the program word is literal: then the inner reading already says.
    # A dynamic program word (``$sh <<EOF``, maybe a known variable) or the depth cap
    # left it unread, so the values are read as literal words.
    if not kept:
        return False
    if depth < _MAX_DEPTH and not kept[0].dynamic:
        return inner.stdin_script
    return _inner_commands([_literal(w.value) for w in kept]).stdin_script


def _nested_segments(inner: _Inner, depth: int, origin: tuple[str, ...]) -> list[Segment]:
    """The segments of the commands ``inner`` found (wrapped words and command lines).

    A command line nested too deep, or one that does not parse completely,
    makes ``inner`` opaque.
    """
    extra: list[Segment] = []
    for how, inner_words in inner.commands:
        k = 0
        env: list[str] = []
        while k < len(inner_words) - 1 and _ASSIGN_RE.match(inner_words[k].raw):
            env.append(inner_words[k].raw)
            k += 1
        text = " ".join(w.raw for w in inner_words[k:])
        extra.extend(
            _build_segment(inner_words[k:], text, tuple(env), (), depth + 1, None, how, origin)
        )
    for how, source in inner.sources:
        if depth + 1 >= _MAX_DEPTH:
            inner.opaque = True
            break
        sub = _Scanner(source, depth + 1)
        sub.scan(None)
        if sub.heredocs or not sub.complete:
            inner.opaque = True
        extra.extend(replace(s, via=s.via or how, origin=origin) for s in sub.out)
    return extra


def _option_effects(kept: list[_Word], via: str, found: _Inner) -> None:
    """What the program's own options run or write (``sort -o``, ``sed 1e``).

    A command that runs something through an option is opaque; the command
    line it carries is still parsed for deny rules. A file it writes is a
    write like a redirection's. Under ``xargs`` more words follow, unseen.
    """
    words = [*kept, _Word("$xargs", 0, 0, "$xargs", True)] if via == "xargs" else kept
    effects = program_effects(words)
    if effects.executes:
        found.opaque = True
    found.sources.extend(("program option", line) for line in effects.commands)
    found.writes.extend(
        Redirect(option, "", path, f"{option} {path if path is not None else '?'}")
        for option, path in effects.writes
    )


def _program_glob(kept: list[_Word]) -> str | None:
    if not kept or not kept[0].dynamic:
        return None
    raw = kept[0].raw
    if any(ch in raw for ch in "$`'\"\\") or not any(ch in raw for ch in "*?["):
        return None
    return os.path.basename(kept[0].value)


def _rewritten_commands(kept: list[_Word], known_vars: dict[str, str], found: _Inner) -> None:
    """Spellings bash rewrites before running: braces, ``$IFS``, a known ``$var``."""
    if not kept:
        return
    raws = [w.raw for w in kept]
    if any("$IFS" in r or "${IFS}" in r for r in raws):
        # rm${IFS}-rf${IFS}x: with the default IFS the words split on it.
        text = " ".join(raws).replace("${IFS}", " ").replace("$IFS", " ")
        found.sources.append(("IFS", text))
    program = kept[0].raw
    for name, value in known_vars.items():
        if program in (f"${name}", f"${{{name}}}", f'"${name}"', f'"${{{name}}}"'):
            rest = " ".join(raws[1:])
            found.sources.append((f"${name}", f"{value} {rest}"))
            break
    if any("{" in r and ("," in r or ".." in r) for r in raws):
        expanded: list[str] = []
        for w in kept:
            plain = not any(ch in w.raw for ch in "'\"\\$`")
            alts = _expand_braces(w.raw) if plain else [w.value]
            if len(expanded) + len(alts) > 256:
                return
            expanded.extend(alts)
        if expanded != [w.value for w in kept]:
            fake = [_Word(v, 0, 0, v) for v in expanded]
            found.commands.append(("brace expansion", fake))


# Environment variables and git settings whose value is a command line that
# git, a pager or the shell will run (``core.fsmonitor``, ``GIT_SSH_COMMAND``).
_COMMAND_VARS = frozenset(
    {
        "GIT_SSH_COMMAND",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "LESSOPEN",
        "PROMPT_COMMAND",
    }
)
_COMMAND_GIT_KEYS = frozenset(
    {
        "core.fsmonitor",
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.askpass",
        "sequence.editor",
        "diff.external",
        "gpg.program",
        "credential.helper",
    }
)


# diff.<driver>.textconv, filter.<name>.clean, mergetool.<tool>.cmd, …
_COMMAND_GIT_SUFFIXES = (
    ".command",
    ".textconv",
    ".clean",
    ".smudge",
    ".process",
    ".driver",
    ".helper",
    ".program",
    ".cmd",
)


def _configured_commands(kept: list[_Word], assignments: tuple[str, ...], found: _Inner) -> None:
    """Commands set through the environment or ``git -c`` (seen by deny rules).

    Allow rules already refuse these (assignments must be named, ``git -c …``
    is not ``git status``); this lets a deny rule see the command they carry.
    """
    settings: list[tuple[str, str]] = []
    for text in assignments:
        name, _, value = text.partition("=")
        settings.append((name, _unquote(value)))
    if kept and _program(kept[0].value) == "git":
        k = 1
        while k + 1 < len(kept) and kept[k].value.startswith("-"):
            if kept[k].value == "-c":
                key, _, value = kept[k + 1].value.partition("=")
                settings.append((key, value))
                k += 2
            else:
                k += 1
    for key, value in settings:
        lowered = key.lower()
        runs = (
            key in _COMMAND_VARS
            or key.startswith("GIT_CONFIG_VALUE_")
            or lowered in _COMMAND_GIT_KEYS
            or lowered.startswith(("alias.", "pager."))
            or lowered.endswith(_COMMAND_GIT_SUFFIXES)
        )
        if runs and value:
            found.sources.append(("configured command", value.removeprefix("!")))


def _unquote(text: str) -> str:
    """The value of an assignment's raw right-hand side (quotes removed)."""
    sub = _Scanner(text)
    seg = sub._new()
    sub._start(seg)
    while sub.i < sub.n:
        c = sub.s[sub.i]
        if c == "'":
            end = sub.s.find("'", sub.i + 1)
            end = sub.n if end < 0 else end
            seg.buf.append(sub.s[sub.i + 1 : end])  # type: ignore[union-attr]
            sub.i = end + 1
        elif c == '"':
            sub._double_quoted(seg)
        elif c == "\\" and sub.i + 1 < sub.n:
            seg.buf.append(sub.s[sub.i + 1])  # type: ignore[union-attr]
            sub.i += 2
        else:
            seg.buf.append(c)  # type: ignore[union-attr]
            sub.i += 1
    return "".join(seg.buf or [])


def _expand_braces(word: str, start: int = 0) -> list[str]:
    """Bash brace expansion of one unquoted word: ``-{r,f}`` → ``-r -f``."""
    depth = 0
    open_at = -1
    for i in range(start, len(word)):
        ch = word[i]
        if ch == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth:
                continue
            body = word[open_at + 1 : i]
            alts = _brace_alternatives(body)
            if alts is None:
                return _expand_braces(word, i + 1)
            out: list[str] = []
            for alt in alts:
                out.extend(_expand_braces(word[:open_at] + alt + word[i + 1 :], open_at))
                if len(out) > 256:
                    return [word]
            return out
    return [word]


def _brace_alternatives(body: str) -> list[str] | None:
    parts: list[str] = []
    depth = 0
    cur = 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[cur:i])
            cur = i + 1
    if parts:
        return [*parts, body[cur:]]
    seq = re.fullmatch(r"(-?\d+)\.\.(-?\d+)|([A-Za-z])\.\.([A-Za-z])", body)
    if seq is None:
        return None
    if seq.group(1) is not None:
        a, b = int(seq.group(1)), int(seq.group(2))
        if abs(b - a) > 256:
            return None
        step = 1 if b >= a else -1
        return [str(n) for n in range(a, b + step, step)]
    a, b = ord(seq.group(3)), ord(seq.group(4))
    step = 1 if b >= a else -1
    return [chr(n) for n in range(a, b + step, step)]


def split_command(command: str) -> ParsedCommand:
    """Split a shell command line into the simple commands bash will run.

    Splits on ``&&``, ``||``, ``;``, ``|``, ``|&``, ``&`` and newlines outside
    quotes; subshells, groups, every command substitution (also inside double
    quotes, ``${…}``, arithmetic and unquoted heredoc bodies), process
    substitution and the commands wrappers run contribute further segments.
    Quoted heredoc bodies and comments are skipped.
    """
    parsed = _parse(command)
    if "\\\n" in command:
        # Bash drops backslash-newline before it tokenizes, so "$\<newline>(cmd)"
        # is "$(cmd)". Read the joined text too and keep every command either
        # reading finds: a continuation inside single quotes can only add
        # commands (more to cover, more for deny rules to see), never hide one.
        joined = _parse(command.replace("\\\n", ""))
        seen = {(seg.assignments, seg.words) for seg in parsed.segments}
        extra = tuple(seg for seg in joined.segments if (seg.assignments, seg.words) not in seen)
        parsed = ParsedCommand(
            command, parsed.segments + extra, parsed.complete and joined.complete
        )
    return parsed


def _parse(command: str) -> ParsedCommand:
    sc = _Scanner(command)
    try:
        sc.scan(None)
    except RecursionError:  # pragma: no cover - depth is bounded by _MAX_DEPTH
        return ParsedCommand(command, (Segment((), command.strip(), opaque=True),), False)
    if sc.heredocs:  # heredoc started on the last line without a body
        sc.complete = False
    segments = tuple(sc.out) or (Segment((), command.strip()),)
    return ParsedCommand(command, segments, sc.complete)
