"""Claude Code's ``settings.json``: where hooks and its permission rules come from.

The files, lowest precedence first (docs/HOOKS.md#where-hooks-come-from):

1. ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``) - the user's, shared with Claude Code;
2. ``<reasonix home>/settings.json`` (``~/.reasonix/settings.json``) - the user's;
3. in each project folder (the git root down to the workspace):
   ``.claude/settings.json``, ``.claude/settings.local.json``, ``.reasonix/settings.json``;
4. ``--settings FILE|JSON`` - the user's own, for one run.

Every file's hooks run (a hook is not replaced by a later one); ``permissions``
``deny`` and ``ask`` rules add up from every file; ``allow`` rules and
``additionalDirectories`` add up from the files that apply; the highest
``defaultMode`` wins. A project's files are untrusted input: their risky part
(:func:`reasonix_core.trust.risky_claude_settings`: hooks, allow rules,
additional directories, a loosening default mode) applies only once the folder
is trusted; their deny and ask rules always apply.

A file that is not valid is a :class:`ConfigError` naming the file and the field,
so a run never starts with half of a user's policy.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reasonix_core.errors import ConfigError
from reasonix_core.fsutil import FileTooLarge, NotARegularFile, read_bounded
from reasonix_core.hooks.names import our_name
from reasonix_core.hooks.spec import HookSpec
from reasonix_core.project import file_label, project_folders
from reasonix_core.trust import (
    CLAUDE_SETTINGS_FILES,
    RiskySetting,
    claude_user_dir,
    review_project,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "LoadedSettings",
    "SettingsRule",
    "hooks_listing",
    "load_settings",
    "parse_settings",
]

EventName = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
]
EVENTS: tuple[str, ...] = EventName.__args__  # type: ignore[attr-defined]
#: Seconds a hook may run before its process group is killed (Claude Code's default).
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
#: A settings file is a few kilobytes; anything far larger is not one.
MAX_SETTINGS_BYTES = 4 << 20
Scope = Literal["user", "project", "flag"]


class _Model(BaseModel):
    # Claude Code's settings hold much we do not read (env, statusLine, model...).
    model_config = ConfigDict(extra="ignore", frozen=True)


class HookCommandModel(_Model):
    type: Literal["command", "prompt", "agent"] = "command"
    command: str = ""
    timeout: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT)


class MatcherGroupModel(_Model):
    matcher: str = ""
    hooks: list[HookCommandModel] = Field(default_factory=list[HookCommandModel])

    @field_validator("matcher")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from None
        return value


class PermissionsModel(_Model):
    allow: list[str] = Field(default_factory=list[str])
    ask: list[str] = Field(default_factory=list[str])
    deny: list[str] = Field(default_factory=list[str])
    additionalDirectories: list[str] = Field(default_factory=list[str])
    defaultMode: (
        Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] | None
    ) = None


class SettingsModel(_Model):
    hooks: dict[str, list[MatcherGroupModel]] = Field(
        default_factory=dict[str, list[MatcherGroupModel]]
    )
    permissions: PermissionsModel = Field(default_factory=PermissionsModel)
    disableAllHooks: bool = False


@dataclass(frozen=True, slots=True)
class SettingsRule:
    """A ``permissions`` rule from a settings file, in our grammar."""

    kind: Literal["allow", "ask", "deny"]
    rule: str
    source: str


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """What the settings files that apply declare."""

    hooks: tuple[HookSpec, ...] = ()
    rules: tuple[SettingsRule, ...] = ()
    additional_directories: tuple[Path, ...] = ()
    # (Claude Code's mode, the file that set it), the highest file's.
    default_mode: tuple[str, str] | None = None
    # Risky project settings left out because the folder is not trusted.
    withheld: tuple[RiskySetting, ...] = ()
    # Every settings file read, lowest precedence first.
    files: tuple[str, ...] = ()
    # Events named in a file that Reasonix does not run (shown by /hooks).
    ignored: tuple[str, ...] = ()

    def rules_of(self, kind: str) -> list[str]:
        return [r.rule for r in self.rules if r.kind == kind]

    def origin(self, rule: str) -> str | None:
        """The file a rule came from (the first that declares it)."""
        return next((r.source for r in self.rules if r.rule == rule), None)

    def for_event(self, event: str) -> tuple[HookSpec, ...]:
        return tuple(h for h in self.hooks if h.event == event)


@dataclass(frozen=True, slots=True)
class _File:
    path: Path | None  # None: inline JSON from --settings
    scope: Scope
    label: str
    # The folder `/path` rules are relative to.
    base: Path
    text: str | None = None


def load_settings(
    workspace: Path,
    home: Path,
    *,
    trust_project: bool = False,
    extra: Sequence[str] = (),
    claude_dir: Path | None = None,
) -> LoadedSettings:
    """Read every settings file for ``workspace``; ``extra``: ``--settings`` values
    (a file or inline JSON). Raises :class:`ConfigError` for a bad file."""
    workspace = Path(os.path.realpath(workspace))
    claude_dir = claude_user_dir() if claude_dir is None else claude_dir
    user_home = Path(os.path.expanduser("~"))
    files: list[_File] = [
        _File(claude_dir / "settings.json", "user", _user_label(claude_dir / "settings.json"),
              user_home),
        _File(home / "settings.json", "user", _user_label(home / "settings.json"), user_home),
    ]  # fmt: skip
    user_files = {os.path.realpath(f.path) for f in files if f.path is not None}
    for folder in project_folders(workspace):
        for name in CLAUDE_SETTINGS_FILES:
            path = folder / name
            if os.path.realpath(path) in user_files:
                continue
            files.append(_File(path, "project", file_label(path, workspace), folder))
    for value in extra:
        files.append(_flag_file(value, workspace))

    parsed: list[tuple[_File, SettingsModel, dict[str, Any]]] = []
    preread: dict[Path, Any] = {}
    for f in files:
        raw = _read(f)
        if raw is None:
            continue
        model = parse_settings(raw, f.label)
        parsed.append((f, model, raw))
        if f.scope == "project" and f.path is not None:
            preread[f.path] = raw
    withheld: tuple[RiskySetting, ...] = ()
    trusted = True
    if not trust_project and preread:
        review = review_project(workspace, home, preread=preread)
        if review.needs_trust:
            trusted = False
            withheld = review.risky
    return _collect(parsed, trusted, withheld)


def hooks_listing(workspace: Path, home: Path, *, extra: Sequence[str] = ()) -> str:
    """``/hooks``: every hook that applies, by event, with its matcher and file;
    the project's that wait for trust; the events named that Reasonix does not run."""
    loaded = load_settings(workspace, home, extra=extra)
    lines: list[str] = []
    for event in EVENTS:
        for hook in loaded.for_event(event):
            matcher = f" [{hook.matcher}]" if hook.matcher else ""
            lines.append(f"{event}{matcher}: {hook.command}  ({hook.source}, {hook.timeout:g} s)")
    if not lines:
        lines.append("No hooks configured (docs/HOOKS.md: settings.json \"hooks\").")
    waiting = [s for s in loaded.withheld if s.setting.startswith("hooks")]
    if waiting:
        lines.append("Not applied until this folder is trusted (`reasonix trust`):")
        lines.extend(f"  {s}" for s in waiting)
    lines.extend(f"Ignored: {entry}" for entry in loaded.ignored)
    return "Hooks\n  " + "\n  ".join(lines)


