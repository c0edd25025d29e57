"""What common programs' own options make them do besides their job.

A prefix allow rule such as ``Bash(sed:*)`` or ``Bash(git diff:*)`` names a
program the user trusts to read and print. Some of their options run another
program (``man -P CMD``, ``tar --to-command=CMD``, sed's ``e`` command, awk's
``system()``) or write a file (``sort -o FILE``, ``git diff --output=FILE``,
sed's ``w FILE``). This module is the one place that knows them, per program:

* an option or script form that **executes** makes the segment opaque, so only
  a bare ``Bash`` or an exact ``Bash=`` rule allows it (a command line it
  carries is also handed back, for deny rules to see);
* an option that **writes** a file yields that file, which then needs an
  ``Edit`` allow like a redirection's target (unknown when the name is an
  expansion, which only a bare ``Edit`` covers).

The table errs one way: an option it does not recognise as taking a value is
read as a flag, so a word after it is still checked. A word whose value only
running bash would know (``$x``, a glob at its start, an unquoted expansion
that may split) may be any option, so for these programs it is treated as one
that executes.

Stdlib only; no I/O. Words come from :mod:`.shell_lexer` (any object with
``value``, ``raw`` and ``dynamic``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Effects", "Word", "program_effects"]


class Word(Protocol):
    """A shell word as the lexer read it."""

    @property
    def value(self) -> str: ...
    @property
    def raw(self) -> str: ...
    @property
    def dynamic(self) -> bool: ...


@dataclass(slots=True)
class Effects:
    """What one command's options and scripts do besides reading and printing."""

    # Runs a program the words do not show as a command of its own.
    executes: bool = False
    # Command lines carried by an executing option (shown to deny rules).
    commands: list[str] = field(default_factory=list)
    # Files written: (the option or script form, the path or None when unknown).
    writes: list[tuple[str, str | None]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Options:
    """The options of one getopt-style program that matter here.

    Short options are ``-x``, long ones ``--name`` (an unambiguous prefix of a
    long option is that option when ``abbreviations``, as getopt_long reads it).
    ``runs_line``: the value is a command line; ``runs``: using the option runs
    something (a program, a script file, a configured command); ``writes``: the
    value is a file written; ``values``: other options taking a value.
    """

    runs_line: frozenset[str] = frozenset()
    runs: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    abbreviations: bool = True
    optional: frozenset[str] = frozenset()

    def value_pools(self) -> tuple[frozenset[str], ...]:
        return (self.runs_line, self.writes, self.values)

    def takes_value(self, name: str) -> bool:
        return any(name in pool for pool in self.value_pools())


def _opts(
    runs_line: str = "",
    runs: str = "",
    writes: str = "",
    values: str = "",
    *,
    abbreviations: bool = True,
    optional: str = "",
) -> Options:
    return Options(
        frozenset(runs_line.split()),
        frozenset(runs.split()),
        frozenset(writes.split()),
        frozenset(values.split()),
        abbreviations,
        frozenset(optional.split()),
    )


# --------------------------------------------------------------------------
# The table: getopt-style programs
# --------------------------------------------------------------------------

_SORT = _opts(
    runs_line="--compress-program",
    writes="-o --output",
    values="-k --key -t --field-separator -S --buffer-size -T --temporary-directory "
    "--parallel --batch-size --random-source --files0-from",
)
_RG = _opts(
    runs_line="--pre",
    # rg reads exact long names; --pre-glob only narrows --pre but is as rare.
    runs="--pre-glob",
    values="-e --regexp -f --file -g --glob --iglob -t --type -T --type-not -m --max-count "
    "-A --after-context -B --before-context -C --context -j --threads -M --max-columns "
    "-r --replace -E --encoding --type-add --sort --sortr --color --colors "
    "--max-depth --max-filesize --path-separator",
    abbreviations=False,
)
_MAN = _opts(
    runs_line="-P --pager",
    # -H/--html run a browser; -C names a config file that may set pagers.
    runs="-H --html -C --config-file",
    values="-M --manpath -S -s --sections -e --extension -L --locale -m --systems "
    "-p --preprocessor -r --prompt -E --encoding -R --recode",
)
_TAR = _opts(
    runs_line="--to-command --use-compress-program -I --info-script -F --new-volume-script "
    "--rsh-command --rmt-command",
    runs="--checkpoint-action",
    writes="-g --listed-incremental --index-file",
    values="-f --file -C --directory -b --blocking-factor -T --files-from -X --exclude-from "
    "-N --newer --after-date -V --label -H --format -K --starting-file -L --tape-length "
    "--exclude --transform --xform --owner --group --mode --mtime --suffix --strip-components",
)
_ZIP = _opts(runs_line="-TT --unzip-command", values="-b -n -t -tt -x -i -P --password")
_RSYNC = _opts(
    runs_line="-e --rsh --rsync-path",
    values="--exclude --include --filter -f --exclude-from --include-from --files-from "
    "--log-file-format --out-format --chmod --chown --usermap --groupmap --timeout "
    "--contimeout --port --partial-dir --temp-dir -T --backup-dir --suffix --compare-dest "
    "--copy-dest --link-dest --bwlimit --max-size --min-size --max-delete --modify-window",
)
_SSH_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand"})
_SSH = _opts(
    runs="-F -S",  # a config file (may set ProxyCommand), a program for the connection
    values="-o -b -c -D -E -e -I -i -J -L -l -m -O -p -Q -R -W -w -B",  # -o: see _ssh
    abbreviations=False,
)
_VIM = _opts(
    runs_line="-c --cmd",
    runs="-S -u -U -i",  # a script, a vimrc, a viminfo file: all run ex commands
    writes="-w -W",
    values="-t -q -T -r -s -V",
    abbreviations=False,
)
_MAKE = _opts(
    runs_line="--eval -E",
    values="-f --file --makefile -C --directory -I --include-dir -j --jobs -l --load-average "
    "--max-load -o --old-file --assume-old -W --what-if --new-file --assume-new -O --output-sync",
)

_GETOPT: dict[str, Options] = {
    "sort": _SORT,
    "rg": _RG,
    "man": _MAN,
    "tar": _TAR,
    "zip": _ZIP,
    "rsync": _RSYNC,
    "ssh": _SSH,
    "scp": _SSH,
    "sftp": _SSH,
    "make": _MAKE,
    "gmake": _MAKE,
}

# git: global options before the subcommand (-C is fine: it only moves).
#: git's global options that take the next word as their value (``git -C dir push``);
#: the one list both the option reader here and the lexer's ``git`` normal form use.
GIT_GLOBAL_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
    }
)
# ``git -c KEY=VALUE`` keys that only change what git shows: any other key may
# name a hook directory, an included config file, a filter or a command.
_GIT_DISPLAY_KEYS = frozenset(
    {
        "core.quotepath",
        "core.abbrev",
        "diff.colormoved",
        "diff.colormovedws",
        "diff.algorithm",
        "diff.renames",
        "diff.context",
        "diff.interhunkcontext",
        "diff.noprefix",
        "diff.mnemonicprefix",
        "diff.relative",
        "diff.statgraphwidth",
        "format.pretty",
        "init.defaultbranch",
        "column.ui",
    }
)
_GIT_DISPLAY_PREFIXES = ("color.", "log.", "advice.", "user.", "status.", "pretty.")


