"""Finding, reading, layering and validating the config files.

Precedence, highest first: ``overrides`` (command-line flags) >
``<workspace>/reasonix.toml`` > ``<home>/config.toml`` > built-in defaults.
Tables merge key by key, arrays are replaced whole, except ``[[providers]]``,
which merge by ``name``: a higher layer's entry replaces the lower layer's entry
of the same name in place, new names are appended; and the tightening lists
(``permissions.deny``, ``permissions.ask``, ``sandbox.forbid_read``), which are
the union of every layer's, so no layer can remove a rule set below it.

The project file is untrusted input: its risky settings (see
:mod:`reasonix_core.trust`) apply only when the folder is trusted.

Each file is validated on its own first, so an error names the file it is in
and the key path inside it (``providers[0].kind``); only then are the layers
merged and validated together. Every failure is a :class:`ConfigError`.

Reading uses stdlib ``tomllib``; ``tomlkit`` (comment-preserving) is only
imported by :mod:`reasonix_core.config.writeback`.
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from reasonix_core.config.schema import Config
from reasonix_core.errors import ConfigError
from reasonix_core.home import reasonix_home
from reasonix_core.trust import RiskySetting, review_project, strip_risky

__all__ = [
    "PROJECT_FILE",
    "USER_FILE",
    "LoadedConfig",
    "check_layer",
    "load_config",
    "merge_layers",
    "read_toml",
    "reasonix_home",
]

PROJECT_FILE = "reasonix.toml"
USER_FILE = "config.toml"
OVERRIDES_LABEL = "command-line overrides"


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    config: Config
    # The files actually read, lowest precedence first.
    sources: list[Path] = field(default_factory=list)
    home: Path = field(default_factory=Path)
    workspace: Path = field(default_factory=Path)
    # Risky project settings left out because the folder is not trusted.
    withheld: tuple[RiskySetting, ...] = ()

    @property
    def user_file(self) -> Path:
        return self.home / USER_FILE

    @property
    def project_file(self) -> Path:
        return self.workspace / PROJECT_FILE


def load_config(
    workspace: Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    home: Path | None = None,
    trust_project: bool = False,
) -> LoadedConfig:
    """Load the effective config for ``workspace``.

    ``overrides`` is shaped like the TOML (``{"agent": {"effort": "high"}}``);
    dotted keys (``{"agent.effort": "high"}``) are accepted too, and ``None``
    values are dropped so callers can pass every flag, set or not.

    The project file's risky settings apply when the folder's trust is recorded
    in ``<home>/trusted.toml`` for exactly those settings, or when
    ``trust_project`` is set (``--trust-project``); otherwise they are left out
    and listed in :attr:`LoadedConfig.withheld`.
    """
    home = reasonix_home() if home is None else home
    layers: list[dict[str, Any]] = []
    labels: list[str] = []
    sources: list[Path] = []
    withheld: tuple[RiskySetting, ...] = ()
    for path in (home / USER_FILE, workspace / PROJECT_FILE):
        data = read_toml(path)
        if data is None:
            continue
        if path.name == PROJECT_FILE and not trust_project:
            review = review_project(workspace, home, project_data=data)
            if review.needs_trust:
                data, withheld = strip_risky(data), review.risky
        check_layer(data, str(path))
        layers.append(data)
        labels.append(str(path))
        sources.append(path)
    if overrides:
        data = _expand_overrides(overrides)
        if data:
            check_layer(data, OVERRIDES_LABEL)
            layers.append(data)
            labels.append(OVERRIDES_LABEL)

    merged: dict[str, Any] = {}
    for layer in layers:
        merged = merge_layers(merged, layer)
    config = _validate(merged, " + ".join(labels) if labels else "built-in defaults")
    _note_provider_sources(config, layers, labels)
    return LoadedConfig(
        config=config, sources=sources, home=home, workspace=workspace, withheld=withheld
    )


def _note_provider_sources(config: Config, layers: list[dict[str, Any]], labels: list[str]) -> None:
    """Record which layer each provider entry came from: a higher layer's entry
    replaces a lower one whole, so it is the last layer naming it."""
    for provider in config.providers:
        for layer, label in zip(layers, labels, strict=True):
            entries = layer.get("providers")
            if isinstance(entries, list) and any(
                isinstance(e, Mapping) and str(e.get("name", "")).strip() == provider.name
                for e in entries
            ):
                provider._declared_in = label


def read_toml(path: Path) -> dict[str, Any] | None:
    """Parse ``path``; ``None`` when it does not exist. Errors name path:line:col."""
    try:
        # A FIFO or a device planted under the name would block or never end.
        if path.exists() and not path.is_file() and not path.is_dir():
            raise ConfigError(f"{path}: cannot read: not a regular file")
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw[: exc.start].decode("utf-8", "replace"))
        raise ConfigError(f"{path}:{line}:{col}: invalid TOML: not valid UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg, line, col = _toml_position(str(exc), text)
        raise ConfigError(f"{path}:{line}:{col}: invalid TOML: {msg}") from None
    except RecursionError:  # a hostile file: thousands of nested arrays or tables
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except ValueError as exc:  # valid TOML Python will not load: a 5,000-digit integer
        raise ConfigError(f"{path}: invalid TOML: {str(exc).split(';')[0]}") from None


def check_layer(data: Mapping[str, Any], label: str) -> None:
    """Validate one layer on its own so errors point into the right file."""
    _validate(data, label)


def merge_layers(lower: Mapping[str, Any], higher: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two raw TOML layers; ``higher`` wins."""
    out = _merge(lower, higher)
    if isinstance(lower.get("providers"), list) and isinstance(higher.get("providers"), list):
        out["providers"] = _merge_providers(lower["providers"], higher["providers"])
    for table, key in UNION_LISTS:
        below, above = lower.get(table), higher.get(table)
        if not (isinstance(below, Mapping) and isinstance(above, Mapping)):
            continue
        low, high = below.get(key), above.get(key)
        if isinstance(low, list) and isinstance(high, list):
            out[table][key] = [*copy.deepcopy(low), *(x for x in high if x not in low)]
    return out


