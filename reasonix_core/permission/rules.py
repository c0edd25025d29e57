"""Permission rules: parsing ``Tool``, ``Tool(specifier)`` and ``Bash=<literal>``,
and matching a rule against one tool call.

A call is broken into *units* (the things a rule's specifier talks about):
the segments of a bash command (found by :mod:`.shell_lexer`, followed by
the files its redirections write, which ``Edit``-family rules judge), the
paths of a file tool, the URL of ``web_fetch``. Deny and ask rules hit a call
when they hit **any** unit; an
allow needs **every** unit covered (see :func:`covering_rules`). Calls without
units (``todo_write``, MCP tools, a file tool missing its path) have a single
empty unit that only a bare ``Tool`` rule covers.

Everything here is pure; which built-in is a reader or a writer is the
``family`` its tool class declares (``tool/builtin``), never a list kept here.
The policy that combines the rule lists lives in
:mod:`reasonix_core.permission.policy`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from reasonix_core.permission.globs import (
    GLOB_CHARS,
    collapse_spaces,
    command_glob,
    path_glob_match,
    resolve_path,
    resolve_pattern,
)
from reasonix_core.tool.base import ToolFamily

if TYPE_CHECKING:
    from reasonix_core.permission.shell_lexer import ParsedCommand, Redirect
    from reasonix_core.tool.builtin.specs import ToolSpec

__all__ = [
    "Call",
    "Rule",
    "RuleError",
    "WriteTarget",
    "builtin_family",
    "builtin_tool",
    "covering_rules",
    "parse_rule",
    "parse_rules",
    "rule_hits",
    "split_command",
    "split_rules",
]


class RuleError(ValueError):
    """A permission rule string is malformed."""


# --------------------------------------------------------------------------
# Tool names and families
# --------------------------------------------------------------------------


@functools.cache
def _builtins() -> Mapping[str, ToolSpec]:
    # Imported on use: tool modules import permission (the approver protocol).
    from reasonix_core.tool.builtin import BUILTIN_TOOLS

    return MappingProxyType({spec.name: spec for spec in BUILTIN_TOOLS})


def builtin_tool(name: str) -> ToolSpec | None:
    """The spec of built-in tool ``name`` (its family, read-only flag...), or None for
    anything else (MCP tools)."""
    return _builtins().get(name)


def builtin_family(name: str) -> ToolFamily | None:
    """The family built-in tool ``name`` declares, or None for anything else."""
    tool = _builtins().get(name)
    return None if tool is None else tool.family


@functools.cache
def tools_of(family: ToolFamily) -> frozenset[str]:
    """The built-in tools of one family (``Read`` and ``Edit`` rules cover these)."""
    return frozenset(name for name, tool in _builtins().items() if tool.family is family)


def is_path_tool(tool: str) -> bool:
    """True for the built-ins that read or write files by path."""
    return builtin_family(tool) in (ToolFamily.READ, ToolFamily.EDIT)


# Aliases are case-insensitive; the value is the canonical rule tool name.
_ALIASES: dict[str, str] = {
    "bash": "Bash",
    "read": "Read",
    "edit": "Edit",
    "write": "Write",
    "webfetch": "WebFetch",
}
# Which concrete tools a canonical rule tool name covers: two are families,
# three name one tool each.
_ALIAS_FAMILIES: dict[str, ToolFamily] = {"Read": ToolFamily.READ, "Edit": ToolFamily.EDIT}
_ALIAS_TOOLS: dict[str, str] = {"Bash": "bash", "Write": "write_file", "WebFetch": "web_fetch"}

_TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")

# Argument keys that carry a file path, in every file tool's schema we know of
# (``move_file`` uses source_path/destination_path).
_PATH_KEYS: tuple[str, ...] = (
    "path",
    "file_path",
    "notebook_path",
    "source_path",
    "destination_path",
    "source",
    "destination",
    "src",
    "dst",
    "from_path",
    "to_path",
    "old_path",
    "new_path",
)


def canonical_tool(name: str) -> str:
    """The canonical rule tool name for ``name`` as written in a rule."""
    alias = _ALIASES.get(name.lower())
    if alias is not None:
        return alias
    if builtin_family(name.lower()) is not None:
        return name.lower()
    # Claude Code's CamelCase names of the tools Reasonix has too (TodoWrite,
    # NotebookEdit, MultiEdit, BashOutput, KillShell, ExitPlanMode).
    snake = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()
    if snake != name.lower() and builtin_family(snake) is not None:
        return snake
    if name.startswith("mcp__") and name.endswith("__*"):
        return name[:-3]
    return name


def family_of(tool: str) -> frozenset[str] | None:
    """Concrete built-in tools a canonical rule tool covers, or None for others."""
    if tool in _ALIAS_FAMILIES:
        return tools_of(_ALIAS_FAMILIES[tool])
    if tool in _ALIAS_TOOLS:
        return frozenset({_ALIAS_TOOLS[tool]})
    if builtin_family(tool) is not None:
        return frozenset({tool})
    return None


def _subject_kind(tool: str) -> str | None:
    """What a specifier of this canonical tool talks about."""
    fam = family_of(tool)
    if fam is None:
        return None
    if fam == {"bash"}:
        return "command"
    if fam == {"web_fetch"}:
        return "url"
    if all(is_path_tool(name) for name in fam):
        return "path"
    return None


# --------------------------------------------------------------------------
# Bash commands (the lexer itself lives in shell_lexer)
# --------------------------------------------------------------------------


def split_command(text: str) -> ParsedCommand:
    """The segments of a bash command (:func:`.shell_lexer.split_command`).

    The lexer is imported by the first bash rule or command, not with the rules: a
    run that sees neither never loads it (~3.5 ms of start-up)."""
    from reasonix_core.permission.shell_lexer import split_command as split

    return split(text)


def _words(text: str) -> tuple[tuple[str, ...], ...]:
    """Full words (assignments included) of a rule specifier's own commands.

    Commands the lexer finds inside others (``env rm`` → ``rm``) are left out:
    they belong to the command the rule names.
    """
    parsed = split_command(text)
    return tuple(seg.full_words for seg in parsed.segments if seg.words and not seg.via)


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """A file a bash command writes through a redirection (``> out.txt``).

    ``path`` is resolved like a file tool's path, or None when the target is
    an expansion the lexer cannot know (``> "$f"``), which no path rule covers.
    """

    path: str | None
    redirect: Redirect


# --------------------------------------------------------------------------
# The call being judged
# --------------------------------------------------------------------------


def _write_path(target: str | None, workspace: Path, *, moved: bool) -> str | None:
    """Where a redirection writes, or None when unknown.

    After a ``cd`` a relative target is relative to a directory the lexer
    does not follow, so only an absolute one is known.
    """
    if target is None:
        return None
    if moved and not os.path.isabs(os.path.expanduser(target)):
        return None
    return resolve_path(target, workspace)


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call reduced to what rules look at."""

    tool: str
    # bash: the parsed command; file tools: resolved paths; web_fetch: the URL.
    command: ParsedCommand | None = None
    paths: tuple[str, ...] = ()
    url: str | None = None
    # bash: the files its redirections write, after the segments in units().
    writes: tuple[WriteTarget, ...] = ()

    @classmethod
    def build(cls, tool: str, args: Mapping[str, Any] | None, workspace: Path) -> Call:
        args = args if isinstance(args, Mapping) else {}
        if tool == "bash":
            cmd = args.get("command")
            parsed = split_command(cmd if isinstance(cmd, str) else "")
            moved = parsed.changes_directory
            writes = tuple(
                WriteTarget(_write_path(r.target, workspace, moved=moved), r)
                for r in parsed.write_redirects
            )
            return cls(tool, command=parsed, writes=writes)
        if tool == "web_fetch":
            url = args.get("url")
            return cls(tool, url=url if isinstance(url, str) else None)
        if is_path_tool(tool):
            raw = [args[k] for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k]]
            if not raw and tool in ("ls", "glob", "grep"):
                raw = ["."]
            paths = [resolve_path(p, workspace) for p in raw]
            if tool == "glob" and isinstance(args.get("pattern"), str):
                paths.extend(_glob_leads(args["pattern"], raw[0] if raw else ".", workspace))
            return cls(tool, paths=tuple(dict.fromkeys(paths)))
        return cls(tool)

    def units(self) -> Sequence[object]:
        """What specifiers are matched against; never empty."""
        if self.command is not None:
            return (*self.command.segments, *self.writes)
        if self.paths:
            return self.paths
        if self.url is not None:
            return (self.url,)
        return (None,)


