"""The permission policy: one verdict (allow / ask / deny) per tool call.

Precedence is ``deny > ask > allow > fallback``:

1. any **deny** rule hitting any part of the call denies it, in every preset;
2. session grants (``add_session_allow``, ``--allowed-tools``) allow a call
   when, together with the configured allow rules, they cover every part of it
   and every part an ask rule hit; they never override a deny;
3. any **ask** rule hitting any part asks;
4. configured **allow** rules allow when they cover every part (every segment
   of a compound bash command, both ends of a move);
5. fallback: read-only tools are allowed, writers follow ``mode`` under preset
   ``ask``; preset ``auto`` allows writers; preset ``yolo`` additionally turns
   every remaining ask (rule or fallback) into an allow.

Two fallbacks ask even for tools that change nothing, because what they reach
is itself the risk: ``web_fetch`` (network egress: a URL can carry whatever the
model read) and a read-family tool on a path outside the readable roots (the
workspace, the session temp dir, ``[sandbox] allow_write``, ``--add-dir`` and
``[permissions] additional_directories``). Only an allow rule
(``WebFetch(domain:HOST)``, ``Read(PATH)``), a session grant or preset ``yolo``
allows them; ``auto`` still asks, and mode ``deny`` (preset ``ask``) denies them.
``remember`` of a global fact falls back the same way: it is recalled in every
project, so an injected instruction would outlive the repository it came from.

Protected paths (``forbid_read``: the Reasonix home and the usual credential
folders, plus the user's list) are denied to every file tool right after the
deny rules; no allow rule, grant or preset reaches them.
"""

from __future__ import annotations

import enum
import os
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from reasonix_core.permission.rules import (
    Call,
    Rule,
    RuleError,
    WriteTarget,
    builtin_family,
    builtin_tool,
    covering_rules,
    parse_rule,
    parse_rules,
    rule_hits,
    split_rules,
)
from reasonix_core.permission_modes import PLAN_MODE, PLAN_MODE_SUMMARY, PRESET_SUMMARY, PRESETS
from reasonix_core.tool.base import ToolFamily

if TYPE_CHECKING:
    from reasonix_core.config.schema import PermissionsConfig
    from reasonix_core.permission.shell_lexer import Segment

#: Why a writer is refused in plan mode (the model reads it in the tool result).
PLAN_MODE_REFUSAL = (
    "plan mode is on: file writes, bash and tools that may change anything are blocked "
    "until the user approves a plan. Research with read-only tools, then call "
    "exit_plan_mode with your plan"
)

__all__ = [
    "MODES",
    "MULTIPLEXERS",
    "PLAN_MODE",
    "PLAN_MODE_REFUSAL",
    "PLAN_MODE_SUMMARY",
    "PRESETS",
    "PRESET_SUMMARY",
    "Decision",
    "Policy",
    "Verdict",
    "explain",
]

MODES: tuple[str, ...] = ("ask", "allow", "deny")
#: Protected for file tools only: /proc/<pid>/environ holds this process's
#: environment (API keys set there), /proc/<pid>/mem its memory. Not a bash
#: sandbox mask: sandboxed bash gets its own /proc of its own PID namespace.
PROCESS_VIEWS: tuple[str, ...] = ("/proc",)

#: Commands whose second word names the real action, so a session grant for
#: ``git status`` does not also grant ``git push``.
MULTIPLEXERS: frozenset[str] = frozenset(
    {
        "git",
        "go",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "uv",
        "pip",
        "pip3",
        "poetry",
        "docker",
        "kubectl",
        "make",
        "gh",
        "dotnet",
    }
)
_PYTHONS = frozenset({"python", "python3"})