def _git_setting_is_display(word: Word | None) -> bool:
    if word is None or word.dynamic:
        return False
    key = word.value.partition("=")[0].lower()
    return key in _GIT_DISPLAY_KEYS or key.startswith(_GIT_DISPLAY_PREFIXES)


_GIT_DIFF_FAMILY = frozenset(
    {"diff", "log", "show", "whatchanged", "diff-files", "diff-index", "diff-tree", "range-diff"}
)
_GIT_SUBCOMMANDS: dict[str, Options] = {
    **{
        name: _opts(writes="--output -o", values="-S -G -L -O -U --unified -n --max-count")
        for name in _GIT_DIFF_FAMILY
    },
    "format-patch": _opts(writes="--output-directory -o --output"),
    "archive": _opts(runs="--exec --remote", writes="-o --output"),
    "grep": _opts(runs="-O --open-files-in-pager", values="-e -f -A -B -C -m --max-count"),
    "difftool": _opts(runs_line="-x --extcmd"),
    "mergetool": _opts(runs="-t --tool"),
    "fetch": _opts(runs_line="--upload-pack"),
    "pull": _opts(runs_line="--upload-pack"),
    "clone": _opts(runs_line="--upload-pack -u", runs="--template -c --config"),
    "ls-remote": _opts(runs_line="--upload-pack"),
    "push": _opts(runs_line="--receive-pack --exec"),
    "submodule": _opts(runs="foreach"),
}