#: Lists that only tighten: every layer's entries apply (a project's ``deny = []``
#: must not wipe the user's deny rules).
UNION_LISTS: tuple[tuple[str, str], ...] = (
    ("permissions", "deny"),
    ("permissions", "ask"),
    ("sandbox", "forbid_read"),
)


def _merge(lower: Mapping[str, Any], higher: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(lower)
    for key, value in higher.items():
        below = out.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            out[key] = _merge(below, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _merge_providers(lower: list[Any], higher: list[Any]) -> list[Any]:
    def name_of(entry: Any) -> str | None:
        name = entry.get("name") if isinstance(entry, Mapping) else None
        return name.strip() if isinstance(name, str) else None

    out = [copy.deepcopy(e) for e in lower]
    index = {name_of(e): i for i, e in enumerate(out) if name_of(e) is not None}
    for entry in higher:
        name = name_of(entry)
        if name is not None and name in index:
            out[index[name]] = copy.deepcopy(entry)
        else:
            out.append(copy.deepcopy(entry))
            if name is not None:
                index[name] = len(out) - 1
    return out


def _expand_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            value = _expand_overrides(value)
            if not value:
                continue
        parts = [p for p in str(key).split(".") if p]
        if not parts:
            continue
        nested: Any = value
        for part in reversed(parts[1:]):
            nested = {part: nested}
        out = _merge(out, {parts[0]: nested})
    return out


def _validate(data: Mapping[str, Any], label: str) -> Config:
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, label)) from None
    except (TypeError, ValueError) as exc:  # defensive: never let a raw error escape
        raise ConfigError(f"{label}: invalid configuration: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{label}: invalid configuration: nested too deeply") from None
    _check_rules(config, label)
    return config


def _check_rules(config: Config, label: str) -> None:
    """A malformed permission rule is a config error naming the file and key, not a
    crash at start. Checked here, not in the schema: parsing a rule reads the tools'
    families, and config/ sits below permission/ and tool/."""
    from reasonix_core.permission.rules import RuleError, parse_rule

    perms = config.permissions
    for kind, rules in (("allow", perms.allow), ("ask", perms.ask), ("deny", perms.deny)):
        for i, rule in enumerate(rules):
            try:
                parse_rule(rule)
            except RuleError as exc:
                raise ConfigError(f"{label}: permissions.{kind}[{i}]: {exc}") from None


# --- error messages -------------------------------------------------------------

_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _toml_position(message: str, text: str) -> tuple[str, int, int]:
    if m := _TOML_POS.search(message):
        return message[: m.start()], int(m.group(1)), int(m.group(2))
    if m := _TOML_END.search(message):
        line, col = _line_col(text)
        return message[: m.start()], line, col
    return message, 1, 1


def _line_col(prefix: str) -> tuple[int, int]:
    """1-based line and column of the position just after ``prefix``."""
    lines = prefix.split("\n")
    return len(lines), len(lines[-1]) + 1


def format_validation_error(exc: ValidationError, label: str) -> str:
    """One line per problem: ``<file>: <dotted.key[0].path>: <message>``."""
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        loc = _format_loc(err["loc"])
        msg = _describe(err)
        lines.append(f"{label}: {loc}: {msg}" if loc else f"{label}: {msg}")
    return "\n".join(lines) or f"{label}: invalid configuration"


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}" if _BARE_KEY.fullmatch(part) else f'."{part}"'
        else:
            out = part
    return out


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALARS = (str, int, float, bool)


def _describe(err: Any) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        loc = err["loc"]
        hint = _suggest(loc[:-1], str(loc[-1])) if loc else None
        return f"unknown key{f' (did you mean {hint!r}?)' if hint else ''}"
    if kind == "missing":
        return "required key is missing"
    value = err.get("input")
    got = f" (got {value!r})" if isinstance(value, _SCALARS) else ""
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a table{got}"
    if kind == "list_type":
        if err["loc"] == ("providers",):
            return "must be an array of tables: write [[providers]], not [providers]"
        return f"must be an array{got}"
    if kind in ("value_error", "assertion_error"):
        error = err.get("ctx", {}).get("error")
        return str(error) if error is not None else err["msg"]
    return err["msg"] + got


def _suggest(parent: tuple[int | str, ...], key: str) -> str | None:
    model = _model_at(parent)
    if model is None:
        return None
    matches = difflib.get_close_matches(key, list(model.model_fields), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The schema model that a validation location points into, if any."""
    current: Any = Config
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            if not isinstance(part, str) or part not in current.model_fields:
                return None
            current = current.model_fields[part].annotation
        else:
            args = typing.get_args(current)
            if not args:
                return None
            current = args[-1]  # list[X] -> X, dict[str, X] -> X
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def _unwrap(tp: Any) -> Any:
    """``X | None`` -> ``X``."""
    args = typing.get_args(tp)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp
