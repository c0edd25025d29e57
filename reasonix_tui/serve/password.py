"""The password of ``reasonix serve --auth password``: a salted scrypt hash.

Standard library only (``hashlib.scrypt``): no dependency for a few lines of
well-known parameters. The stored form is ``scrypt$N$r$p$salt$hash`` with base64
salt and hash, so the cost can rise later without breaking stored hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = ["MIN_LENGTH", "PasswordHashError", "check_hash", "hash_password", "verify_password"]

# N=2**15, r=8: 32 MiB and ~0.1 s per check on a small machine; slow for a guesser,
# fine for one login. `maxmem` must exceed 128*N*r bytes.
_N, _R, _P = 1 << 15, 8, 1
_MAXMEM = 64 << 20
_SALT_BYTES, _HASH_BYTES = 16, 32
MIN_LENGTH = 8
# Above this a stored hash is not ours (a hostile N would pin the CPU and memory).
_MAX_N = 1 << 20


class PasswordHashError(ValueError):
    """A stored ``password_hash`` that is not one ``hash_password`` wrote."""


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    salt = secrets.token_bytes(_SALT_BYTES) if salt is None else salt
    digest = _scrypt(password, salt, _N, _R, _P, _HASH_BYTES)
    return "$".join(("scrypt", str(_N), str(_R), str(_P), _b64(salt), _b64(digest)))


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches ``stored``; the comparison is constant-time."""
    n, r, p, salt, expected = _parse(stored)
    actual = _scrypt(password, salt, n, r, p, len(expected))
    return hmac.compare_digest(actual, expected)


def check_hash(stored: str) -> None:
    """Raise :class:`PasswordHashError` unless ``stored`` is a hash we can check."""
    _parse(stored)


def _parse(stored: str) -> tuple[int, int, int, bytes, bytes]:
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        raise PasswordHashError("not a scrypt$N$r$p$salt$hash value")
    try:
        n, r, p = (int(x) for x in parts[1:4])
        salt = base64.b64decode(parts[4], validate=True)
        expected = base64.b64decode(parts[5], validate=True)
    except ValueError:
        raise PasswordHashError("malformed scrypt parameters or base64") from None
    if not (2 <= n <= _MAX_N and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 4):
        raise PasswordHashError("scrypt parameters out of range")
    if len(salt) < 8 or not 16 <= len(expected) <= 64:
        raise PasswordHashError("salt or hash too short")
    return n, r, p, salt, expected


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, length: int) -> bytes:
    maxmem = max(_MAXMEM, 130 * n * r * p)
    return hashlib.scrypt(
        password.encode("utf-8", "surrogatepass"),
        salt=salt,
        n=n,
        r=r,
        p=p,
        maxmem=maxmem,
        dklen=length,
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
