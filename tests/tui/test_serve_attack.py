"""Issue 29, second adversarial pass over `reasonix serve`: a network attacker
guessing the password with many requests at once (the backoff must count a
guess when it starts, not when its 0.1 s scrypt check ends), and hostile
headers on every route. A real server on loopback, aiohttp's client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import reasonix
from tests.tui.serve_helpers import start_serve

pytestmark = pytest.mark.slow


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        yield session


async def test_concurrent_password_guesses_are_slowed_down_too(
    workspace: Path, configured: object, home: Path, client: aiohttp.ClientSession
) -> None:
    done = reasonix(workspace, "serve", "--set-password", stdin="correct horse\n")
    assert done.returncode == 0, done.stderr
    served = start_serve(workspace)
    try:
        login = served.base + "/login"
        origin = {"Origin": served.base}

        async def guess(i: int) -> int:
            response = await client.post(login, data={"password": f"guess-{i}"}, headers=origin)
            return response.status

        statuses = await asyncio.gather(*(guess(i) for i in range(40)))
        checked = statuses.count(401)
        # Three free guesses and the one that starts the wait; every other one waits.
        assert checked <= 4, statuses
        assert statuses.count(429) == 40 - checked, statuses
        assert served.apps() == []
    finally:
        served.stop()


HOSTILE_REQUESTS = [
    {"Host": "evil.example"},
    {"Host": "127.0.0.1.evil.example"},
    {"Host": "127.0.0.1@evil.example"},
    {"Host": ""},
    {"Host": "127.0.0.1:1/x"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1.evil.example"},
    {"Origin": "file://"},
]


@pytest.mark.parametrize("headers", HOSTILE_REQUESTS)
async def test_hostile_headers_start_no_app(
    workspace: Path, configured: object, client: aiohttp.ClientSession, headers: dict[str, str]
) -> None:
    served = start_serve(workspace)
    try:
        url = served.url
        response = await client.get(url, headers=headers, allow_redirects=False)
        if "Host" in headers:
            assert response.status in (400, 403), response.status
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await client.ws_connect(
                served.base.replace("http://", "ws://") + "/ws",
                headers={"Origin": served.base, **headers},
            )
        assert served.apps() == []
    finally:
        served.stop()
