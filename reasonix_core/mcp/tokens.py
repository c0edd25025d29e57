"""The MCP OAuth token store: ``~/.reasonix/mcp-auth.json`` (mode 0600, atomic writes).

One record per server **URL** (never per name: a project that points a known
server name at another URL finds no token for that URL, so the token never
leaves for a host it was not issued for). A record holds what a later process
needs to use and refresh the grant without a new login:

- ``tokens``: the token response (access and refresh token, scope);
- ``expires_at``: the absolute expiry (Unix seconds) computed when the token was
  saved; the SDK's provider keeps only a relative ``expires_in``;
- ``client``: the dynamic registration (or configured client), bound to its issuer;
- ``metadata`` / ``resource_metadata``: the authorization server's and the
  protected resource's metadata (the token endpoint and ``resource`` of a refresh).

Plain JSON and the standard library only: ``reasonix mcp auth --logout`` and
``mcp get`` read it without loading the ``mcp`` SDK. Values are never logged.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reasonix_core.fsutil import PRIVATE_FILE, atomic_write_text, private_dir

__all__ = ["TOKEN_FILE", "TokenStore", "bounded_expiry"]

TOKEN_FILE = "mcp-auth.json"


class TokenStore:
    """Read-modify-write of the token file under an advisory lock (two Reasonix
    processes refreshing at once must not lose a rotated refresh token)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / TOKEN_FILE

    # -- records --------------------------------------------------------------

    def record(self, url: str) -> dict[str, Any]:
        """The record of ``url`` (a copy; empty when there is none)."""
        entry = self._read().get(url)
        return dict(entry) if isinstance(entry, dict) else {}

    def update(self, url: str, **fields: Any) -> None:
        """Set ``fields`` of ``url``'s record (a ``None`` value removes the field)."""
        with self._locked():
            data = self._read()
            entry = data.get(url)
            entry = dict(entry) if isinstance(entry, dict) else {}
            for key, value in fields.items():
                if value is None:
                    entry.pop(key, None)
                else:
                    entry[key] = value
            if entry:
                data[url] = entry
            else:
                data.pop(url, None)
            self._write(data)

    def save_tokens(self, url: str, tokens: dict[str, Any]) -> None:
        """Save a token response, with its absolute expiry."""
        expires_at = bounded_expiry(tokens.get("expires_in"))
        with self._locked():
            data = self._read()
            entry = data.get(url)
            entry = dict(entry) if isinstance(entry, dict) else {}
            entry["tokens"] = tokens
            if expires_at is None:
                entry.pop("expires_at", None)
            else:
                entry["expires_at"] = expires_at
            data[url] = entry
            self._write(data)

    def forget_tokens(self, url: str) -> None:
        """Drop the tokens of ``url`` (its registration stays for the next login)."""
        self.update(url, tokens=None, expires_at=None)

    def forget(self, url: str) -> bool:
        """Drop everything about ``url``; False when nothing was stored."""
        with self._locked():
            data = self._read()
            if url not in data:
                return False
            del data[url]
            self._write(data)
            return True

    def logged_in(self, url: str) -> bool:
        tokens = self.record(url).get("tokens")
        return isinstance(tokens, dict) and bool(tokens.get("access_token"))

    def expires_at(self, url: str) -> float | None:
        value = self.record(url).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    # -- the file -------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        private_dir(self.home)
        atomic_write_text(self.path, json.dumps(data, indent=1, sort_keys=True), mode=PRIVATE_FILE)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.home)
        # O_NOFOLLOW: a link planted under the lock's name must not create a file elsewhere.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.home / f".{TOKEN_FILE}.lock", flags, PRIVATE_FILE)
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX)
            except ImportError:  # Windows: the atomic replace still holds
                pass
            yield
        finally:
            os.close(fd)


#: The longest lifetime believed (ten years): an ``expires_in`` of 10**400 from a
#: hostile authorization server overflowed the float and failed the login.
MAX_LIFETIME = 10 * 365 * 24 * 3600.0


def bounded_expiry(expires_in: object) -> float | None:
    """The absolute expiry of a relative ``expires_in``; None: not given."""
    if expires_in is None or isinstance(expires_in, bool):
        return None
    try:
        seconds = float(expires_in)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        seconds = MAX_LIFETIME
    if seconds != seconds:  # NaN
        return None
    return time.time() + min(max(seconds, 0.0), MAX_LIFETIME)
