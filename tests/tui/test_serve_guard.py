"""The rules of ``reasonix serve`` one by one, with hostile inputs (the server tests
in test_serve.py apply them over real HTTP)."""

from __future__ import annotations

import pytest

from reasonix_tui.serve.guard import Backoff, HostRule, Sessions, is_loopback, same_origin
from reasonix_tui.serve.password import (
    PasswordHashError,
    check_hash,
    hash_password,
    verify_password,
)


@pytest.mark.parametrize(
    ("bind", "names", "host", "allowed"),
    [
        ("127.0.0.1", (), "127.0.0.1:8765", True),
        ("127.0.0.1", (), "localhost:8765", True),
        ("127.0.0.1", (), "[::1]:8765", True),
        ("127.0.0.1", (), "LOCALHOST.:8765", True),
        # DNS rebinding: the attacker's own name, resolving to 127.0.0.1.
        ("127.0.0.1", (), "rebind.evil.example:8765", False),
        ("127.0.0.1", (), "127.0.0.1.nip.io:8765", False),
        ("127.0.0.1", (), "192.168.1.5:8765", False),
        ("192.168.1.5", (), "192.168.1.5:8765", True),
        ("192.168.1.5", (), "localhost:8765", False),
        ("0.0.0.0", (), "10.0.0.7:8765", True),
        ("0.0.0.0", (), "localhost", True),
        ("0.0.0.0", (), "myhost.lan:8765", False),
        ("0.0.0.0", ("MyHost.lan",), "myhost.lan:8765", True),
        ("127.0.0.1", ("agent.example.com",), "agent.example.com", True),
        ("myhost.lan", (), "myhost.lan:8765", True),
        ("myhost.lan", (), "other.lan:8765", False),
        # Malformed headers.
        ("127.0.0.1", (), "", False),
        ("127.0.0.1", (), "127.0.0.1:80x", False),
        ("127.0.0.1", (), "user@127.0.0.1", False),
        ("127.0.0.1", (), "127.0.0.1/x", False),
        ("127.0.0.1", (), "[::1", False),
        ("127.0.0.1", (), "[evil]:80", False),
        ("127.0.0.1", (), "127.0.0.1 evil", False),
    ],
)
def test_host_rule(bind: str, names: tuple[str, ...], host: str, allowed: bool) -> None:
    assert HostRule.build(bind, names).allows(host) is allowed


def test_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert not is_loopback("") and not is_loopback("localhost.evil.example")


@pytest.mark.parametrize(
    ("origin", "host", "same"),
    [
        ("http://127.0.0.1:8765", "127.0.0.1:8765", True),
        ("https://agent.example.com", "agent.example.com", True),
        ("https://agent.example.com:443", "agent.example.com", True),
        ("http://127.0.0.1:8766", "127.0.0.1:8765", False),
        ("http://evil.example", "127.0.0.1:8765", False),
        ("http://localhost:8765", "127.0.0.1:8765", False),
        ("null", "127.0.0.1:8765", False),
        ("", "127.0.0.1:8765", False),
        (None, "127.0.0.1:8765", False),
        ("file://", "127.0.0.1:8765", False),
        ("http://127.0.0.1:8765/path", "127.0.0.1:8765", False),
        ("http://127.0.0.1:8765@evil.example", "127.0.0.1:8765", False),
    ],
)
def test_same_origin(origin: str | None, host: str, same: bool) -> None:
    assert same_origin(origin, host) is same


def test_sessions() -> None:
    sessions = Sessions(limit=2)
    assert sessions.token_matches(sessions.token)
    assert not sessions.token_matches(sessions.token[:-1]) and not sessions.token_matches(None)
    assert not sessions.token_matches("\udcff")  # a lone surrogate from a hostile query
    first = sessions.issue()
    assert sessions.valid(first) and first != sessions.token
    assert (
        not sessions.valid(sessions.token) and not sessions.valid("") and not sessions.valid(None)
    )
    sessions.issue()
    sessions.issue()
    assert not sessions.valid(first)  # bounded: the oldest session is dropped


def test_backoff_doubles_per_client_and_a_success_clears() -> None:
    now = [100.0]
    backoff = Backoff(free=3, cap=60, clock=lambda: now[0])
    for _ in range(3):
        backoff.failed("a")
        assert backoff.retry_after("a") == 0
    backoff.failed("a")
    assert backoff.retry_after("a") == 2
    assert backoff.retry_after("b") == 0  # another client is not slowed
    now[0] += 2
    backoff.failed("a")
    assert backoff.retry_after("a") == 4
    for _ in range(20):
        backoff.failed("a")
    assert backoff.retry_after("a") == 60  # capped
    backoff.succeeded("a")
    assert backoff.retry_after("a") == 0


def test_backoff_table_is_bounded() -> None:
    backoff = Backoff(limit=10)
    for i in range(100):
        backoff.failed(f"client{i}")
    assert len(backoff._clients) == 10


def test_password_hash_round_trip_and_salt() -> None:
    stored = hash_password("correct horse")
    assert stored.startswith("scrypt$32768$8$1$") and "correct horse" not in stored
    assert verify_password("correct horse", stored)
    assert not verify_password("correct horsf", stored) and not verify_password("", stored)
    assert hash_password("correct horse") != stored  # salted


@pytest.mark.parametrize(
    "stored",
    [
        "",
        "plain",
        "bcrypt$1$2$3$AAAA$AAAA",
        "scrypt$x$8$1$AAAAAAAAAAA=$" + "A" * 44,
        "scrypt$3$8$1$AAAAAAAAAAA=$" + "A" * 44,  # N not a power of two
        "scrypt$1073741824$8$1$AAAAAAAAAAA=$" + "A" * 44,  # N pinning memory and CPU
        "scrypt$16384$8$1$!!!$" + "A" * 44,
        "scrypt$16384$8$1$AAAA$" + "A" * 44,  # salt too short
    ],
)
def test_hostile_stored_hashes_are_refused(stored: str) -> None:
    with pytest.raises(PasswordHashError):
        check_hash(stored)
    with pytest.raises(PasswordHashError):
        verify_password("x", stored)
