"""Project trust: a repository's own settings apply only once the user trusts its folder.

A cloned repository is untrusted input. Its ``reasonix.toml`` and ``.mcp.json``
may hold settings that decide where the user's API key goes or what runs
without asking; those are *risky* and are withheld until the user trusts the
folder (``reasonix trust``, ``--trust-project``, or the TUI's trust dialog).
Everything else in the project file (tightening rules, effort, compaction...)
always applies.

Claude Code's ``settings.json`` files in a project (``.claude/settings.json``,
``.claude/settings.local.json``, ``.reasonix/settings.json``) are project files
too: their ``hooks`` run commands on the host, and their ``permissions``
``allow`` rules, ``additionalDirectories`` and a loosening ``defaultMode``
(``acceptEdits``, ``bypassPermissions``) widen what runs without asking; those are
risky (:func:`risky_claude_settings`). Their ``deny`` and ``ask`` rules always apply.

Risky (see :func:`risky_settings`): any ``[[providers]]`` entry,
``default_model``; ``[permissions]`` ``mode = "allow"``, a ``preset`` other than
``ask``, ``allow`` rules, ``additional_directories``; ``[sandbox]`` ``bash`` other
than ``enforce``, ``network = true``, ``allow_write``, ``workspace_root``;
``[tools] enabled`` (it can turn back on tools the user turned off); ``[mcp]``
and every ``.mcp.json`` server (they run commands).

Trust is recorded in ``<home>/trusted.toml`` per folder, bound to a sha256 of the
risky settings (canonical JSON per file), so a later change to any of them makes
the folder untrusted again. The user's own ``config.toml`` is always trusted.

Stdlib only (beside :mod:`reasonix_core.home`, outside the config package, which
imports pydantic): the TUI reviews the folder before its first frame.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reasonix_core.errors import ConfigError
from reasonix_core.fsutil import FileTooLarge, NotARegularFile, read_bounded
from reasonix_core.project import file_label, project_folders

__all__ = [
    "CLAUDE_SETTINGS_FILES",
    "MCP_JSON",
    "PROJECT_FILE",
    "TRUST_FILE",
    "ProjectReview",
    "RiskySetting",
    "read_settings_json",
    "record_trust",
    "review_project",
    "revoke_trust",
    "risky_claude_settings",
    "risky_settings",
    "strip_risky",
]

PROJECT_FILE = "reasonix.toml"
MCP_JSON = ".mcp.json"
#: Claude Code's settings files in a project folder, lowest precedence first.
CLAUDE_SETTINGS_FILES: tuple[str, ...] = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".reasonix/settings.json",
)
TRUST_FILE = "trusted.toml"
# A trust file is a few lines per folder; anything far larger is not one.
MAX_TRUST_FILE_BYTES = 1 << 20
MAX_PROJECT_FILE_BYTES = 4 << 20
_VALUE_WIDTH = 72
_NOT_READ = object()


@dataclass(frozen=True, slots=True)
class RiskySetting:
    """One risky setting a project file would apply, for display."""

    file: str  # "reasonix.toml" or ".mcp.json"
    setting: str  # "providers[0] 'deepseek'", "permissions.preset"
    value: str  # shown escaped and shortened

    def __str__(self) -> str:
        return f"{self.file}: {self.setting} = {self.value}"


@dataclass(frozen=True, slots=True)
class ProjectReview:
    """What a folder's project files would change, and whether the user trusted that."""

    folder: Path
    risky: tuple[RiskySetting, ...] = ()
    # sha256 of the risky settings ("" when there are none).
    digest: str = ""
    trusted: bool = False

    @property
    def needs_trust(self) -> bool:
        return bool(self.risky) and not self.trusted

    def files(self) -> list[str]:
        return list(dict.fromkeys(s.file for s in self.risky))

    def summary(self) -> str:
        """One line: each file with the names of its risky settings."""
        parts = []
        for name in self.files():
            settings = ", ".join(dict.fromkeys(s.setting for s in self.risky if s.file == name))
            parts.append(f"{name} ({settings})")
        return "; ".join(parts)


# --- what is risky ----------------------------------------------------------------


