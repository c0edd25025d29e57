"""Provider API keys: only the variable *name* is in TOML; the value comes from
the environment or from ``<home>/.env`` (mode 0600).

The ``.env`` format is the usual one: ``KEY=VALUE`` lines, ``#`` comments,
an optional ``export`` prefix, values optionally in single or double quotes
(double quotes understand ``\\n``, ``\\"`` and ``\\\\``); an unquoted value
ends at `` #``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from reasonix_core.config.loader import reasonix_home
from reasonix_core.config.schema import Config, ProviderConfig
from reasonix_core.errors import ConfigError
from reasonix_core.fsutil import atomic_write_text

__all__ = [
    "ENV_FILE",
    "parse_dotenv",
    "read_api_key",
    "read_dotenv",
    "save_api_key",
    "secret_env_names",
]

ENV_FILE = ".env"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*")
_UNESCAPE = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def parse_dotenv(text: str) -> dict[str, str]:
    """Parse ``.env`` text; malformed lines are skipped. The last definition wins."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            continue
        out[m.group(1)] = _parse_value(m.group(2))
    return out


def _parse_value(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    if raw.startswith('"'):
        chars: list[str] = []
        i = 1
        while i < len(raw):
            c = raw[i]
            if c == "\\" and i + 1 < len(raw):
                nxt = raw[i + 1]
                chars.append(_UNESCAPE.get(nxt, "\\" + nxt))
                i += 2
                continue
            if c == '"':
                return "".join(chars)
            chars.append(c)
            i += 1
        return raw  # unterminated: take it literally
    # Unquoted: a " #" starts a comment.
    hash_at = re.search(r"\s#", raw)
    return (raw[: hash_at.start()] if hash_at else raw).strip()


def read_dotenv(path: Path) -> dict[str, str]:
    """The variables in ``path``; empty if it does not exist."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_dotenv(text)


def read_api_key(provider: ProviderConfig, home: Path | None = None) -> str:
    """The API key for ``provider``: ``$<api_key_env>`` wins over ``<home>/.env``.

    A provider with no ``api_key_env`` needs no key and gets "".
    """
    name = provider.api_key_env.strip()
    if not name:
        return ""
    value = os.environ.get(name, "").strip()
    if value:
        return value
    env_path = (reasonix_home() if home is None else home) / ENV_FILE
    value = read_dotenv(env_path).get(name, "").strip()
    if value:
        return value
    raise ConfigError(
        f"no API key for provider {provider.name!r}: set {name} in your environment "
        f"or add {name}=… to {env_path}"
    )


def save_api_key(name: str, value: str, home: Path | None = None) -> Path:
    """Set ``name=value`` in ``<home>/.env``, keeping every other line.

    The file is written to a temporary file created with mode 0600 and renamed
    over the old one, so the key is never world-readable, not even briefly,
    and a crash leaves either the old or the new file. Returns the path.
    """
    if not _NAME.fullmatch(name):
        raise ConfigError(f"invalid environment variable name {name!r}")
    # Any line break the reader's splitlines() honours (\x0b, \x85, \u2028...), not
    # only \n: a pasted "key" must not plant a second variable in the file.
    if value.splitlines() not in ([value], []) or "\0" in value or "\r" in value:
        raise ConfigError(f"the value for {name} must be a single line")
    home = reasonix_home() if home is None else home
    path = home / ENV_FILE
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            old = path.read_text(encoding="utf-8-sig").splitlines()
        except FileNotFoundError:
            old = []
        new_line = f"{name}={_quote(value)}"
        lines: list[str] = []
        replaced = False
        for line in old:
            m = _LINE.fullmatch(line)
            if m is not None and m.group(1) == name and not line.lstrip().startswith("#"):
                if not replaced:
                    lines.append(new_line)
                    replaced = True
                continue  # drop later duplicates so the saved value is the one read
            lines.append(line)
        if not replaced:
            lines.append(new_line)
        _write_private(path, "\n".join(lines) + "\n")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return path


def _quote(value: str) -> str:
    if value and re.fullmatch(r"[A-Za-z0-9_./:+@%,=~-]+", value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _write_private(path: Path, text: str) -> None:
    # The temp file is created 0600 and stays so: a key is never readable by others.
    atomic_write_text(path, text, mode=0o600)


def secret_env_names(config: Config) -> frozenset[str]:
    """Every ``api_key_env`` name, to strip from tool subprocess environments."""
    return frozenset(p.api_key_env.strip() for p in config.providers if p.api_key_env.strip())