class Verdict(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Decision:
    """The policy's verdict on one call and why."""

    verdict: Verdict
    # The rule text that decided (several joined with ", "), None for a fallback.
    rule: str | None
    # A human sentence: "denied by rule Bash(git push*)".
    reason: str
    # How a headless run could allow this call, when the usual advice
    # (--allowed-tools SCOPE or -y/--auto) would be wrong; None otherwise.
    hint: str | None = None


def _join(rules: Iterable[Rule]) -> str:
    return ", ".join(dict.fromkeys(r.text for r in rules))


class ReadFilter:
    """Whether a tool must not see a path, judged for the many entries of one
    walk (see :meth:`Policy.read_filter`). Call it with a path and, as
    ``is_link``, whether that path is a symlink when the caller knows (None:
    looked up)."""

    def __init__(
        self,
        policy: Policy,
        *,
        matchers: tuple[Callable[[str], bool], ...],
        leads: tuple[str, ...],
        views: tuple[str, ...],
    ) -> None:
        self._policy = policy
        self._matchers = matchers
        self._leads = leads  # what every path a deny rule matches starts with
        self._views = views
        self._protected = frozenset(views)
        self._protected_below = tuple(f.rstrip("/") + "/" for f in views)

    def _hit(self, candidate: str) -> bool:
        if candidate in self._protected or candidate.startswith(self._protected_below):
            return True
        return any(match(candidate) for match in self._matchers)

    def __call__(self, path: Path | str, *, is_link: bool | None = None) -> bool:
        text = os.fspath(path)
        if "\x00" in text:
            return True
        # A walker's paths are already absolute and normal; only others need
        # normalising (a cost per entry otherwise).
        normal = text.startswith("/") and "/." not in text and "//" not in text
        found = text if normal and not text.endswith("/") else os.path.abspath(text)
        if self._hit(found):
            return True
        if is_link is None:
            is_link = os.path.islink(found)
        if not is_link:
            return False
        return self.reached(found, _real(found))

    def reached(self, path: str, real: str) -> bool:
        """Whether a tool must not see ``real``, the physical path that ``path``
        (absolute, normal; a symlink, or a name a folder swap may have moved)
        led to: judged on the file actually opened when that is known."""
        policy = self._policy
        if policy._readable(path) and not policy._readable(real):
            # A link planted in the workspace must not carry a search to a
            # file outside that reading it by name would have to ask for.
            return True
        return self._hit(real)

    def may_deny_in(self, directory: str) -> bool:
        """False when no entry directly in ``directory`` (absolute, normal) can
        be denied unless it is a symlink: a walk then skips the check there."""
        under = directory.rstrip("/") + "/"
        if directory in self._protected or directory.startswith(self._protected_below):
            return True
        if any(view.startswith(under) for view in self._views):
            return True
        return any(lead.startswith(under) or under.startswith(lead) for lead in self._leads)


class Policy:
    """Rules plus fallback posture; see the module docstring for precedence."""

    def __init__(
        self,
        mode: str = "ask",
        preset: str = "ask",
        allow: Iterable[str | Rule] | None = None,
        ask: Iterable[str | Rule] | None = None,
        deny: Iterable[str | Rule] | None = None,
        workspace: Path | str = ".",
        *,
        read_roots: Iterable[Path | str] = (),
        forbid_read: Iterable[Path | str] = (),
    ) -> None:
        self.mode = mode
        self.preset = preset
        self.allow: list[Rule] = parse_rules(allow)
        self.ask: list[Rule] = parse_rules(ask)
        self.deny: list[Rule] = parse_rules(deny)
        self.workspace = Path(os.path.realpath(Path(workspace).expanduser()))
        # Folders read-family tools reach without asking, besides the workspace.
        self.read_roots: list[str] = []
        self.add_read_roots(*read_roots)
        # Paths no file tool may touch, whatever the rules say.
        self.forbid_read: tuple[str, ...] = tuple(_real(p) for p in forbid_read)
        self._session: list[Rule] = []
        self._auto_allow: dict[str, Callable[[Mapping[str, Any]], str | None]] = {}
        # Plan mode (docs/MODES.md#plan-mode): every writer is denied, whatever the
        # preset, rules or grants say, until the user approves a plan. Only the
        # user turns it on; only an approved ``exit_plan_mode`` turns it off.
        self.plan_mode = False

    # -- posture ------------------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        value = str(value).lower()
        if value not in MODES:
            raise ValueError(f"permission mode must be one of {', '.join(MODES)}, not {value!r}")
        self._mode = value

    @property
    def preset(self) -> str:
        return self._preset

    @preset.setter
    def preset(self, value: str) -> None:
        value = str(value).lower()
        if value not in PRESETS:
            raise ValueError(
                f"permission preset must be one of {', '.join(PRESETS)}, not {value!r}"
            )
        self._preset = value

    @classmethod
    def from_config(
        cls,
        permissions_config: PermissionsConfig,
        workspace: Path | str,
        extra_allow: Sequence[str] = (),
        *,
        preset: str | None = None,
        read_roots: Iterable[Path | str] = (),
        forbid_read: Iterable[Path | str] = (),
    ) -> Policy:
        """Build from any object with ``mode``, ``preset``, ``allow``, ``ask``, ``deny``.

        ``extra_allow`` (``--allowed-tools``) become session grants; each item
        may hold several rules separated by spaces or commas. ``preset``
        overrides the config's preset (``-y`` / ``--yolo``). ``read_roots`` and
        ``forbid_read`` are resolved paths (see :meth:`add_read_roots`).
        """
        cfg = permissions_config
        policy = cls(
            mode=getattr(cfg, "mode", None) or "ask",
            preset=preset or getattr(cfg, "preset", None) or "ask",
            allow=getattr(cfg, "allow", None) or (),
            ask=getattr(cfg, "ask", None) or (),
            deny=getattr(cfg, "deny", None) or (),
            workspace=workspace,
            read_roots=read_roots,
            forbid_read=forbid_read,
        )
        for item in extra_allow:
            policy.add_session_allow(item)
        return policy

    # -- where reads reach ---------------------------------------------------
    def add_read_roots(self, *roots: Path | str) -> None:
        """Let read-family tools reach ``roots`` (and below) without asking."""
        for root in roots:
            real = _real(root)
            if real not in self.read_roots:
                self.read_roots.append(real)

    def _readable(self, path: str) -> bool:
        return any(_within(path, root) for root in (str(self.workspace), *self.read_roots))

    def _protected(self, path: str) -> str | None:
        """The ``forbid_read`` (or process view) entry covering ``path``, or None."""
        return next((f for f in (*self.forbid_read, *PROCESS_VIEWS) if _within(path, f)), None)

    def read_denied(self, tool: str, path: Path | str) -> bool:
        """True when ``tool`` must not see ``path``: a deny rule or forbid_read
        covers it, or it is a symlink in a readable folder pointing out of them.

        For walking tools (ls, glob, grep): an entry met inside an allowed
        folder is skipped when reading it directly would be denied. The path
        as found is checked and, when it is a symlink, its target too (the
        walkers pass entries of an already resolved folder, so only the last
        component can be a link; resolving every entry would cost a syscall
        per path component).
        """
        return self.read_filter(tool)(path)

    def read_filter(self, tool: str) -> ReadFilter:
        """:meth:`read_denied` for ``tool`` over the many entries of one walk:
        the deny rules' own paths are resolved once, now, so each entry costs
        only comparisons."""
        pairs = [rule.path_matcher(self.workspace) for rule in self.deny if rule.applies_to(tool)]
        return ReadFilter(
            self,
            matchers=tuple(match for match, _ in pairs),
            leads=tuple(lead for _, lead in pairs),
            views=(*self.forbid_read, *PROCESS_VIEWS),
        )

    # -- session grants -------------------------------------------------------
    @property
    def session_allows(self) -> tuple[Rule, ...]:
        return tuple(self._session)

    def add_session_allow(self, rule: str | Rule) -> list[Rule]:
        """Grant ``rule`` (or a space/comma separated list) for this session.

        Returns the rules added. Session grants never override a deny rule.
        Raises :class:`RuleError` when a rule is malformed.
        """
        if isinstance(rule, Rule):
            new = [rule]
        else:
            try:
                new = [parse_rule(rule)]
            except RuleError:
                parts = split_rules(rule)
                if len(parts) <= 1:
                    raise
                new = [parse_rule(p) for p in parts]
        known = {r.text for r in self._session}
        added = [r for r in new if r.text not in known]
        self._session.extend(added)
        return added

    def clear_session(self) -> None:
        self._session.clear()

    # -- deciding -----------------------------------------------------------
    def decide(self, tool: str, read_only: bool, args: Mapping[str, Any] | None) -> Decision:
        call = Call.build(tool, args, self.workspace)
        refusal = self._refusal(call, read_only)
        if refusal is not None:
            return refusal
        cover = covering_rules([*self._session, *self.allow], call, self.workspace)
        ruled = self._rule_verdict(call, cover)
        if ruled is not None:
            return ruled
        reach = self._reach_verdict(tool, call, args, cover)
        if reach is not None:
            return reach
        return self._default_verdict(tool, read_only, args)

    def _refusal(self, call: Call, read_only: bool) -> Decision | None:
        """The refusals nothing overrides: deny rules, plan mode, protected paths, ``.git``."""
        for rule in self.deny:
            if rule_hits(rule, call, self.workspace, loose=True):
                return Decision(Verdict.DENY, rule.text, f"denied by rule {rule.text}")

        if self.plan_mode and not read_only:
            # Before grants, allow rules and presets: none of them answers plan mode.
            return Decision(Verdict.DENY, None, PLAN_MODE_REFUSAL)

        # A bash redirection into a protected path is a file write like any other.
        for path in (*call.paths, *(w.path for w in call.writes if w.path)):
            protected = self._protected(path)
            if protected is not None:
                return Decision(
                    Verdict.DENY,
                    None,
                    f"{path} is inside the protected path {protected} (forbid_read: "
                    "keys and credentials); no rule or preset lets a tool read or write it",
                )

        return self._git_metadata_refusal(call)

    def _rule_verdict(self, call: Call, cover: list[Rule | None]) -> Decision | None:
        """What the ask, session and allow rules say, or None when no rule answers.

        ``cover`` holds, per path of the call, the session or allow rule that
        covers it. Session grants answer before ask rules, but only when every
        path an ask rule hit is covered by a session grant.
        """
        asked: set[int] = set()
        ask_rule: Rule | None = None
        for rule in self.ask:
            hits = rule_hits(rule, call, self.workspace, loose=True)
            if hits and ask_rule is None:
                ask_rule = rule
            asked |= hits

        session = set(map(id, self._session))
        covered = all(r is not None for r in cover)
        used = [r for r in cover if r is not None]
        if covered and any(id(r) in session for r in used):
            if all(cover[n] is not None and id(cover[n]) in session for n in asked):
                text = _join(used)
                return Decision(Verdict.ALLOW, text, f"allowed for this session by {text}")

        if ask_rule is not None:
            if self.preset == "yolo":
                return Decision(
                    Verdict.ALLOW,
                    ask_rule.text,
                    f"rule {ask_rule.text} asks, but preset yolo allows it",
                )
            return Decision(Verdict.ASK, ask_rule.text, f"rule {ask_rule.text} requires approval")

        if covered:  # by configured allow rules alone (a session rule returned above)
            text = _join(used)
            return Decision(Verdict.ALLOW, text, f"allowed by rule {text}")
        return None

    def _reach_verdict(
        self,
        tool: str,
        call: Call,
        args: Mapping[str, Any] | None,
        cover: list[Rule | None],
    ) -> Decision | None:
        """Ask for calls reaching past the session: global memory, the network, outside reads."""
        if tool == "remember" and _global_fact(args):
            # Recalled into every later session of every project: a repository's
            # injected instructions must not persist past it without a yes.
            return self._reach_fallback(
                "a global memory fact is recalled in every project", '--allowed-tools "remember"'
            )
        family = builtin_family(tool)
        if family is ToolFamily.NETWORK:  # web_fetch: egress asks unless a rule allows it
            host = urlsplit(call.url or "").hostname or "HOST"
            return self._reach_fallback(
                f"{tool} sends data to the network",
                f'--allowed-tools "WebFetch(domain:{host.lower()})"',
            )
        if family is ToolFamily.READ:
            # A path an allow rule or grant covers is fine; the rule verdict
            # needed every path covered, readable ones included.
            outside = [
                p for n, p in enumerate(call.paths) if cover[n] is None and not self._readable(p)
            ]
            if outside:
                scope = " ".join(self.scope_rules(tool, args))
                return self._reach_fallback(
                    f"{outside[0]} is outside the workspace and the readable folders",
                    f'--add-dir {shlex.quote(outside[0])} or --allowed-tools "{scope}"',
                )
        return None

    def _default_verdict(
        self, tool: str, read_only: bool, args: Mapping[str, Any] | None
    ) -> Decision:
        """No rule answered: readers are allowed, writers follow preset, mode and hooks."""
        if read_only:
            return Decision(Verdict.ALLOW, None, "read-only tool: allowed by default")
        if self.preset in ("auto", "yolo"):
            return Decision(Verdict.ALLOW, None, f"writer allowed by preset {self.preset}")
        if self.mode == "allow":
            return Decision(Verdict.ALLOW, None, "writer falls back to mode allow")
        if self.mode == "deny":
            return Decision(Verdict.DENY, None, "writer falls back to mode deny")
        hook = self._auto_allow.get(tool)
        if hook is not None:
            try:
                why = hook(args if isinstance(args, Mapping) else {})
            except Exception:  # a broken hook never allows anything
                why = None
            if why:
                return Decision(Verdict.ALLOW, None, f"{why}: allowed without asking")
        return Decision(Verdict.ASK, None, "writer falls back to mode ask")

    # -- git metadata ---------------------------------------------------------
    def _git_metadata_refusal(self, call: Call) -> Decision | None:
        """Refuse file-tool writes under any ``.git`` unless a rule names ``.git``.

        Hooks and config in a ``.git`` directory run on the host the next time
        the user runs git, so no preset (not even yolo) and no broad rule such
        as ``Edit`` or ``Edit(**)`` allows writing there: only an allow or
        session rule whose path names a ``.git`` component (``Edit(.git/**)``)
        and matches every such path in the call (both ends of a move).
        """
        if builtin_family(call.tool) is ToolFamily.EDIT:
            tool, paths = call.tool, call.paths
        elif call.writes:  # bash redirecting into a file writes it like write_file
            tool, paths = "write_file", tuple(w.path for w in call.writes if w.path)
        else:
            return None
        explicit = [
            rule
            for rule in (*self._session, *self.allow)
            if rule.applies_to(tool) and rule.specifier and _names_git(rule.specifier)
        ]
        for path in paths:
            # Judged inside the workspace, so a workspace that itself lives
            # under some ``.git`` folder still works.
            shown = _shown(path, self.workspace)
            if not _names_git(shown):
                continue
            if any(rule.unit_match(path, self.workspace, loose=False) for rule in explicit):
                continue
            return Decision(
                Verdict.DENY,
                None,
                f"{shown} is git metadata: file tools never write under .git (hooks and "
                "config there run on the host) unless an explicit Edit(.git/**) rule allows it",
            )
        return None

    def _reach_fallback(self, what: str, how: str) -> Decision:
        """Egress and outside reads: only yolo allows without a rule; auto still asks."""
        if self.preset == "yolo":
            return Decision(Verdict.ALLOW, None, f"{what}: allowed by preset yolo")
        if self.preset == "ask" and self.mode == "deny":
            return Decision(Verdict.DENY, None, f"{what}: denied by mode deny")
        return Decision(
            Verdict.ASK,
            None,
            f"{what}: approval needed in preset {self.preset}",
            hint=f"{how} (or --permission-mode yolo)",
        )

    # -- tool-owned exceptions to "ask" -------------------------------------
    def add_auto_allow(self, tool: str, check: Callable[[Mapping[str, Any]], str | None]) -> None:
        """Let ``check(args)`` turn the *fallback* ask for ``tool`` into an allow.

        Consulted last, only where the writer fallback would ask: deny and ask
        rules, session grants and mode ``deny`` all win over it. ``check``
        returns a reason (shown in ``explain``) or None. Used for the memory
        writes that seed 000 §3.6 lets save without asking (bounded,
        non-sensitive, create-only project/reference facts); only the
        controller that owns the project's fact store installs it.
        """
        self._auto_allow[tool] = check

    # -- session scope ----------------------------------------------------------
    def scope_for(self, tool: str, args: Mapping[str, Any] | None) -> str:
        """The rule text(s) an "allow for this session" answer grants, space-separated.

        See :meth:`scope_rules` for what is granted per tool.
        """
        return " ".join(self.scope_rules(tool, args))

    def scope_rules(self, tool: str, args: Mapping[str, Any] | None) -> list[str]:
        """The rule(s) an "allow for this session" answer grants for this call.

        bash: a command-prefix rule per segment still needing approval
        (``Bash(pytest:*)``, ``Bash(git status:*)``), space-separated;
        file writers: ``Edit(<parent dir>/**)`` (``Edit(./*)`` at the workspace
        root); file readers: the same with ``Read``; web_fetch:
        ``WebFetch(domain:<host>)``; anything else: the tool name.
        """
        args = args if isinstance(args, Mapping) else {}
        call = Call.build(tool, args, self.workspace)
        if tool == "bash" and call.command is not None:
            return self._bash_scope(call)
        family = builtin_family(tool)
        if family in (ToolFamily.EDIT, ToolFamily.READ):
            alias = "Edit" if family is ToolFamily.EDIT else "Read"
            if not call.paths:
                return [alias]
            scopes = [self._path_scope(alias, p, tool) for p in call.paths[:2]]
            return list(dict.fromkeys(scopes))
        if tool == "web_fetch" and call.url:
            host = urlsplit(call.url).hostname
            return [f"WebFetch(domain:{host.lower()})" if host else "WebFetch"]
        return [tool]

    def _path_scope(self, family: str, path: str, tool: str) -> str:
        scope = f"{family}({self._dir_glob(path, tool)})"
        try:
            rule = parse_rule(scope)
        except RuleError:
            rule = None
        if rule is None or not rule.unit_match(path, self.workspace, loose=False):
            return f"{family}={path}"
        return scope

    def _dir_glob(self, path: str, tool: str) -> str:
        target = path
        writer = builtin_family(tool) is ToolFamily.EDIT
        if writer or not os.path.isdir(path):
            target = os.path.dirname(path) or "/"
        ws = str(self.workspace)
        if target == ws:
            return "./*" if writer else "./**"
        if target.startswith(ws.rstrip("/") + "/"):
            rel = target[len(ws.rstrip("/")) + 1 :]
            return f"{rel}/**"
        return f"{target.rstrip('/')}/**"

    def _bash_scope(self, call: Call) -> list[str]:
        assert call.command is not None
        segments = call.command.segments
        cover = covering_rules([*self._session, *self.allow], call, self.workspace)
        asked: set[int] = set()
        for rule in self.ask:
            asked |= rule_hits(rule, call, self.workspace, loose=True)
        needed = [s for n, s in enumerate(segments) if cover[n] is None or n in asked]
        if not needed:
            needed = [segments[0]]
        literal = [f"Bash={call.command.command.strip()}"]
        if not call.command.complete:
            return literal
        scopes: list[str] = []
        for seg in needed:
            scope = _prefix_scope(seg)
            if scope is None:
                return literal
            try:
                rule = parse_rule(scope)
            except RuleError:
                return literal
            if not rule.unit_match(seg, self.workspace, loose=False):
                return literal
            scopes.append(scope)
        # Files the command writes by redirection need an Edit grant of their own.
        for n, unit in enumerate(call.units()):
            if isinstance(unit, WriteTarget) and (cover[n] is None or n in asked):
                try:
                    grant = parse_rule(f"Edit({unit.path})") if unit.path else None
                except RuleError:
                    grant = None
                if grant is None or not grant.write_match(unit, self.workspace):
                    return literal
                scopes.append(grant.text)
        return list(dict.fromkeys(scopes))


def _global_fact(args: Mapping[str, Any] | None) -> bool:
    """True when a ``remember`` call may write a global fact: scope global, a type
    whose default scope is global, or an update by id without ``scope="project"``
    (the tool refuses a scope that does not match the fact's)."""
    if not isinstance(args, Mapping):
        return True
    scope = args.get("scope")
    if scope is not None:
        return scope != "project"
    return args.get("type") in ("user", "feedback") or bool(args.get("id"))


def _names_git(path: str) -> bool:
    """True when a path (or path rule) has a ``.git`` component (any case: the
    file systems of macOS and Windows fold it)."""
    return any(part.lower() == ".git" for part in path.replace("\\", "/").split("/"))


def _shown(path: str, workspace: Path) -> str:
    root = str(workspace).rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else path


def _real(path: Path | str) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# A segment headed by a reserved word ("for", "case", "[[") names no program: a prefix rule
# of one ("Bash(for:*)") would mean nothing the user could read, so such a command is
# offered as itself (``Bash=<the exact command>``).
def _prefix_scope(seg: Segment) -> str | None:
    from reasonix_core.permission.shell_lexer import RESERVED_WORDS  # loaded with the command

    words = seg.words
    if not words or any(not w or w.isspace() for w in words[:3]):
        return None
    if words[0] in RESERVED_WORDS:
        return None
    prefix = [*seg.assignments, words[0]]
    first = os.path.basename(words[0])
    if first in _PYTHONS and len(words) >= 3 and words[1] == "-m":
        prefix = [*seg.assignments, *words[:3]]
    elif first in MULTIPLEXERS and len(words) >= 2 and not words[1].startswith("-"):
        prefix = [*seg.assignments, *words[:2]]
    if any(_needs_quote(w) for w in prefix):
        return None
    return f"Bash({' '.join(prefix)}:*)"


def _needs_quote(word: str) -> bool:
    return any(c.isspace() or c in "'\"\\()`$;&|<>#*?" for c in word)


_TOOL_FOR_ALIAS = {
    "bash": "bash",
    "read": "read_file",
    "edit": "edit_file",
    "write": "write_file",
    "webfetch": "web_fetch",
}


def explain(
    policy: Policy,
    tool: str,
    arg: str | None = None,
    *,
    read_only: bool | None = None,
    origin: Callable[[str], str | None] | None = None,
) -> str:
    """What the policy would decide for ``tool`` with one argument, as text lines.

    ``origin``: the file a rule text came from (None: unknown), shown beside it.

    Backs ``reasonix permissions check TOOL [ARG]``: bash takes ARG as the
    command, web_fetch as the URL, file tools as the path (``move_file`` also
    accepts ``"a -> b"``). Aliases such as ``Bash`` or ``Edit`` are accepted.
    """
    name = _TOOL_FOR_ALIAS.get(
        tool.lower(), tool.lower() if builtin_tool(tool.lower()) is not None else tool
    )
    args: dict[str, Any] = {}
    if arg is not None:
        if name == "bash":
            args = {"command": arg}
        elif name == "web_fetch":
            args = {"url": arg}
        elif name == "move_file":
            src, sep, dst = arg.partition("->")
            args = {"source_path": src.strip()}
            if sep:
                args["destination_path"] = dst.strip()
        elif builtin_family(name) in (ToolFamily.EDIT, ToolFamily.READ):
            args = {"path": arg}
    if read_only is None:  # what the tool itself declares; unknown tools are writers
        declared = builtin_tool(name)
        read_only = declared is not None and declared.read_only
    decision = policy.decide(name, read_only, args)
    lines = [
        f"tool: {name}" + (f" {arg}" if arg is not None else ""),
        f"decision: {decision.verdict.value}",
        f"rule: {decision.rule if decision.rule is not None else 'none (fallback)'}",
    ]
    if decision.rule is not None and origin is not None:
        whole = origin(decision.rule)
        # Several rules that covered the call together are joined with ", ".
        parts = [whole] if whole else [origin(p) for p in decision.rule.split(", ")]
        files = [f for f in parts if f]
        if files:
            lines.append("from: " + ", ".join(dict.fromkeys(files)))
    lines.append(f"reason: {decision.reason}")
    call = Call.build(name, args, policy.workspace)
    if call.command is not None and len(call.command.segments) > 1:
        lines.append("segments: " + " | ".join(s.raw for s in call.command.segments))
    if call.writes:
        lines.append("writes: " + ", ".join(w.path or w.redirect.raw for w in call.writes))
    if call.paths:
        lines.append("paths: " + ", ".join(call.paths))
    if decision.verdict is Verdict.ASK:
        lines.append(f"session scope: {policy.scope_for(name, args)}")
    lines.append(f"posture: preset {policy.preset}, mode {policy.mode}")
    return "\n".join(lines)
