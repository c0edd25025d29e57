"""The rules every request to ``reasonix serve`` passes, before any app process starts.

Standard library only, so each rule is tested on its own and the HTTP layer
(:mod:`.server`) only applies them:

- :class:`HostRule`: the ``Host`` header names the bind address or a configured name
  (a DNS-rebinding page sends its own domain name, which is neither);
- :func:`same_origin`: a websocket or a form post comes from a page of this server
  (cross-site websocket hijacking, login CSRF);
- :class:`Sessions`: the per-launch token and the cookies it is exchanged for;
- :class:`Backoff`: repeated password failures from one client wait longer and longer.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = [
    "Backoff",
    "HostRule",
    "Sessions",
    "is_loopback",
    "is_wildcard",
    "same_origin",
    "split_host",
]

_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def is_wildcard(bind: str) -> bool:
    return bind in _WILDCARDS


def is_loopback(bind: str) -> bool:
    """Whether ``bind`` (an address or ``localhost``) is reachable from this machine only."""
    if bind.lower().rstrip(".") == "localhost":
        return True
    ip = _ip(bind)
    return ip is not None and ip.is_loopback


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def split_host(header: str) -> tuple[str, str] | None:
    """``("example.com", "8765")`` from a Host header (``[::1]:80`` too), lower case,
    without a trailing dot; None when it is not a host[:port]."""
    header = header.strip().lower()
    if not header or any(c in header for c in "/?#@ \\\t"):
        return None
    if header.startswith("["):
        end = header.find("]")
        if end < 0:
            return None
        name, rest = header[1:end], header[end + 1 :]
        if _ip(name) is None:
            return None
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return name, rest[1:]
    name, _, port = header.partition(":")
    if port and not port.isdigit():
        return None
    return name.rstrip("."), port


@dataclass(frozen=True, slots=True)
class HostRule:
    """Which Host headers the server answers (DNS rebinding).

    Accepted: a configured name (``[serve] hosts``) or the bind name (``--host
    myhost.lan``: the user chose it); ``localhost`` or a loopback
    address when the server listens on loopback or everywhere; the bind address
    itself; any IP address when it listens everywhere. A DNS name is accepted only
    when configured: a rebinding attack needs a name the attacker controls."""

    bind: str
    names: frozenset[str] = frozenset()

    @classmethod
    def build(cls, bind: str, names: Iterable[str]) -> HostRule:
        return cls(bind, frozenset(n.strip().lower().rstrip(".") for n in names if n.strip()))

    def allows(self, header: str | None) -> bool:
        parsed = split_host(header or "")
        if parsed is None:
            return False
        name = parsed[0]
        if name in self.names or name == self.bind.lower().rstrip("."):
            return True
        wildcard = is_wildcard(self.bind)
        if name == "localhost":
            return wildcard or is_loopback(self.bind)
        ip = _ip(name)
        if ip is None:
            return False
        if wildcard:
            return True
        bound = _ip(self.bind)
        if bound is not None and ip == bound:
            return True
        return ip.is_loopback and is_loopback(self.bind)


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether an ``Origin`` header names the page's own server (``host`` is the
    request's already checked Host header). Absent, ``null`` or another site: no."""
    if not origin or not host:
        return False
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        return False
    mine, theirs = split_host(host), split_host(parts.netloc)
    if mine is None or theirs is None:
        return False
    default = "443" if parts.scheme == "https" else "80"
    return mine[0] == theirs[0] and (mine[1] or default) == (theirs[1] or default)


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


@dataclass(slots=True)
class Sessions:
    """The per-launch token and the browser sessions (cookies) it was exchanged for.

    A cookie value is random and unrelated to the token; only sha256 digests are
    kept, so a lookup's timing says nothing about a stored value."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    limit: int = 1000
    _cookies: OrderedDict[bytes, None] = field(default_factory=OrderedDict[bytes, None])

    def token_matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(_digest(given), _digest(self.token))

    def issue(self) -> str:
        value = secrets.token_urlsafe(32)
        self._cookies[_digest(value)] = None
        while len(self._cookies) > self.limit:  # the oldest browser signs in again
            self._cookies.popitem(last=False)
        return value

    def valid(self, cookie: str | None) -> bool:
        return bool(cookie) and _digest(cookie or "") in self._cookies


@dataclass(slots=True)
class Backoff:
    """Per-client slowdown of password guesses.

    The first ``free`` failures cost nothing; after that each failure doubles the
    wait before the next attempt is even checked (up to ``cap`` seconds). A success
    clears the client. The table is bounded: the oldest clients are forgotten."""

    free: int = 3
    cap: float = 300.0
    limit: int = 10_000
    clock: Callable[[], float] = time.monotonic
    _clients: OrderedDict[str, tuple[int, float]] = field(
        default_factory=OrderedDict[str, tuple[int, float]]
    )

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        failures, until = self._clients.get(client, (0, 0.0))
        del failures
        return max(0.0, until - self.clock())

    def failed(self, client: str) -> None:
        failures, _ = self._clients.pop(client, (0, 0.0))
        failures += 1
        wait = 0.0 if failures <= self.free else min(self.cap, 2.0 ** (failures - self.free))
        self._clients[client] = (failures, self.clock() + wait)
        while len(self._clients) > self.limit:
            self._clients.popitem(last=False)

    def succeeded(self, client: str) -> None:
        self._clients.pop(client, None)
