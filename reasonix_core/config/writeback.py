"""Comment-preserving edits of a config file (``reasonix config compact-ratio``,
``reasonix setup PRESET`` and the TUI setup screen's presets…).

This is the only module that imports ``tomlkit``; the load path never does.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.items import AoT, Table

from reasonix_core.config.layer import check_layer
from reasonix_core.errors import ConfigError
from reasonix_core.fsutil import PRIVATE_FILE, atomic_write_text, private_dir
from reasonix_core.home import reasonix_home

__all__ = [
    "add_mcp_server",
    "add_provider",
    "mcp_server_names",
    "remove_mcp_server",
    "remove_table_keys",
    "set_config_value",
]

_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _is_table(value: object) -> bool:
    # A function, not an inline isinstance: `table` stays the loosely typed tomlkit
    # container (a narrowed plain dict has no `add`).
    return isinstance(value, Table | dict)


def set_config_value(path: Path, key: str, value: Any | None) -> None:
    """Set the dotted ``key`` (``"agent.compact_ratio"``) in the TOML file at
    ``path``, or remove it when ``value`` is ``None``.

    Comments and layout are kept. The edited file is validated on its own
    before it replaces the old one, so an invalid value is a
    :class:`ConfigError` and the file is left untouched. Keys inside arrays of
    tables (``[[providers]]``) cannot be addressed this way.
    """
    parts = key.split(".")
    if not key or not all(_KEY.fullmatch(p) for p in parts):
        raise ConfigError(f"invalid config key {key!r}")
    doc = _parse(path)
    table: Any = doc
    for i, part in enumerate(parts[:-1]):
        if part not in table:
            if value is None:
                return
            table.add(part, tomlkit.table())
        table = table[part]
        if not _is_table(table):
            raise ConfigError(f"{path}: {'.'.join(parts[: i + 1])} is not a table")
    leaf = parts[-1]
    if value is None:
        if leaf not in table:
            return
        del table[leaf]
    else:
        table[leaf] = value

    _save(path, doc)


def add_provider(path: Path, fields: Mapping[str, Any], *, make_default: bool = False) -> None:
    """Append a ``[[providers]]`` table with ``fields`` to the TOML file at ``path``
    (created if missing); ``make_default``: also set ``default_model`` to its name.

    The one writer of a new provider entry (``reasonix setup PRESET`` and the TUI
    setup screen). Comments and layout are kept; a provider of the same name
    already there, or ``providers`` written as something other than an array of
    tables, is a :class:`ConfigError` and the file is left untouched."""
    doc = _parse(path)
    was_empty = not doc.as_string().strip()
    name = str(fields["name"])
    providers = doc.get("providers")
    if providers is None:
        providers = tomlkit.aot()
        doc.append("providers", providers)
    elif not isinstance(providers, AoT):
        raise ConfigError(
            f"{path}: `providers` is not written as [[providers]] tables; add {name!r} by hand"
        )
    if any(isinstance(p, Table | dict) and p.get("name") == name for p in providers):
        raise ConfigError(f"{path} already has a provider named {name!r}")
    table = tomlkit.table()
    for key, value in fields.items():
        table[key] = value
    providers.append(table)
    if make_default:
        doc["default_model"] = name
    _save(path, doc, trim=was_empty)


def mcp_server_names(path: Path) -> list[str]:
    """The names of the MCP servers the TOML file at ``path`` declares (either
    ``[[mcp.servers]]`` or ``[mcp.servers.<name>]``); none when it is missing."""
    servers = _mcp_servers(_parse(path), path)
    if servers is None:
        return []
    if isinstance(servers, AoT):
        return [str(t.get("name", "")).strip() for t in servers if isinstance(t, Table | dict)]
    return [str(name) for name in servers]


def add_mcp_server(path: Path, fields: Mapping[str, Any]) -> None:
    """Append an MCP server declaration with ``fields`` (``name`` first) to the TOML
    file at ``path`` (created if missing), as a ``[[mcp.servers]]`` table, or as a
    ``[mcp.servers.<name>]`` table where the file already uses that form.

    Comments and layout are kept; a server of the same name already there is a
    :class:`ConfigError` and the file is left untouched."""
    doc = _parse(path)
    was_empty = not doc.as_string().strip()
    name = str(fields["name"])
    if name in mcp_server_names(path):
        raise ConfigError(f"{path} already declares an MCP server named {name!r}")
    servers = _mcp_servers(doc, path)
    table = tomlkit.table()
    if not was_empty:
        table.trivia.indent = "\n"  # a blank line between it and what comes before
    if servers is None:
        mcp = doc.get("mcp")
        if mcp is None:
            mcp = tomlkit.table(is_super_table=True)
            doc.append("mcp", mcp)
        servers = tomlkit.aot()
        mcp.append("servers", servers)
    for key, value in fields.items():
        if key != "name" or isinstance(servers, AoT):
            table[key] = _inline(value)
    if isinstance(servers, AoT):
        servers.append(table)
    else:
        servers.append(name, table)
    _save(path, doc, trim=was_empty)


def remove_mcp_server(path: Path, name: str) -> bool:
    """Remove the MCP server ``name`` from the TOML file at ``path``, keeping every
    other line and comment; False (and the file untouched) when it is not there."""
    doc = _parse(path)
    servers = _mcp_servers(doc, path)
    if servers is None:
        return False
    if isinstance(servers, AoT):
        index = next(
            (
                i
                for i, t in enumerate(servers)
                if isinstance(t, Table | dict) and str(t.get("name", "")).strip() == name
            ),
            None,
        )
        if index is None:
            return False
        del servers[index]
        if not len(servers):
            _drop_empty_servers(doc)
    else:
        if name not in servers:
            return False
        del servers[name]
    _save(path, doc, tidy_end=True)
    return True


def _inline(value: Any) -> Any:
    """``env`` and ``headers`` as ``{ K = "v" }`` on the entry's own line, not sub-tables."""
    if isinstance(value, Mapping):
        inline = tomlkit.inline_table()
        inline.update(value)
        return inline
    return value