def risky_settings(data: Mapping[str, Any]) -> dict[str, Any]:
    """The risky part of a raw ``reasonix.toml`` (empty when it only tightens)."""
    out: dict[str, Any] = {}
    for key in ("providers", "default_model", "mcp"):
        # An empty value changes nothing ("" model = the first of the user's providers).
        if key in data and data[key] not in ([], {}, ""):
            out[key] = data[key]
    perms = data.get("permissions")
    if isinstance(perms, Mapping):
        risky = {k: perms[k] for k in _risky_keys(perms, _PERMISSION_RISKS)}
        if risky:
            out["permissions"] = risky
    elif "permissions" in data:  # not a table: never validated, never applied
        out["permissions"] = perms
    sandbox = data.get("sandbox")
    if isinstance(sandbox, Mapping):
        risky = {k: sandbox[k] for k in _risky_keys(sandbox, _SANDBOX_RISKS)}
        if risky:
            out["sandbox"] = risky
    elif "sandbox" in data:
        out["sandbox"] = sandbox
    tools = data.get("tools")
    if isinstance(tools, Mapping):
        if "enabled" in tools:
            out["tools"] = {"enabled": tools["enabled"]}
    elif "tools" in data:
        out["tools"] = tools
    return out


#: ``permissions.defaultMode`` values that run more without asking than the default.
_LOOSE_DEFAULT_MODES = frozenset({"acceptEdits", "bypassPermissions"})


def risky_claude_settings(data: object) -> dict[str, Any]:
    """The risky part of a parsed ``settings.json``: its ``hooks`` (commands run on
    the host) and the ``permissions`` that loosen (empty when it only tightens)."""
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, Any] = {}
    hooks = data.get("hooks")
    if hooks not in (None, {}, []):
        out["hooks"] = hooks
    perms = data.get("permissions")
    if isinstance(perms, Mapping):
        risky: dict[str, Any] = {}
        for key in ("allow", "additionalDirectories"):
            if key in perms and perms[key] not in ([], None):
                risky[key] = perms[key]
        mode = perms.get("defaultMode")
        if mode is not None and not (isinstance(mode, str) and mode not in _LOOSE_DEFAULT_MODES):
            risky["defaultMode"] = mode
        if risky:
            out["permissions"] = risky
    elif perms is not None:
        out["permissions"] = perms
    return out


def _non_empty(value: object) -> bool:
    return value != [] and value != ""


# key -> predicate on its value: True when that value loosens something.
_PERMISSION_RISKS = {
    "mode": lambda v: not (isinstance(v, str) and v in ("ask", "deny")),
    "preset": lambda v: not (isinstance(v, str) and v == "ask"),
    "allow": _non_empty,
    "additional_directories": _non_empty,
}
_SANDBOX_RISKS = {
    "bash": lambda v: not (isinstance(v, str) and v == "enforce"),
    "network": lambda v: v is not False,
    "allow_write": _non_empty,
    "workspace_root": _non_empty,
    # Anything but a plain byte count within the default (1 GiB) could let a command
    # fill the host's RAM through the sandbox's /tmp.
    "tmp_size": lambda v: not (isinstance(v, int) and not isinstance(v, bool) and v <= 1 << 30),
}


def _risky_keys(table: Mapping[str, Any], risks: Mapping[str, Any]) -> list[str]:
    return [k for k, loosens in risks.items() if k in table and loosens(table[k])]