# --------------------------------------------------------------------------
# Reading options
# --------------------------------------------------------------------------

# A word whose value is unknown may still be known not to start with "-".
_LITERAL_START = re.compile(r"[\"']*[A-Za-z0-9_./~+=:,@%^]")


@dataclass(frozen=True, slots=True)
class _Text:
    """An option value attached to its option (``-oFILE``, ``--output=FILE``)."""

    value: str
    raw: str
    dynamic: bool = False


def _may_be_option(word: Word) -> bool:
    """True when bash could turn ``word`` into an option (or several words)."""
    if not word.dynamic:
        return False
    return not _LITERAL_START.match(word.raw) or _unquoted_expansion(word.raw)


def _unquoted_expansion(raw: str) -> bool:
    """A ``$`` or backtick outside quotes: its value is split into words."""
    quote = ""
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "$`":
            return True
        i += 1
    return False


def _path(word: Word) -> str | None:
    """The file a word names, or None when only running bash would know it."""
    if word.dynamic:
        return None
    if word.value.startswith("~") and not word.raw.startswith("~"):
        return "./" + word.value  # a quoted ~ is a plain name, not home
    return word.value


def _is(name: str, spec: Options, pool: frozenset[str]) -> bool:
    """True when option ``name`` (a long one maybe abbreviated) is one of ``pool``."""
    if name in pool:
        return True
    if not name.startswith("--") or not spec.abbreviations or len(name) < 4:
        return False
    return any(full.startswith(name) for full in pool)


def _record(effects: Effects, spec: Options, name: str, value: Word | None) -> None:
    """What option ``name`` with ``value`` (None: none given) does."""
    if _is(name, spec, spec.runs_line):
        effects.executes = True
        if value is not None and not value.dynamic and value.value:
            effects.commands.append(value.value)
    elif _is(name, spec, spec.runs):
        effects.executes = True
    elif _is(name, spec, spec.writes):
        if value is None:
            effects.executes = True  # no file given: nothing known to cover
        else:
            effects.writes.append((name, _path(value)))


OptionHook = Callable[[str, "Word | None"], None]


def scan_options(
    words: Sequence[Word],
    spec: Options,
    effects: Effects,
    on_operand: Callable[[Word], None] | None = None,
    on_option: OptionHook | None = None,
) -> None:
    """Read ``words`` (after the program) as getopt_long does: options anywhere
    before ``--``, short ones bundled, values attached or in the next word.

    ``spec.optional`` options take a value only attached (``-i.bak``)."""
    k = 0
    ended = False
    while k < len(words):
        word = words[k]
        k += 1
        if not ended and _may_be_option(word):
            effects.executes = True
            return
        v = word.value
        if ended or not v.startswith("-") or v == "-":
            if on_operand is not None:
                on_operand(word)
            continue
        if v == "--":
            ended = True
            continue
        found, took_next = _options_in(word, words[k] if k < len(words) else None, spec)
        if took_next:
            k += 1
        for name, value in found:
            _record(effects, spec, name, value)
            if on_option is not None:
                on_option(name, value)


_Found = list[tuple[str, "Word | None"]]


def _options_in(word: Word, following: Word | None, spec: Options) -> tuple[_Found, bool]:
    """The options one word gives, each with its value (None: none given), and
    whether the value of the last one is ``following``, the next word."""
    v = word.value
    if not v.startswith("--") and spec.takes_value(v) and len(v) > 2:
        # A multi-letter short option (zip's ``-TT CMD``), not a bundle.
        return [(v, following)], True
    if v.startswith("--"):
        name, eq, attached = v.partition("=")
        takes = any(_is(name, spec, pool) for pool in spec.value_pools())
        if eq:
            return [(name, _Text(attached, attached, word.dynamic))], False
        if takes and following is not None:
            return [(name, following)], True
        return [(name, None)], False
    return _short_options(word, following, spec)


