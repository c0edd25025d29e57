"""Adding and removing MCP server declarations (``reasonix mcp add / remove`` and
``/mcp``): the one place that decides which file a server is written to or
removed from (seed 000 §3.7).

``user`` scope is ``~/.reasonix/config.toml``, ``project`` scope the workspace's
``reasonix.toml``. The edits themselves are comment-preserving
(:mod:`reasonix_core.config.writeback`, imported only when a file is edited).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reasonix_core.config.loader import PROJECT_FILE, USER_FILE
from reasonix_core.errors import ConfigError, UsageError
from reasonix_core.fsutil import within
from reasonix_core.mcp.config import check_remote_text
from reasonix_core.trust import MCP_JSON

__all__ = [
    "SCOPES",
    "Declared",
    "Scope",
    "add_server",
    "declared",
    "remote_fields",
    "remove_server",
    "scope_file",
    "stdio_fields",
]

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110 §5.6.2)
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Declared:
    """One file that declares a server name."""

    scope: Scope | Literal["mcp.json"]
    path: Path


def scope_file(scope: Scope, workspace: Path, home: Path) -> Path:
    return home / USER_FILE if scope == "user" else workspace / PROJECT_FILE


def _editable(scope: Scope, workspace: Path, home: Path) -> Path:
    """``scope``'s file, to edit. A project's ``reasonix.toml`` that is a link
    leading out of the workspace is refused: a repository linking it to the user's
    config would have the edit copy that config (and its comments) into the
    repository's file."""
    path = scope_file(scope, workspace, home)
    if scope == "project" and path.is_symlink():
        real = os.path.realpath(path)
        if not within(real, os.path.realpath(workspace)):
            raise ConfigError(
                f"{path} is a link to {real}, outside the project; not edited (edit it yourself)"
            )
    return path


def check_name(name: str) -> str:
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise UsageError(f"invalid MCP server name {name!r}: use letters, digits, '_', '-' and '.'")
    return name


def remote_fields(
    name: str,
    url: str,
    *,
    transport: str = "http",
    headers: Sequence[str] = (),
    client_id: str = "",
    callback_port: str = "",
) -> dict[str, Any]:
    """The ``[[mcp.servers]]`` fields of a remote server; ``headers`` as ``K:V``;
    ``client_id`` / ``callback_port``: an OAuth client registered beforehand."""
    if transport not in ("http", "sse"):
        raise UsageError(f"--transport {transport!r}: use http or sse")
    if not re.match(r"https?://[^/\s]", url, re.IGNORECASE) or any(c.isspace() for c in url):
        raise UsageError(f"invalid URL {url!r}: it must start with http:// or https://")
    parsed: dict[str, str] = {}
    for header in headers:
        key, sep, value = header.partition(":")
        key = key.strip()
        if not sep or not _HEADER.fullmatch(key):
            raise UsageError(f"--header {key or header!r}: write it as NAME:VALUE")
        parsed[key] = value.strip()
    try:  # what a loaded declaration would refuse is refused before it is written
        check_remote_text("the URL", url, url=True)
        for key, value in parsed.items():
            check_remote_text(f"--header {key}", value)
        check_remote_text("--client-id", client_id)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    fields: dict[str, Any] = {"name": check_name(name), "type": transport, "url": url}
    if parsed:
        fields["headers"] = parsed
    if client_id.strip():
        fields["client_id"] = client_id.strip()
    if callback_port:
        if not callback_port.isdigit() or not 1 <= int(callback_port) <= 65535:
            raise UsageError(f"--callback-port {callback_port!r}: a port number, 1-65535")
        fields["callback_port"] = int(callback_port)
    return fields


def stdio_fields(name: str, command: Sequence[str], *, env: Sequence[str] = ()) -> dict[str, Any]:
    """The ``[[mcp.servers]]`` fields of a local server; ``env`` as ``K=V``."""
    if not command or not command[0].strip():
        raise UsageError("no command: write it after --, e.g. -- npx -y SERVER")
    parsed: dict[str, str] = {}
    for item in env:
        key, sep, value = item.partition("=")
        if not sep or not _ENV.fullmatch(key):
            raise UsageError(f"--env {key or item!r}: write it as NAME=VALUE")
        parsed[key] = value
    fields: dict[str, Any] = {"name": check_name(name), "command": command[0]}
    if len(command) > 1:
        fields["args"] = list(command[1:])
    if parsed:
        fields["env"] = parsed
    return fields


def declared(name: str, workspace: Path, home: Path) -> list[Declared]:
    """The files that declare ``name``: the user config, the project's
    ``reasonix.toml`` and its ``.mcp.json`` (read, never edited here)."""
    from reasonix_core.config.writeback import mcp_server_names

    found: list[Declared] = []
    for scope in SCOPES:
        path = scope_file(scope, workspace, home)
        if name in mcp_server_names(path):
            found.append(Declared(scope, path))
    json_path = workspace / MCP_JSON
    if name in _json_names(json_path):
        found.append(Declared("mcp.json", json_path))
    return found


def add_server(scope: Scope, fields: Mapping[str, Any], workspace: Path, home: Path) -> Path:
    """Write the server to ``scope``'s file; the file written. A name already in
    that file is a :class:`ConfigError` (the file is left untouched)."""
    from reasonix_core.config.writeback import add_mcp_server

    path = _editable(scope, workspace, home)
    add_mcp_server(path, fields)
    return path


def remove_server(name: str, scope: Scope | None, workspace: Path, home: Path) -> Path:
    """Remove ``name`` from ``scope``'s file, or without a scope from the one file
    that declares it; the file edited. Unknown, ambiguous or only in ``.mcp.json``:
    :class:`UsageError` naming it."""
    from reasonix_core.config.writeback import remove_mcp_server

    found = declared(name, workspace, home)
    editable = [d for d in found if d.scope != "mcp.json" and (scope is None or d.scope == scope)]
    if not editable:
        if any(d.scope == "mcp.json" for d in found):
            raise UsageError(
                f"MCP server {name!r} is declared in {workspace / MCP_JSON}; "
                "edit that file to remove it"
            )
        where = f" in {scope_file(scope, workspace, home)}" if scope else ""
        raise UsageError(f"no MCP server named {name!r}{where}")
    if len(editable) > 1:
        raise UsageError(
            f"MCP server {name!r} is declared in both {editable[0].path} and "
            f"{editable[1].path}; say which with --scope user or --scope project"
        )
    path = _editable("user" if editable[0].scope == "user" else "project", workspace, home)
    if not remove_mcp_server(path, name):  # changed under us
        raise ConfigError(f"{path} no longer declares MCP server {name!r}")
    return path


def _json_names(path: Path) -> list[str]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return [str(k) for k in servers] if isinstance(servers, dict) else []