def _drop_empty_servers(doc: tomlkit.TOMLDocument) -> None:
    # An empty array of tables renders as `servers = []`, which reads as no servers
    # too; drop it (and a now-empty [mcp]) so the file looks as before the add.
    mcp: Any = doc["mcp"]
    del mcp["servers"]
    if not len(mcp):
        del doc["mcp"]


def _mcp_servers(doc: tomlkit.TOMLDocument, path: Path) -> Any:
    """``mcp.servers`` of ``doc`` (an array of tables or a table), or None if absent."""
    mcp = doc.get("mcp")
    if mcp is None:
        return None
    if not _is_table(mcp):
        raise ConfigError(f"{path}: mcp is not a table; edit it by hand")
    servers = mcp.get("servers")
    if servers is None or isinstance(servers, AoT) or _is_table(servers):
        return servers
    raise ConfigError(f"{path}: mcp.servers is not written as [[mcp.servers]]; edit it by hand")

def remove_table_keys(path: Path, table: str, keys: tuple[str, ...]) -> list[str]:
    """Remove ``keys`` from top-level ``[table]`` of ``path`` (comments and layout kept);
    the keys removed. Nothing to remove leaves the file untouched. ConfigError when
    the file cannot be read, parsed or written."""
    doc = _parse(path)
    found: Any = doc.get(table)
    if not _is_table(found):
        return []
    removed = [key for key in keys if key in found]
    for key in removed:
        del found[key]
    if removed:
        _save(path, doc)
    return removed


def _parse(path: Path) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        msg = re.sub(r"\s*at line \d+ col \d+\s*$", "", str(exc))
        raise ConfigError(f"{path}:{exc.line}:{exc.col}: invalid TOML: {msg}") from None


def _save(
    path: Path, doc: tomlkit.TOMLDocument, *, trim: bool = False, tidy_end: bool = False
) -> None:
    """Validate the edited file on its own, then replace the old one (``trim``: a
    new file does not start with the blank line tomlkit puts before a table;
    ``tidy_end``: a removed last table leaves no blank lines at the end)."""
    new_text = tomlkit.dumps(doc)
    if trim:
        new_text = new_text.lstrip()
    if tidy_end and new_text.endswith("\n\n"):
        new_text = new_text.rstrip("\n") + "\n" if new_text.strip() else ""
    check_layer(tomllib.loads(new_text), str(path))
    _replace(path, new_text)


def _replace(path: Path, text: str) -> None:
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = None
    try:
        home = path.parent.resolve() == reasonix_home().resolve()
        if home:
            private_dir(path.parent)  # `reasonix setup` may be what makes the home
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        # A new config file: private in the home, the usual 0644 in a project.
        new_mode = PRIVATE_FILE if home else 0o644
        atomic_write_text(path, text, mode=new_mode if mode is None else mode)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None