def _short_options(word: Word, following: Word | None, spec: Options) -> tuple[_Found, bool]:
    """A bundle of short options (``-xvf FILE``): flags up to the first one taking a value."""
    v = word.value
    found: _Found = []
    for p in range(1, len(v)):
        name = "-" + v[p]
        rest = v[p + 1 :]
        if name in spec.optional:
            found.append((name, _Text(rest, rest, word.dynamic) if rest else None))
            break
        if not spec.takes_value(name):
            found.append((name, None))
            continue
        if rest:
            found.append((name, _Text(rest, rest, word.dynamic)))
        elif following is not None:
            found.append((name, following))
            return found, True
        else:
            found.append((name, None))
        break
    return found, False


# --------------------------------------------------------------------------
# Programs with their own syntax
# --------------------------------------------------------------------------


def _tar(words: Sequence[Word], effects: Effects) -> None:
    """tar: the table's options, plus what its mode writes (-x files, -c the archive)."""
    args = list(words)
    if args and not args[0].dynamic and not args[0].value.startswith("-"):
        # Old style ``tar xzf a.tar``: a bundle of letters without a dash, whose
        # options take their values from the next words in order.
        letters = args[0].value
        takers = [ch for ch in letters if _TAR.takes_value("-" + ch)]
        spread: list[Word] = [_Text("-" + ch, "-" + ch) for ch in letters if ch not in takers]
        rest = args[1:]
        for ch in takers:
            spread.append(_Text("-" + ch, "-" + ch))
            if rest:
                spread.append(rest.pop(0))
        args = spread + rest
    seen: dict[str, Word | None] = {}

    def note(name: str, value: Word | None) -> None:
        for full in _TAR_MODES:
            if name == full or (name.startswith("--") and len(name) >= 4 and full.startswith(name)):
                seen[_TAR_MODES[full]] = value

    scan_options(args, _TAR, effects, on_option=note)
    if effects.executes:
        return
    if "x" in seen and "O" not in seen:
        directory = seen.get("C")
        where = "." if "C" not in seen else (None if directory is None else _path(directory))
        effects.writes.append(("tar -x", None if "P" in seen else where))
    if any(mode in seen for mode in "cruA"):
        archive = seen.get("f")
        if archive is not None and archive.value != "-":
            effects.writes.append(("tar -f", _path(archive)))


# tar's mode and placement options, long and short, by their short letter.
_TAR_MODES: dict[str, str] = {
    "-x": "x",
    "--extract": "x",
    "--get": "x",
    "-O": "O",
    "--to-stdout": "O",
    "-C": "C",
    "--directory": "C",
    "-P": "P",
    "--absolute-names": "P",
    "-f": "f",
    "--file": "f",
    "-c": "c",
    "--create": "c",
    "-r": "r",
    "--append": "r",
    "-u": "u",
    "--update": "u",
    "-A": "A",
    "--catenate": "A",
    "--concatenate": "A",
}


def _git(words: Sequence[Word], effects: Effects) -> None:
    k = 0
    while k < len(words):
        word = words[k]
        if _may_be_option(word):
            effects.executes = True
            return
        v = word.value
        if not v.startswith("-"):
            break
        name = v.partition("=")[0]
        # --config-env sets a setting from the environment; --exec-path=DIR
        # picks where git finds its own programs.
        if name == "--config-env" or (name == "--exec-path" and "=" in v):
            effects.executes = True
            return
        if v == "-c" and not _git_setting_is_display(words[k + 1] if k + 1 < len(words) else None):
            effects.executes = True
            return
        k += 2 if v in GIT_GLOBAL_VALUE_OPTIONS else 1
    if k >= len(words):
        return
    sub = words[k].value
    if sub == "submodule":
        if any(w.value == "foreach" or _may_be_option(w) for w in words[k + 1 :]):
            effects.executes = True
        return
    spec = _GIT_SUBCOMMANDS.get(sub)
    if spec is not None:
        scan_options(words[k + 1 :], spec, effects)