def _glob_leads(pattern: str, base: str, workspace: Path) -> list[str]:
    """The literal leading directory of each brace alternative of a glob pattern.

    The glob tool expands ``{a,b}`` and ``~`` before walking, so the policy
    must too: ``{/etc,x}/*`` reads /etc, not a folder named ``{`` in the
    workspace.
    """
    from reasonix_core.tool.ignore import expand_braces  # lazy: tool imports permission

    leads: list[str] = []
    for alternative in expand_braces(pattern):
        alternative = os.path.expanduser(alternative)
        parts = alternative.split("/")
        k = next((n for n, p in enumerate(parts) if GLOB_CHARS & set(p)), len(parts))
        lead = "/".join(parts[:k]) or ("/" if alternative.startswith("/") else "")
        if lead:
            leads.append(resolve_path(os.path.join(base, lead), workspace))
    return leads


# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """A parsed permission rule.

    ``tool`` is canonical: ``Bash``, ``Read``, ``Edit``, ``Write``, ``WebFetch``
    for the aliases, a lower-case built-in name, or an MCP name
    (``mcp__server__tool`` or ``mcp__server`` for the whole server).
    ``specifier`` is the text inside the parentheses (or after ``=`` when
    ``literal``); ``text`` is the rule exactly as written.
    """

    tool: str
    specifier: str | None = None
    literal: bool = False
    text: str = ""
    _kind: str = field(default="", init=False, repr=False, compare=False)
    _words: tuple[tuple[str, ...], ...] = field(default=(), init=False, repr=False, compare=False)
    _regexes: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", str(self))
        spec = self.specifier
        if spec is None:
            if self.literal:
                raise RuleError(f"Rule {self.text!r}: a literal rule needs a value after '='.")
            object.__setattr__(self, "_kind", "any")
            return
        subject = _subject_kind(self.tool)
        if subject is None:
            raise RuleError(
                f"Rule {self.text!r}: {self.tool} takes no specifier; "
                f"write just {self.tool!r} to match every call."
            )
        if not spec.strip():
            raise RuleError(f"Rule {self.text!r}: the specifier is empty.")
        kind: str
        words: tuple[tuple[str, ...], ...] = ()
        regexes: tuple[re.Pattern[str], ...] = ()
        if self.literal:
            kind = "literal"
        elif subject == "command":
            if spec.endswith(":*"):
                kind = "prefix"
                words = _words(spec[:-2])
                if not words:
                    raise RuleError(f"Rule {self.text!r}: the command prefix before ':*' is empty.")
                if len(words) > 1:
                    raise RuleError(
                        f"Rule {self.text!r}: a command prefix cannot contain shell operators; "
                        "write one rule per command."
                    )
            elif "*" in spec:
                kind = "glob"
                words = _words(spec)
                alt = " ".join(words[0]) if len(words) == 1 else collapse_spaces(spec)
                regexes = (command_glob(collapse_spaces(spec)), command_glob(alt))
            else:
                kind = "exact"
                words = _words(spec)
        elif subject == "url":
            if spec.startswith("domain:"):
                kind = "domain"
                domain = spec[len("domain:") :].strip().lower().rstrip(".")
                if not domain:
                    raise RuleError(f"Rule {self.text!r}: the domain is empty.")
                if domain.startswith("*."):
                    rx = r"(?:[^/]*\.)?" + re.escape(domain[2:])
                else:
                    rx = re.escape(domain)
                regexes = (re.compile(rx),)
            else:
                kind = "glob"
                regexes = (command_glob(spec.strip()),)
        else:
            kind = "path"
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_words", words)
        object.__setattr__(self, "_regexes", regexes)

    def __str__(self) -> str:
        if self.specifier is None:
            return self.tool
        if self.literal:
            return f"{self.tool}={self.specifier}"
        return f"{self.tool}({self.specifier})"

    # -- which tools --------------------------------------------------------
    def applies_to(self, tool: str) -> bool:
        fam = family_of(self.tool)
        if fam is not None:
            return tool in fam
        if self.tool.startswith("mcp__") and "__" not in self.tool[5:]:
            return tool.startswith(self.tool + "__")
        return tool == self.tool

    # -- matching -----------------------------------------------------------
    def whole_match(self, call: Call, *, loose: bool) -> bool:
        """True when the rule matches the call as a whole (every unit at once)."""
        if self._kind == "any":
            return True
        cmd = call.command
        if cmd is None:
            return False
        if self._kind == "literal":
            return cmd.command.strip() == (self.specifier or "").strip()
        if self._kind == "exact" and len(self._words) > 1:
            own = tuple(s.full_words for s in cmd.segments if s.words and not s.via)
            return self._words == own
        if loose and self._kind == "glob":
            whole = collapse_spaces(cmd.command)
            return any(rx.fullmatch(whole) for rx in self._regexes)
        return False

    def unit_match(self, unit: object, workspace: Path, *, loose: bool) -> bool:
        """True when the rule matches one unit (segment, path or URL)."""
        kind = self._kind
        spec = self.specifier or ""
        if unit is None or kind == "any":
            return kind == "any"
        if isinstance(unit, str):
            return self._text_match(unit, workspace)
        # Segments come only from a parsed bash command: the lexer is loaded.
        from reasonix_core.permission.shell_lexer import Segment, normal_forms

        if isinstance(unit, Segment):
            if kind == "literal":
                return loose and unit.raw.strip() == spec.strip()
            if not unit.words:
                return False
            if not loose:
                # Allow: only what the lexer understands, exactly as written
                # (``./git`` is not ``git``; assignments must be named).
                if unit.opaque:
                    return False
                if kind == "exact" and unit.via and len(self._words) == 1:
                    # An exact rule names the whole outer command, wrapped one included.
                    return unit.origin == self._words[0]
                return self._segment_match(unit.full_words, unit.raw)
            # Deny / ask: every spelling of the command bash will run.
            forms = [unit.words, unit.full_words, *unit.forms]
            program = self._program()
            if unit.program_glob and program and fnmatchcase(program, unit.program_glob):
                # /bin/r? -rf x may well be rm: judge it as that program.
                named = (program, *unit.words[1:])
                forms += [named, *normal_forms(named, unit.assignments)]
            return any(self._segment_match(f, unit.raw) for f in dict.fromkeys(forms))
        return False  # a WriteTarget or anything else: no rule matches it as a unit

    def path_matcher(self, workspace: Path) -> tuple[Callable[[str], bool], str]:
        """:meth:`unit_match` for resolved path units, with this rule's own path
        resolved once, now, instead of at every call (a walk judges thousands
        of entries against the same rules); and the text every path it matches
        starts with ("" when that is not known), so a walk can tell which
        folders hold nothing it could match."""
        kind = self._kind
        spec = self.specifier or ""
        if kind == "path":
            full = resolve_pattern(spec, workspace)
            if GLOB_CHARS & set(full):
                lead = full[: min(full.find(c) for c in GLOB_CHARS if c in full)]
                return (lambda unit: path_glob_match(full, unit)), lead
            base = full.rstrip("/") or "/"
            under = base.rstrip("/") + "/"
            return (lambda unit: unit == base or unit.startswith(under)), base
        if kind == "literal" and _subject_kind(self.tool) == "path":
            resolved = resolve_path(spec, workspace)
            return (lambda unit: unit == resolved), resolved
        if kind == "any":
            return (lambda unit: True), ""
        return (lambda unit: self._text_match(unit, workspace)), ""

    def _text_match(self, unit: str, workspace: Path) -> bool:
        """A path or URL unit."""
        kind = self._kind
        spec = self.specifier or ""
        if kind == "path":
            return _path_matches(spec, unit, workspace)
        if kind == "literal" and _subject_kind(self.tool) == "path":
            return resolve_path(spec, workspace) == unit
        if kind == "literal":
            return unit == spec
        if kind == "domain":
            host = (urlsplit(unit).hostname or "").lower().rstrip(".")
            return bool(host) and bool(self._regexes[0].fullmatch(host))
        if kind == "glob":
            return bool(self._regexes[0].fullmatch(unit))
        return False

    def _program(self) -> str | None:
        """The program a command rule names (``rm`` for ``Bash(rm -rf*)``)."""
        if self._kind in ("prefix", "exact") and self._words and self._words[0]:
            return self._words[0][0]
        if self._kind == "glob":
            first = (self.specifier or "").split(maxsplit=1)[0]
            return first if not GLOB_CHARS & set(first) else None
        return None

    def _segment_match(self, words: tuple[str, ...], raw: str) -> bool:
        kind = self._kind
        if kind == "prefix":
            prefix = self._words[0]
            return words[: len(prefix)] == prefix
        if kind == "exact":
            return len(self._words) == 1 and words == self._words[0]
        if kind == "glob":
            return bool(
                self._regexes[1].fullmatch(" ".join(words))
                or self._regexes[0].fullmatch(collapse_spaces(raw))
            )
        return False

    def write_match(self, target: WriteTarget, workspace: Path) -> bool:
        """True when this Edit-family rule matches a file a bash command writes."""
        if self._kind == "any":
            return True
        if target.path is None:
            return False
        if self._kind == "path":
            return _path_matches(self.specifier or "", target.path, workspace)
        if self._kind == "literal":
            return resolve_path(self.specifier or "", workspace) == target.path
        return False


def _path_matches(pattern: str, path: str, workspace: Path) -> bool:
    full = resolve_pattern(pattern, workspace)
    if GLOB_CHARS & set(full):
        return path_glob_match(full, path)
    base = full.rstrip("/") or "/"
    return path == base or path.startswith(base.rstrip("/") + "/")


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------


def _balanced(spec: str) -> bool:
    depth = 0
    quote = ""
    i = 0
    while i < len(spec):
        c = spec[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def _check_tool(name: str, text: str) -> str:
    if not name:
        raise RuleError(f"Rule {text!r}: the tool name is empty.")
    bare = name[:-3] if name.startswith("mcp__") and name.endswith("__*") else name
    if not _TOOL_NAME_RE.fullmatch(bare):
        raise RuleError(
            f"Rule {text!r}: {name!r} is not a tool name "
            "(expected e.g. Bash, Edit, Read, read_file or mcp__server__tool)."
        )
    return canonical_tool(name)


def parse_rule(text: str) -> Rule:
    """Parse ``Tool``, ``Tool(specifier)`` or ``Tool=<literal>`` into a :class:`Rule`.

    Raises :class:`RuleError` with a readable message when malformed.
    """
    if not isinstance(text, str):
        raise RuleError(f"Rule {text!r}: expected a string.")
    original = text
    text = text.strip()
    if not text:
        raise RuleError("Empty permission rule.")
    paren = text.find("(")
    eq = text.find("=")
    if eq >= 0 and (paren < 0 or eq < paren):
        tool = _check_tool(text[:eq].strip(), original)
        value = text[eq + 1 :]
        if not value.strip():
            raise RuleError(f"Rule {original!r}: nothing after '='.")
        return Rule(tool=tool, specifier=value.strip(), literal=True, text=text)
    if paren < 0:
        if ")" in text:
            raise RuleError(f"Rule {original!r}: ')' without a matching '('.")
        return Rule(tool=_check_tool(text, original), text=text)
    if not text.endswith(")"):
        if ")" not in text[paren:]:
            raise RuleError(f"Rule {original!r}: unbalanced parentheses (missing ')').")
        raise RuleError(f"Rule {original!r}: unexpected text after the closing ')'.")
    tool = _check_tool(text[:paren].strip(), original)
    spec = text[paren + 1 : -1]
    if not _balanced(spec):
        raise RuleError(f"Rule {original!r}: unbalanced parentheses in the specifier.")
    if not spec.strip():
        raise RuleError(f"Rule {original!r}: empty specifier '()'; write just {tool!r}.")
    return Rule(tool=tool, specifier=spec.strip(), text=text)


def split_rules(text: str) -> list[str]:
    """Split a rule list such as ``"Bash(go test:*) Edit, Read(docs/**)"``.

    Separators are commas and whitespace outside parentheses and quotes. A
    ``Tool=<literal>`` rule takes the rest of the string.
    """
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            cur.append(c)
        elif depth == 0 and c == "=" and cur and "(" not in cur:
            out.append("".join(cur) + text[i:].rstrip())
            return [r for r in out if r.strip()]
        elif depth > 0 and c in "'\"":
            quote = c
            cur.append(c)
        elif c == "(":
            depth += 1
            cur.append(c)
        elif c == ")":
            depth -= 1
            cur.append(c)
        elif depth <= 0 and (c.isspace() or c == ","):
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(c)
        i += 1
    if cur:
        out.append("".join(cur))
    return [r.strip() for r in out if r.strip()]


def parse_rules(items: Iterable[str | Rule] | str | None) -> list[Rule]:
    """Parse a list of rules (strings or :class:`Rule`); a string is split first."""
    if items is None:
        return []
    if isinstance(items, str):
        items = split_rules(items)
    rules: list[Rule] = []
    for item in items:
        rules.append(item if isinstance(item, Rule) else parse_rule(item))
    return rules


# --------------------------------------------------------------------------
# Combining rules over a call
# --------------------------------------------------------------------------


def rule_hits(rule: Rule, call: Call, workspace: Path, *, loose: bool) -> set[int]:
    """Indices of the call's units the rule matches (all of them on a whole match)."""
    units = call.units()
    if call.command is not None and call.tool == "bash" and rule.applies_to("write_file"):
        # Edit-family rules judge the files a bash command writes by redirection.
        return {
            n
            for n, u in enumerate(units)
            if isinstance(u, WriteTarget) and rule.write_match(u, workspace)
        }
    if not rule.applies_to(call.tool):
        return set()
    if rule.whole_match(call, loose=loose):
        if call.command is not None and rule._kind == "exact":
            return set(range(len(call.command.segments)))  # its writes still need Edit
        return set(range(len(units)))
    if call.command is not None and not call.command.complete and not loose:
        return set()  # never allow piecemeal what we could not parse
    return {n for n, u in enumerate(units) if rule.unit_match(u, workspace, loose=loose)}


def covering_rules(rules: Sequence[Rule], call: Call, workspace: Path) -> list[Rule | None]:
    """For each unit, the first rule (in order) that covers it, else None."""
    units = call.units()
    cover: list[Rule | None] = [None] * len(units)
    for rule in rules:
        if all(c is not None for c in cover):
            break
        for n in rule_hits(rule, call, workspace, loose=False):
            if cover[n] is None:
                cover[n] = rule
    return cover