def strip_risky(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without its risky settings: what an untrusted project may apply."""
    risky = risky_settings(data)
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in risky:
            out[key] = value
        elif isinstance(value, Mapping) and isinstance(risky[key], Mapping):
            kept = {k: v for k, v in value.items() if k not in risky[key]}
            if kept:
                out[key] = kept
    return out


def _mcp_json_servers(data: object) -> object:
    """The ``mcpServers`` object of a parsed ``.mcp.json`` (None: it declares nothing)."""
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    return servers if servers else None


# --- reviewing a folder ------------------------------------------------------------


def review_project(
    folder: Path,
    home: Path,
    *,
    preread: Mapping[Path, Any] | None = None,
) -> ProjectReview:
    """What the project files seen from ``folder`` would change, and whether that
    is trusted.

    The files are ``reasonix.toml`` and ``.mcp.json`` in every folder from the git
    root down to ``folder`` (:func:`reasonix_core.project.project_folders`): an
    ancestor's settings apply to a run from a subfolder, so they are part of what
    the trust recorded for ``folder`` covers. A file in ``folder`` itself is named
    as before (``reasonix.toml``), an ancestor's relative to it
    (``../../reasonix.toml``).

    ``preread``: parsed files by path when the caller has read them already (so
    the verdict is about exactly what it will apply); a ``None`` value means the
    file is absent or unreadable. A file that cannot be parsed declares nothing
    here: the loaders report it and apply nothing from it.
    """
    folder = Path(os.path.realpath(folder))
    known = {_real_file(path): data for path, data in (preread or {}).items()}
    content: dict[str, Any] = {}
    for place in project_folders(folder):
        project_file, mcp_file = place / PROJECT_FILE, place / MCP_JSON
        project_data = known.get(project_file, _NOT_READ)
        if project_data is _NOT_READ:
            project_data = _read_project_toml(project_file)
        mcp_data = known.get(mcp_file, _NOT_READ)
        if mcp_data is _NOT_READ:
            mcp_data = _read_mcp_json(mcp_file)
        if isinstance(project_data, Mapping):
            risky = risky_settings(project_data)
            if risky:
                content[file_label(project_file, folder)] = risky
        servers = _mcp_json_servers(mcp_data)
        if servers is not None:
            content[file_label(mcp_file, folder)] = {"mcpServers": servers}
        for name in CLAUDE_SETTINGS_FILES:
            settings_file = place / name
            if _is_user_settings(settings_file):
                continue  # the user's own ~/.claude/settings.json, seen from a repo at ~
            settings_data = known.get(settings_file, _NOT_READ)
            if settings_data is _NOT_READ:
                settings_data = read_settings_json(settings_file)
            risky_part = risky_claude_settings(settings_data)
            if risky_part:
                content[file_label(settings_file, folder)] = risky_part
    if not content:
        return ProjectReview(folder)
    try:
        digest = hashlib.sha256(_canonical(content).encode()).hexdigest()
    except (RecursionError, ValueError):  # nested too deeply to hash: cannot be trusted
        names = " and ".join(content)
        raise ConfigError(f"{folder}: {names}: settings nested too deeply") from None
    shown = tuple(s for name, part in content.items() for s in _describe(name, part))
    trusted = _recorded_digests(home).get(str(folder)) == digest
    return ProjectReview(folder, shown, digest, trusted)


def _real_file(path: Path) -> Path:
    """``path`` with its folder resolved (the file itself may be a link)."""
    return Path(os.path.realpath(path.parent)) / path.name


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


def _read_limited(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (None when absent, not a file, or too large).

    O_NONBLOCK and the fstat check keep a FIFO or a device planted under the
    name from hanging or flooding the reader."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit + 1)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_project_toml(path: Path) -> dict[str, Any] | None:
    raw = _read_limited(path, MAX_PROJECT_FILE_BYTES)
    if raw is None:
        return None
    try:
        return tomllib.loads(raw.decode("utf-8-sig"))
    # ValueError also covers a number Python will not load (over 4,300 digits).
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def read_settings_json(path: Path) -> object:
    """A project ``settings.json`` as parsed JSON (None: absent, unreadable or not
    JSON; the hooks loader reports a broken file and applies nothing from it)."""
    return _read_mcp_json(path)


def claude_user_dir() -> Path:
    """Claude Code's user folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(os.path.expanduser(configured or "~/.claude"))


def _is_user_settings(path: Path) -> bool:
    user = claude_user_dir() / "settings.json"
    try:
        return os.path.realpath(path) == os.path.realpath(user)
    except (OSError, ValueError):
        return False


def _read_mcp_json(path: Path) -> object:
    raw = _read_limited(path, MAX_PROJECT_FILE_BYTES)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


# --- display -------------------------------------------------------------------------


def _show(value: object) -> str:
    """A value as one short, escaped line: a hostile file cannot move the cursor."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=True)
    else:
        try:
            text = _canonical(value)
        except (TypeError, ValueError, RecursionError):
            text = "(unreadable value)"
    return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 1] + "…"


def _name(value: object) -> str:
    return _show(value if isinstance(value, str) else str(value)).replace('"', "'")


def _describe(file: str, part: Mapping[str, Any]) -> list[RiskySetting]:
    out: list[RiskySetting] = []
    for key, value in part.items():
        if key == "providers" and isinstance(value, list):
            for i, entry in enumerate(value):
                out.append(_describe_provider(file, i, entry))
        elif key in ("mcp", "mcpServers"):
            out.extend(_describe_mcp(file, key, value))
        elif key == "hooks":
            out.extend(_describe_hooks(file, value))
        elif isinstance(value, Mapping):
            out.extend(RiskySetting(file, f"{key}.{k}", _show(v)) for k, v in value.items())
        else:
            out.append(RiskySetting(file, key, _show(value)))
    return out


def _describe_provider(file: str, index: int, entry: object) -> RiskySetting:
    if not isinstance(entry, Mapping):
        return RiskySetting(file, f"providers[{index}]", _show(entry))
    setting = f"providers[{index}] {_name(entry.get('name', '?'))}"
    for key in ("request_url", "base_url"):
        if entry.get(key):
            return RiskySetting(file, f"{setting} {key}", _show(entry[key]))
    return RiskySetting(file, setting, _show(dict(entry)))


def _describe_mcp(file: str, key: str, value: object) -> list[RiskySetting]:
    servers = value.get("servers", value) if key == "mcp" and isinstance(value, Mapping) else value
    if isinstance(servers, Mapping):
        items = [(name, body) for name, body in servers.items()]
    elif isinstance(servers, list):
        items = [
            (b.get("name", f"#{i}") if isinstance(b, Mapping) else f"#{i}", b)
            for i, b in enumerate(servers)
        ]
    else:
        return [RiskySetting(file, key, _show(servers))]
    label = "mcp.servers" if key == "mcp" else "mcpServers"
    out = []
    for name, body in items:
        setting = f"{label} {_name(name)}"
        if isinstance(body, Mapping) and body.get("command"):
            listed = body.get("args")
            args = listed if isinstance(listed, list) else []
            line = " ".join(str(a) for a in [body["command"], *args])
            out.append(RiskySetting(file, f"{setting} command", _show(line)))
        elif isinstance(body, Mapping) and body.get("url"):
            out.append(RiskySetting(file, f"{setting} url", _show(body["url"])))
        else:
            out.append(RiskySetting(file, setting, _show(body)))
            continue
        # What the server is sent: headers (an Authorization: Bearer ${..._API_KEY}
        # to a "docs" URL) and every environment variable it expands, shown in
        # full so the user sees a key leaving before trusting it.
        if isinstance(body.get("headers"), Mapping) and body["headers"]:
            out.append(RiskySetting(file, f"{setting} headers", _show(body["headers"])))
        names = sorted(set(_ENV_REF.findall(_canonical(body))))
        if names:
            shown = ", ".join(json.dumps(n, ensure_ascii=True)[1:-1] for n in names)
            out.append(RiskySetting(file, f"{setting} reads environment", shown))
    return out


def _plain(value: object) -> str:
    """A name escaped onto one line, without quotes (a hostile key cannot move the cursor)."""
    return json.dumps(str(value), ensure_ascii=True)[1:-1][:_VALUE_WIDTH]


def _describe_hooks(file: str, hooks: object) -> list[RiskySetting]:
    """Each hook command, by event and matcher: what would run on the host."""
    if not isinstance(hooks, Mapping):
        return [RiskySetting(file, "hooks", _show(hooks))]
    out: list[RiskySetting] = []
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out.append(RiskySetting(file, f"hooks.{_plain(event)}", _show(groups)))
            continue
        for group in groups:
            matcher = group.get("matcher", "") if isinstance(group, Mapping) else ""
            where = f"hooks.{_plain(event)}" + (f"[{_plain(matcher)}]" if matcher else "")
            commands = group.get("hooks") if isinstance(group, Mapping) else None
            if not isinstance(commands, list):
                out.append(RiskySetting(file, where, _show(group)))
                continue
            for hook in commands:
                command = hook.get("command") if isinstance(hook, Mapping) else hook
                out.append(RiskySetting(file, f"{where} command", _show_command(command)))
    return out


#: Characters of a hook command the review shows (far more than one line's width).
_COMMAND_WIDTH = 1000
_BLANKS = re.compile(r" {8,}")


def _show_command(command: object) -> str:
    """A hook command escaped onto one line and shown nearly whole: a hostile
    repository cannot hide what runs behind padding past the line's width (runs of
    spaces are counted, not printed; what is still cut says how much)."""
    if not isinstance(command, str):
        return _show(command)
    text = _BLANKS.sub(
        lambda m: f" <{len(m.group())} spaces> ", json.dumps(command, ensure_ascii=True)
    )
    if len(text) <= _COMMAND_WIDTH:
        return text
    return f"{text[:_COMMAND_WIDTH]}… ({len(text) - _COMMAND_WIDTH} more characters not shown)"


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")


# --- the trust file ----------------------------------------------------------------


def _trust_path(home: Path) -> Path:
    return home / TRUST_FILE


def _recorded_digests(home: Path) -> dict[str, str]:
    """folder -> digest from ``<home>/trusted.toml``; a broken file is a ConfigError."""
    path = _trust_path(home)
    try:
        raw = read_bounded(path, MAX_TRUST_FILE_BYTES)
    except FileNotFoundError:
        return {}
    except NotARegularFile:
        raise ConfigError(f"{path}: not a regular file; remove it and trust folders again") from None
    except FileTooLarge:
        raise ConfigError(f"{path}: too large to be a trust file; remove it") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{path}: not a valid trust file ({reason}); remove it") from None
    folders = data.get("folder", [])
    if not isinstance(folders, list):
        raise ConfigError(f"{path}: not a valid trust file ([[folder]] entries expected)")
    out: dict[str, str] = {}
    for i, entry in enumerate(folders):
        if not (
            isinstance(entry, Mapping)
            and isinstance(entry.get("path"), str)
            and isinstance(entry.get("digest"), str)
        ):
            raise ConfigError(
                f"{path}: not a valid trust file (folder[{i}] needs a path and a digest)"
            )
        out[entry["path"]] = entry["digest"]
    return out


def _write_trust_file(home: Path, entries: Mapping[str, str]) -> None:
    from reasonix_core.fsutil import atomic_write_text

    lines = [
        "# Folders whose project settings you trusted (`reasonix trust`).",
        "# Each is bound to a hash of those settings: a change asks again.",
    ]
    now = datetime.now(UTC).isoformat(timespec="seconds")
    for folder, digest in entries.items():
        lines += [
            "",
            "[[folder]]",
            f"path = {_toml_string(folder)}",
            f"digest = {_toml_string(digest)}",
        ]
        lines.append(f'recorded = "{now}"')
    path = _trust_path(home)
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_text(path, "\n".join(lines) + "\n", mode=0o600)
    except UnicodeEncodeError:
        raise ConfigError(f"{path}: cannot record a folder whose name is not valid UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _toml_string(text: str) -> str:
    """A TOML basic string; every control character escaped, as TOML requires."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@contextmanager
def _exclusive(home: Path) -> Iterator[None]:
    """Serialise read-modify-write of the trust file (two `reasonix trust` at once
    must not lose an entry). Without fcntl (Windows) the last writer wins."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = home / f".{TRUST_FILE}.lock"
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise ConfigError(f"{lock}: cannot lock: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def record_trust(review: ProjectReview, home: Path) -> None:
    """Trust ``review.folder`` for exactly the risky settings ``review`` saw."""
    if not review.risky:
        return
    with _exclusive(home):
        entries = _recorded_digests(home)
        entries[str(review.folder)] = review.digest
        _write_trust_file(home, entries)


def revoke_trust(folder: Path, home: Path) -> bool:
    """Forget the trust recorded for ``folder``; False when there was none."""
    key = str(Path(os.path.realpath(folder)))
    with _exclusive(home):
        entries = _recorded_digests(home)
        if key not in entries:
            return False
        del entries[key]
        _write_trust_file(home, entries)
    return True