def _ssh(words: Sequence[Word], effects: Effects) -> None:
    """ssh/scp/sftp: ``-o Key=value`` runs something only for a few keys."""

    def note(name: str, value: Word | None) -> None:
        if name != "-o":
            return
        if value is None or value.dynamic:
            effects.executes = True
            return
        key = re.split(r"[=\s]", value.value.strip(), maxsplit=1)[0].lower()
        if key in _SSH_KEYS:
            effects.executes = True

    scan_options(words, _SSH, effects, on_option=note)


def _make(words: Sequence[Word], effects: Effects) -> None:
    def operand(word: Word) -> None:
        name, eq, _ = word.value.partition("=")
        if eq and name.strip() in ("SHELL", "MAKESHELL", ".SHELLFLAGS", "MAKEFLAGS", "MFLAGS"):
            effects.executes = True

    scan_options(words, _MAKE, effects, on_operand=operand)


def _vim(words: Sequence[Word], effects: Effects) -> None:
    """vim: ``+CMD`` operands run ex commands; ``+N`` and ``+/pattern`` only move."""

    def operand(word: Word) -> None:
        if word.value.startswith("+") and not re.fullmatch(r"\+\d*|\+/[^|]*", word.value):
            effects.executes = True

    scan_options(words, _VIM, effects, on_operand=operand)


# --- sed -------------------------------------------------------------------

# -i/--in-place takes its backup suffix attached only; -e's value is a script.
_SED = _opts(runs="-f --file", values="-e --expression -l --line-length", optional="-i")
# One-letter commands that take nothing after them (q/Q/l/L may take a number).
_SED_PLAIN = frozenset("pPdDnNgGhHxlLqQzF=")
_SED_ADDRESS = re.compile(
    r"\s*(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1)[^\\\n]|\\.)*\1[IM]*)"
)


def _sed_address(script: str, i: int) -> int:
    m = _SED_ADDRESS.match(script, i)
    return m.end() if m else i


def _sed_script(script: str, effects: Effects) -> None:
    """Find sed's ``e`` (run), ``w``/``W`` (write) and ``s///e``/``s///w`` forms.

    Reads the GNU grammar; a command it does not know counts as running."""
    i, n = 0, len(script)
    while i < n and not effects.executes:
        if script[i] in " \t\n;{}":
            i += 1
            continue
        if script[i] == "#":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        j = _sed_address(script, i)
        if j < n and script[j] == ",":
            j = _sed_address(script, j + 1)
            m = re.match(r"\s*[+~]\d+", script[j:])
            j += m.end() if m else 0
        while j < n and script[j] in " \t!":
            j += 1
        if j >= n:
            return
        cmd = script[j]
        j += 1
        line_end = script.find("\n", j)
        line_end = n if line_end < 0 else line_end
        if cmd in _SED_PLAIN:
            m = re.match(r"[ \t]*\d*", script[j:])
            i = j + (m.end() if m else 0)
        elif cmd in "{}":
            i = j
        elif cmd in "aicrR:":
            i = line_end  # text or a file read, to the end of the line
        elif cmd in "btTv":
            semi = script.find(";", j, line_end)
            i = line_end if semi < 0 else semi
        elif cmd in "wW":
            effects.writes.append((f"sed {cmd}", script[j:line_end].strip() or None))
            i = line_end
        elif cmd in "sy":
            i = _sed_substitute(script, j, cmd, effects)
        else:  # e, and anything this reading does not know
            effects.executes = True
            rest = script[j:line_end].strip()
            if cmd == "e" and rest:
                effects.commands.append(rest)


