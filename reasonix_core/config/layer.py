"""One configuration layer: reading a TOML file, validating a layer on its own, and
the wording of every configuration error.

Each layer (a file, the environment, the flags) is validated alone before the
layers are merged, so an error names the file it is in and the key path inside it
(``providers[0].kind``), with a did-you-mean for an unknown key. Every failure is a
:class:`ConfigError`.
"""

from __future__ import annotations

import re
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from reasonix_core.config.schema import Config
from reasonix_core.errors import ConfigError
from reasonix_core.trust import PROJECT_FILE

__all__ = [
    "PROJECT_FILE",
    "USER_FILE",
    "check_layer",
    "describe_error",
    "format_validation_error",
    "read_toml",
]

USER_FILE = "config.toml"


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
    lines = [f"{label}: {describe_error(err)}" for err in exc.errors(include_url=False)]
    return "\n".join(lines) or f"{label}: invalid configuration"


def describe_error(err: ErrorDetails) -> str:
    """One validation problem as ``<dotted.key[0].path>: <message>``."""
    loc = _format_loc(err["loc"])
    msg = _describe(err)
    return f"{loc}: {msg}" if loc else msg


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


def _describe(err: ErrorDetails) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        loc = err["loc"]
        hint = _suggest(loc[:-1], str(loc[-1])) if loc else None
        return f"unknown key{f' (did you mean {hint!r}?)' if hint else ''}"
    if kind == "missing":
        return "required key is missing"
    value = err.get("input")
    got = f" (got {_shown(value)})" if isinstance(value, _SCALARS) else ""
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


#: A value quoted in an error is cut to this many characters (an environment
#: variable can hold thousands of digits and the message stays one readable line).
_SHOWN_WIDTH = 80


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_WIDTH else f"{text[: _SHOWN_WIDTH - 1]}…"


def _suggest(parent: tuple[int | str, ...], key: str) -> str | None:
    model = _model_at(parent)
    if model is None:
        return None
    import difflib  # only an unknown key's did-you-mean needs it: off the run's path

    matches = difflib.get_close_matches(key, list(model.model_fields), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The schema model that a validation location points into, if any."""
    current: object = Config
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


def _unwrap(tp: object) -> object:
    """``X | None`` -> ``X``."""
    args = typing.get_args(tp)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp
