"""MCP server declarations: ``[[mcp.servers]]`` and the project ``.mcp.json``.

Sources, lowest precedence first: the user ``config.toml``, the project
``.mcp.json`` (Claude Code's ``mcpServers`` schema), the project
``reasonix.toml``. A declaration with the same name in a higher source replaces
the lower one whole (project beats global, ``reasonix.toml`` beats
``.mcp.json``). ``[mcp.servers.<name>]`` tables are accepted as well as the
``[[mcp.servers]]`` array.

``${VAR}`` and ``${VAR:-default}`` expand in ``command``, ``args``, ``env``,
``url`` and ``headers`` from the environment, then the project ``.env`` (only in a
trusted folder: otherwise the repository could pick the user's servers' commands);
``${REASONIX_WORKSPACE_ROOT}`` and ``${CLAUDE_PROJECT_DIR}`` default to the
workspace. A bad entry never stops the session: it is reported (file and entry
name, never a value) and the other servers start.

The project's declarations run commands, so they count only when the folder is
trusted (:mod:`reasonix_core.trust`); otherwise the user's own servers
start and the project's are listed in :attr:`McpSetup.withheld`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reasonix_core.config.loader import PROJECT_FILE, USER_FILE, read_toml
from reasonix_core.config.secrets import read_dotenv
from reasonix_core.errors import ConfigError
from reasonix_core.mcp.environment import PROJECT_DIR_VARIABLES
from reasonix_core.project import project_folders
from reasonix_core.trust import MCP_JSON, RiskySetting, review_project

__all__ = [
    "MCP_JSON",
    "STATEFUL_MARKERS",
    "McpConfigProblem",
    "McpServerConfig",
    "McpSetup",
    "check_header_name",
    "check_remote_text",
    "expand_vars",
    "load_mcp_setup",
    "sanitize",
]

#: Server names that look stateful default to ``concurrency = "serial"`` (seed 000 §3.16).
STATEFUL_MARKERS: tuple[str, ...] = (
    "browser",
    "playwright",
    "puppeteer",
    "chrome",
    "chromium",
    "selenium",
)
_TRANSPORTS = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


# C0 controls and DEL: a header or URL holding one smuggles a second header
# (CR LF) or rewrites the terminal that shows it (ESC); tab is allowed in a header.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110 §5.6.2)


def check_remote_text(field: str, value: str, *, url: bool = False) -> None:
    """Raise :class:`ConfigError` when ``value`` of ``field`` (a URL, a header, an
    OAuth client's id or secret) holds a control character (a URL: or a space).
    The one owner of that rule: ``mcp add`` and every loaded declaration use it."""
    if _CONTROL.search(value):
        raise ConfigError(f"{field} contains a control character; not accepted")
    if url and any(c.isspace() for c in value):
        raise ConfigError(f"{field} contains a space; not accepted")


def check_header_name(name: str) -> None:
    if not _HEADER_NAME.fullmatch(name):
        raise ConfigError(f"header name {name!r} is not an HTTP token")


def sanitize(name: str) -> str:
    """A name usable inside ``mcp__<server>__<tool>``: spaces and odd characters -> ``_``."""
    return _UNSAFE.sub("_", name.strip()).strip("_") or "_"


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerConfig:
    """One server, validated and with variables expanded."""

    name: str  # as declared
    key: str  # sanitised; the <server> part of mcp__<server>__<tool>
    transport: Literal["stdio", "http", "sse"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    startup_timeout: float = 30.0
    call_timeout: float = 300.0
    # Per tool (its name on the server): overrides call_timeout for that tool's calls.
    tool_timeouts: Mapping[str, float] = field(default_factory=dict)
    concurrency: Literal["parallel", "serial"] = "parallel"
    enabled: bool = True
    source: str = ""
    # OAuth with a client registered beforehand (no dynamic registration), and the
    # loopback port such a registration names; 0: a random port.
    client_id: str = ""
    client_secret: str = ""
    callback_port: int = 0

    @property
    def serial(self) -> bool:
        return self.concurrency == "serial"


@dataclass(frozen=True, slots=True)
class McpConfigProblem:
    source: str  # file path
    name: str  # entry name, or "#<index>" when it has none
    message: str  # names keys and variables, never values

    def __str__(self) -> str:
        return f"{self.source}: MCP server {self.name}: {self.message}"


@dataclass(frozen=True, slots=True)
class McpSetup:
    servers: tuple[McpServerConfig, ...] = ()
    problems: tuple[McpConfigProblem, ...] = ()
    # Risky project settings not applied because the folder is not trusted.
    withheld: tuple[RiskySetting, ...] = ()

    @property
    def configured(self) -> bool:
        """True when any server is declared and enabled: the proxy tool is offered."""
        return any(s.enabled for s in self.servers) or bool(self.problems)


class _Entry(BaseModel):
    """``[[mcp.servers]]``: unknown keys are errors (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    type: str | None = None
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    cwd: str = ""
    startup_timeout_seconds: float | None = Field(default=None, gt=0)
    call_timeout_seconds: float | None = Field(default=None, gt=0)
    tool_timeout_seconds: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    concurrency: Literal["parallel", "serial"] | None = None
    enabled: bool = True
    client_id: str = ""
    client_secret: str = ""
    callback_port: int | None = Field(default=None, ge=1, le=65535)


class _JsonEntry(_Entry):
    """``.mcp.json`` entries: Claude Code may add keys we do not know; ignore them.
    ``"disabled": true`` (Cursor's and Cline's spelling) turns the server off."""

    model_config = ConfigDict(extra="ignore")

    disabled: bool = False

    @model_validator(mode="after")
    def _disabled_is_not_enabled(self) -> _JsonEntry:
        if self.disabled:
            self.enabled = False
        return self


def load_mcp_setup(
    workspace: Path,
    home: Path,
    *,
    startup_timeout: float = 30.0,
    call_timeout: float = 300.0,
    environ: Mapping[str, str] | None = None,
    trust_project: bool = False,
    extra_files: Sequence[Path] = (),
) -> McpSetup:
    """Every declared server for ``workspace``, highest precedence applied.

    ``extra_files``: ``.mcp.json``-shaped files named on the command line
    (``--mcp-config``), above every other declaration; the user chose them, so
    they need no trust.

    ``startup_timeout`` / ``call_timeout`` are the ``[tools]`` defaults
    (``mcp_startup_timeout_seconds``, ``mcp_call_timeout_seconds``).
    ``trust_project``: apply the project's declarations even if the folder's
    trust is not recorded (``--trust-project``).
    """
    sources, withheld, trusted = _sources(workspace, home, trust_project)
    for path in extra_files:
        source = _json_source(path, *_read_json_once(path))
        if source[1] or source[3] is not None:
            sources.append(source)
    # The project's .env is the project's too: in an untrusted folder it must not
    # choose the command, arguments or URL of the user's own servers.
    env = _Env(workspace, environ, project_dotenv=trusted)
    chosen, nameless = _choose_entries(sources)
    servers, problems = _build_servers(chosen, env, workspace, startup_timeout, call_timeout)
    return McpSetup(tuple(servers), tuple([*nameless, *problems]), withheld)


# name -> (entry or None when invalid, problem or None)
_Chosen = dict[str, tuple[tuple[str, _Entry] | None, McpConfigProblem | None]]


def _choose_entries(sources: list[_Source]) -> tuple[_Chosen, list[McpConfigProblem]]:
    """The entry each server name ends with (later sources replace earlier ones),
    and the problems of sections and of entries without a name."""
    chosen: _Chosen = {}
    nameless: list[McpConfigProblem] = []
    for label, raw_entries, model, section_problem in sources:
        if section_problem is not None:
            nameless.append(section_problem)
            continue
        for index, raw in raw_entries:
            name = raw.get("name") if isinstance(raw, Mapping) else None
            if not isinstance(name, str) or not name.strip():
                nameless.append(McpConfigProblem(label, f"#{index}", "entry has no name"))
                continue
            name = name.strip()
            try:
                entry = model.model_validate(raw)
            except ValidationError as exc:
                chosen[name] = (None, McpConfigProblem(label, repr(name), _describe(exc)))
                continue
            chosen[name] = ((label, entry), None)
    return chosen, nameless


def _build_servers(
    chosen: _Chosen,
    env: _Env,
    workspace: Path,
    startup_timeout: float,
    call_timeout: float,
) -> tuple[list[McpServerConfig], list[McpConfigProblem]]:
    """The servers the chosen entries configure, and why the others cannot run."""
    servers: list[McpServerConfig] = []
    problems: list[McpConfigProblem] = []
    keys: dict[str, str] = {}
    for name, (picked, problem) in chosen.items():
        if picked is None:
            assert problem is not None
            problems.append(problem)
            continue
        label, entry = picked
        try:
            server = _build(entry, label, env, workspace, startup_timeout, call_timeout)
        except ConfigError as exc:
            problems.append(McpConfigProblem(label, repr(name), str(exc)))
            continue
        if server.key in keys:
            problems.append(
                McpConfigProblem(
                    label,
                    repr(name),
                    f"its tool prefix mcp__{server.key} clashes with server {keys[server.key]!r}",
                )
            )
            continue
        keys[server.key] = name
        servers.append(server)
    return servers, problems


_Source = tuple[str, list[tuple[int, Any]], type[_Entry], McpConfigProblem | None]


def _sources(
    workspace: Path, home: Path, trust_project: bool
) -> tuple[list[_Source], tuple[RiskySetting, ...], bool]:
    """The declaring sources in precedence order, what was withheld, and whether
    the folder is trusted (recorded, or ``trust_project``).

    Each project file is read once, and the trust verdict is taken on exactly
    the data that would be applied."""
    out = [_toml_source(home / USER_FILE, *_read_toml_once(home / USER_FILE))]
    # The git root's files first, the workspace's last (the deeper wins on a name).
    folders = [*project_folders(workspace)[:-1], workspace]
    read = [
        (folder, _read_toml_once(folder / PROJECT_FILE), _read_json_once(folder / MCP_JSON))
        for folder in folders
    ]
    withheld: tuple[RiskySetting, ...] = ()
    trusted = trust_project
    if not trust_project:
        preread: dict[Path, Any] = {}
        for folder, (toml_data, _), (json_data, json_problem) in read:
            preread[folder / PROJECT_FILE] = toml_data
            absent = json_problem is not None or json_data is _ABSENT
            preread[folder / MCP_JSON] = None if absent else json_data
        review = review_project(workspace, home, preread=preread)
        trusted = review.trusted
        if review.needs_trust:
            withheld = review.risky
    if not withheld:
        for folder, toml_read, json_read in read:
            out.append(_json_source(folder / MCP_JSON, *json_read))
            out.append(_toml_source(folder / PROJECT_FILE, *toml_read))
    return [s for s in out if s[1] or s[3] is not None], withheld, trusted


def _read_toml_once(path: Path) -> tuple[dict[str, Any] | None, McpConfigProblem | None]:
    try:
        return read_toml(path), None
    except ConfigError as exc:  # load_config reports it first; keep going here
        return None, McpConfigProblem(str(path), "(file)", str(exc))


def _toml_source(
    path: Path, data: dict[str, Any] | None, problem: McpConfigProblem | None
) -> _Source:
    label = str(path)
    if problem is not None:
        return label, [], _Entry, problem
    table = (data or {}).get("mcp")
    if table is None:
        return label, [], _Entry, None
    if not isinstance(table, Mapping):
        return label, [], _Entry, McpConfigProblem(label, "(file)", "[mcp] must be a table")
    unknown = sorted(set(table) - {"servers"})
    if unknown:
        return (
            label,
            [],
            _Entry,
            McpConfigProblem(
                label,
                "(file)",
                f"unknown key(s) in [mcp]: {', '.join(unknown)}; servers go in [[mcp.servers]]",
            ),
        )
    servers = table.get("servers", [])
    if isinstance(servers, Mapping):  # [mcp.servers.<name>] tables
        entries = [
            (i, {"name": name, **body} if isinstance(body, Mapping) else body)
            for i, (name, body) in enumerate(servers.items())
        ]
    elif isinstance(servers, list):
        entries = list(enumerate(servers))
    else:
        return (
            label,
            [],
            _Entry,
            McpConfigProblem(
                label, "(file)", "mcp.servers must be an array of tables: write [[mcp.servers]]"
            ),
        )
    return label, entries, _Entry, None


_ABSENT = object()


def _read_json_once(path: Path) -> tuple[Any, McpConfigProblem | None]:
    label = str(path)
    try:
        if path.exists() and not path.is_file():  # a FIFO would block the start
            return None, McpConfigProblem(label, "(file)", "cannot read: not a regular file")
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return _ABSENT, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, McpConfigProblem(label, "(file)", f"cannot read: {type(exc).__name__}")
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, McpConfigProblem(
            label, "(file)", f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        )
    except RecursionError:
        return None, McpConfigProblem(label, "(file)", "invalid JSON: nested too deeply")
    except ValueError as exc:  # valid JSON Python will not load: a 5,000-digit integer
        return None, McpConfigProblem(label, "(file)", f"invalid JSON: {str(exc).split(';')[0]}")


def _json_source(path: Path, data: object, problem: McpConfigProblem | None) -> _Source:
    label = str(path)
    if problem is not None:
        return label, [], _JsonEntry, problem
    if data is _ABSENT:
        return label, [], _JsonEntry, None
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    if servers is None:
        return label, [], _JsonEntry, McpConfigProblem(label, "(file)", 'no "mcpServers" object')
    if not isinstance(servers, Mapping):
        return (
            label,
            [],
            _JsonEntry,
            McpConfigProblem(label, "(file)", '"mcpServers" must be an object'),
        )
    entries = [
        (
            i,
            {**body, "name": name}
            if isinstance(body, Mapping)
            else {"name": name, "command": body},
        )
        for i, (name, body) in enumerate(servers.items())
    ]
    return label, entries, _JsonEntry, None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(loc, list(_Entry.model_fields), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            parts.append(f"unknown key {loc!r}{hint}")
        elif err["type"] == "missing":
            parts.append(f"{loc}: required")
        else:
            parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts) or "invalid entry"


def _build(
    entry: _Entry,
    label: str,
    env: _Env,
    workspace: Path,
    startup_timeout: float,
    call_timeout: float,
) -> McpServerConfig:
    raw_type = (entry.type or ("stdio" if entry.command else "http" if entry.url else "")).lower()
    transport = _TRANSPORTS.get(raw_type)
    if transport is None:
        if not raw_type:
            raise ConfigError("needs either command (stdio) or url (http / sse)")
        raise ConfigError(f"unknown type {entry.type!r}; use stdio, http, streamable-http or sse")
    command = env.expand(entry.command, "command")
    args = tuple(env.expand(a, f"args[{i}]") for i, a in enumerate(entry.args))
    env_vars = {k: env.expand(v, f"env.{k}") for k, v in entry.env.items()}
    url = env.expand(entry.url, "url")
    # An empty header value is never meant: "Bearer " fails later as "could not connect".
    headers = {
        k: env.expand(v, f"headers.{k}", empty_is_error=True) for k, v in entry.headers.items()
    }
    for key, value in headers.items():
        check_header_name(key)
        check_remote_text(f"headers.{key}", value)
    if transport != "stdio":
        check_remote_text("url", url, url=True)
    if any("\x00" in v for v in (command, *args, *env_vars.values(), *env_vars)):
        raise ConfigError("command, args or env contain a NUL character; not accepted")
    if transport == "stdio" and not command:
        raise ConfigError("type stdio needs a command")
    if transport != "stdio":
        if not url:
            raise ConfigError(f"type {raw_type} needs a url")
        if not re.match(r"https?://", url, re.IGNORECASE):
            raise ConfigError("url must start with http:// or https://")
    if entry.concurrency is not None:
        concurrency = entry.concurrency
    else:
        lowered = entry.name.lower()
        concurrency = "serial" if any(m in lowered for m in STATEFUL_MARKERS) else "parallel"
    cwd = Path(env.expand(entry.cwd, "cwd")).expanduser() if entry.cwd else workspace
    if not cwd.is_absolute():
        cwd = workspace / cwd
    client_id = env.expand(entry.client_id, "client_id")
    client_secret = env.expand(entry.client_secret, "client_secret", empty_is_error=True)
    check_remote_text("client_id", client_id)
    check_remote_text("client_secret", client_secret)
    return McpServerConfig(
        name=entry.name.strip(),
        key=sanitize(entry.name),
        transport=transport,  # type: ignore[arg-type]
        command=command,
        args=args,
        env=env_vars,
        url=url,
        headers=headers,
        cwd=cwd,
        startup_timeout=entry.startup_timeout_seconds or startup_timeout,
        call_timeout=entry.call_timeout_seconds or call_timeout,
        tool_timeouts=dict(entry.tool_timeout_seconds),
        concurrency=concurrency,
        enabled=entry.enabled,
        source=label,
        client_id=client_id,
        client_secret=client_secret,
        callback_port=entry.callback_port or 0,
    )


class _Env:
    """Variable lookup: the process environment, then the project ``.env`` (when trusted)."""

    def __init__(
        self, workspace: Path, environ: Mapping[str, str] | None, *, project_dotenv: bool = True
    ) -> None:
        self._environ = os.environ if environ is None else environ
        self._workspace = workspace
        self._dotenv: dict[str, str] | None = None if project_dotenv else {}

    def get(self, name: str) -> str | None:
        if name in self._environ:
            return self._environ[name]
        if self._dotenv is None:
            try:
                self._dotenv = read_dotenv(self._workspace / ".env")
            except (OSError, ConfigError):
                self._dotenv = {}
        if name in self._dotenv:
            return self._dotenv[name]
        if name in ("REASONIX_WORKSPACE_ROOT", *PROJECT_DIR_VARIABLES):
            return str(self._workspace)
        return None

    def expand(self, value: str, where: str, *, empty_is_error: bool = False) -> str:
        return expand_vars(value, self.get, where, empty_is_error=empty_is_error)


def expand_vars(
    value: str,
    lookup: Callable[[str], str | None],
    where: str = "value",
    *,
    empty_is_error: bool = False,
) -> str:
    """Expand ``${VAR}`` / ``${VAR:-default}`` (default when unset or empty).

    An unset variable without a default is an error naming the variable and
    the key, never any value; so is a set but empty one with ``empty_is_error``
    (headers: ``Authorization: Bearer ${TOKEN}`` with ``TOKEN=`` is a mistake).
    """

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        got = lookup(name)
        if got:
            return str(got)
        if default is not None:
            return default
        if got is not None:
            if empty_is_error:
                raise ConfigError(f"environment variable {name} is set but empty (used in {where})")
            return ""
        raise ConfigError(f"environment variable {name} is not set (used in {where})")

    return _VAR.sub(sub, value)