def _user_label(path: Path) -> str:
    text = str(path)
    home = os.path.expanduser("~")
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + os.sep) else text


def _flag_file(value: str, workspace: Path) -> _File:
    stripped = value.strip()
    if stripped.startswith("{"):
        return _File(None, "flag", "--settings (inline JSON)", workspace, text=stripped)
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = workspace / path
    if not path.is_file():
        raise ConfigError(f"--settings {value}: no such file (give a settings.json or inline JSON)")
    return _File(path, "flag", str(path), workspace)


def _read(f: _File) -> dict[str, Any] | None:
    if f.text is not None:
        text = f.text
    else:
        assert f.path is not None
        raw = _read_bounded(f.path, f.label)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError(f"{f.label}: invalid JSON: not valid UTF-8") from None
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{f.label}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except (ValueError, RecursionError):
        raise ConfigError(f"{f.label}: invalid JSON: nested too deeply or too large") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{f.label}: a settings file holds a JSON object")
    return data  # type: ignore[return-value]


def _read_bounded(path: Path, label: str) -> bytes | None:
    """A settings file's bytes (None: absent); a FIFO, a device or a huge file is
    refused without hanging or reading it (fsutil.read_bounded)."""
    try:
        return read_bounded(path, MAX_SETTINGS_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except NotARegularFile:
        raise ConfigError(f"{label}: cannot read: not a regular file") from None
    except FileTooLarge:
        raise ConfigError(f"{label}: too large to be a settings file") from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot read: {exc.strerror or exc}") from None


def parse_settings(data: Mapping[str, Any], label: str) -> SettingsModel:
    """Validate one file; a problem is a :class:`ConfigError` naming file and field."""
    try:
        return SettingsModel.model_validate(data)
    except ValidationError as exc:
        from reasonix_core.config.layer import describe_error

        lines = [f"{label}: {describe_error(err)}" for err in exc.errors(include_url=False)]
        raise ConfigError("\n".join(lines[:5])) from None
    except RecursionError:
        raise ConfigError(f"{label}: nested too deeply") from None


def _collect(
    parsed: Sequence[tuple[_File, SettingsModel, dict[str, Any]]],
    trusted: bool,
    withheld: tuple[RiskySetting, ...],
) -> LoadedSettings:
    hooks: list[HookSpec] = []
    rules: list[SettingsRule] = []
    dirs: list[Path] = []
    default_mode: tuple[str, str] | None = None
    ignored: list[str] = []
    disabled = False
    for f, model, _raw in parsed:
        # An untrusted project's file only tightens: its deny and ask rules, a
        # default mode that asks no less.
        applies = f.scope != "project" or trusted
        perms = model.permissions
        rules += _rules(f, perms, ("allow", "ask", "deny") if applies else ("ask", "deny"))
        mode = perms.defaultMode
        if mode is not None and (applies or mode in ("default", "plan", "dontAsk")):
            default_mode = (mode, f.label)
        if not applies:
            continue
        for entry in perms.additionalDirectories:
            p = Path(os.path.expanduser(entry))
            dirs.append(p if p.is_absolute() else f.base / p)
        disabled = disabled or model.disableAllHooks
        hooks += _hooks(f, model, ignored)
    return LoadedSettings(
        hooks=() if disabled else tuple(hooks),
        rules=tuple(rules),
        additional_directories=tuple(dict.fromkeys(dirs)),
        default_mode=default_mode,
        withheld=withheld,
        files=tuple(f.label for f, _m, _r in parsed),
        ignored=tuple(ignored),
    )


def _rules(
    f: _File, perms: PermissionsModel, kinds: Sequence[Literal["allow", "ask", "deny"]]
) -> list[SettingsRule]:
    """One file's rules of ``kinds``, in our grammar; a bad one names file and field."""
    from reasonix_core.permission.rules import RuleError, parse_rule

    out: list[SettingsRule] = []
    for kind in kinds:
        for i, text in enumerate(getattr(perms, kind)):
            rule = translate_rule(text, f.base)
            try:
                parse_rule(rule)
            except RuleError as exc:
                raise ConfigError(f"{f.label}: permissions.{kind}[{i}]: {exc}") from None
            out.append(SettingsRule(kind, rule, f.label))
            if kind != "allow" and rule != text and _single_slash(text):
                # `/etc/x` means <settings folder>/etc/x in Claude Code; a deny or
                # ask rule also holds for the absolute path a user may have meant.
                out.append(SettingsRule(kind, text.strip(), f.label))
    return out


def _hooks(f: _File, model: SettingsModel, ignored: list[str]) -> list[HookSpec]:
    """One file's command hooks; what Reasonix does not run goes to ``ignored``."""
    out: list[HookSpec] = []
    for event, groups in model.hooks.items():
        if event not in EVENTS:
            ignored.append(f"{f.label}: hooks.{event}")
            continue
        for group in groups:
            for hook in group.hooks:
                if hook.type != "command" or not hook.command.strip():
                    ignored.append(f"{f.label}: hooks.{event} ({hook.type} hook)")
                    continue
                timeout = hook.timeout or DEFAULT_TIMEOUT
                out.append(HookSpec(event, group.matcher, hook.command, timeout, f.label))
    return out


_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\((.*)\))?\s*$", re.S)
_PATH_TOOLS = frozenset(
    {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"}
)


def _single_slash(text: str) -> bool:
    m = _RULE.match(text)
    spec = m.group(3) if m is not None else None
    return bool(
        m is not None
        and m.group(1) in _PATH_TOOLS
        and spec
        and spec.startswith("/")
        and not spec.startswith("//")
    )


def translate_rule(text: str, base: Path) -> str:
    """A Claude Code rule in our grammar: its tool names (``MultiEdit`` ->
    ``multi_edit``) and its path forms (``//abs`` is absolute, ``/p`` is relative to
    the folder holding the settings folder, ``./p`` and ``p`` to the workspace)."""
    m = _RULE.match(text) if isinstance(text, str) else None
    if m is None:
        return text
    tool, spec = m.group(1), m.group(3)
    ours = tool if tool in ("Bash", "Read", "Edit", "Write", "WebFetch") else our_name(tool)
    if spec is None:
        return ours
    if tool in _PATH_TOOLS:
        if spec.startswith("//"):
            spec = spec[1:]
        elif spec.startswith("/"):
            spec = str(base / spec.lstrip("/"))
    return f"{ours}({spec})"