def _sed_substitute(script: str, j: int, cmd: str, effects: Effects) -> int:
    n = len(script)
    if j >= n or script[j] in "\\\n":
        effects.executes = True
        return n
    delim = script[j]
    j += 1
    for _ in range(2):  # the pattern, then the replacement
        while j < n and script[j] != delim:
            j += 2 if script[j] == "\\" else 1
        if j >= n:
            effects.executes = True  # unterminated: sed refuses it, nothing to cover
            return n
        j += 1
    if cmd == "y":
        return j
    while j < n and script[j] not in ";\n}#":
        flag = script[j]
        if flag == "w":
            end = script.find("\n", j)
            end = n if end < 0 else end
            effects.writes.append(("sed s///w", script[j + 1 : end].strip() or None))
            return end
        if flag not in "gpiImM0123456789 \t":  # e runs the pattern space
            effects.executes = True
            return n
        j += 1
    return j


def _sed(words: Sequence[Word], effects: Effects) -> None:
    scripts: list[Word] = []
    operands: list[Word] = []
    in_place = False

    def option(name: str, value: Word | None) -> None:
        nonlocal in_place
        if name == "-i" or _is(name, _SED_LONG, _SED_LONG.values):
            in_place = True
        elif name == "-e" or _is(name, _SED, frozenset({"--expression"})):
            if value is None:
                effects.executes = True
            else:
                scripts.append(value)

    scan_options(words, _SED, effects, on_operand=operands.append, on_option=option)
    if effects.executes:
        return
    if not scripts and operands:
        scripts.append(operands.pop(0))
    for script in scripts:
        if script.dynamic:
            effects.executes = True
            return
        _sed_script(script.value, effects)
    if in_place:
        effects.writes.extend(("sed -i", _path(w)) for w in operands)


# Long in-place option, abbreviations included (--in, --in-pl…).
_SED_LONG = _opts(values="--in-place")


# --- awk -------------------------------------------------------------------

# gawk's -f/-E/-i/-l load program text or libraries; -o/-p/-d write files,
# -D debugs. Only -F, -v and the program text itself are read here.
_AWK = _opts(
    runs="-f --file -E --exec -i --include -l --load -o --pretty-print -p --profile "
    "-d --dump-variables -D --debug",
    values="-F --field-separator -v --assign -e --source",
)
_AWK_RUNS = re.compile(r"\bsystem\s*\(|@load|@include|\|&|/inet|\bgetline\s*<")


def _awk_program(text: str) -> bool:
    """True when awk program text may run a command or write a file.

    Conservative: ``system(``, any pipe other than ``||`` (``print | "cmd"``,
    ``"cmd" | getline``), and ``>`` in a statement that prints."""
    if _AWK_RUNS.search(text) or "|" in text.replace("||", ""):
        return True
    return any(
        re.search(r"\bprintf?\b", statement) and ">" in statement
        for statement in re.split(r"[;{}\n]", text)
    )


def _awk(words: Sequence[Word], effects: Effects) -> None:
    operands: list[Word] = []
    programs: list[Word] = []

    def option(name: str, value: Word | None) -> None:
        if name == "-e" or _is(name, _AWK, frozenset({"--source"})):
            if value is None:
                effects.executes = True
            else:
                programs.append(value)

    scan_options(words, _AWK, effects, on_operand=operands.append, on_option=option)
    if effects.executes:
        return
    if not programs and operands:
        programs.append(operands[0])
    if any(p.dynamic or _awk_program(p.value) for p in programs):
        effects.executes = True


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------

_CUSTOM: dict[str, Callable[[Sequence[Word], Effects], None]] = {
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "git": _git,
    "tar": _tar,
    "gtar": _tar,
    "ssh": _ssh,
    "scp": _ssh,
    "sftp": _ssh,
    "make": _make,
    "gmake": _make,
    "vim": _vim,
    "vi": _vim,
    "nvim": _vim,
    "view": _vim,
    "ex": _vim,
}


def program_effects(words: Sequence[Word]) -> Effects:
    """What the program ``words[0]`` runs or writes through its own options."""
    effects = Effects()
    if not words or words[0].dynamic:
        return effects
    program = os.path.basename(words[0].value)
    custom = _CUSTOM.get(program)
    if custom is not None:
        custom(words[1:], effects)
    elif program in _GETOPT:
        scan_options(words[1:], _GETOPT[program], effects)
    return effects
