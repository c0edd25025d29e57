"""``reasonix serve``: a real server on loopback, every auth rule over real HTTP and
websockets (aiohttp's client), and no app process for a refused request."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from reasonix_testkit.serve import demo_responder
from tests.conftest import TEST_KEY, reasonix
from tests.tui.serve_helpers import Served, alive, start_serve, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _echoing_model(request: pytest.FixtureRequest) -> None:
    """The fixture model answers "You said: ..." (reasonix_testkit.serve's responder)."""
    if "configured" in request.fixturenames:
        request.getfixturevalue("configured").responder = demo_responder


@pytest.fixture
def served(workspace: Path, configured: object) -> Iterator[Served]:
    server = start_serve(workspace)
    yield server
    server.stop()


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    # unsafe: keep cookies set by an IP address (127.0.0.1), as a browser does.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        yield session


def _ws(served: Served) -> str:
    return served.base.replace("http://", "ws://") + "/ws?width=100&height=30"


_ESCAPE = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


async def _screen_text(
    ws: aiohttp.ClientWebSocketResponse, needle: bytes, deadline: float = 60
) -> bytes:
    """What the app drew until ``needle`` appears (escape sequences removed)."""
    seen = b""
    end = asyncio.get_running_loop().time() + deadline
    while needle not in _ESCAPE.sub(b"", seen):
        left = end - asyncio.get_running_loop().time()
        if left <= 0:
            raise AssertionError(f"no {needle!r} on the screen: {_ESCAPE.sub(b'', seen)[-500:]!r}")
        try:
            message = await asyncio.wait_for(ws.receive(), left)
        except TimeoutError:
            continue
        if message.type == aiohttp.WSMsgType.BINARY:
            seen += message.data
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            raise AssertionError(f"the app closed before showing {needle!r}")
    return seen


async def _type(ws: aiohttp.ClientWebSocketResponse, prompt: str) -> None:
    """Type ``prompt`` and Enter. Keys that arrive while the app still starts are
    dropped, so type until the prompt shows on the screen."""
    end = asyncio.get_running_loop().time() + 60
    while True:
        for key in prompt:
            await ws.send_json(["stdin", key])
        try:
            await _screen_text(ws, prompt.encode(), deadline=5)
            break
        except AssertionError:
            assert asyncio.get_running_loop().time() < end, "the app never took the keys"
            await ws.send_json(["stdin", "\x15"])  # Ctrl+U: clear what did arrive
    await ws.send_json(["stdin", "\r"])


async def _sign_in(client: aiohttp.ClientSession, served: Served) -> None:
    response = await client.get(served.url, allow_redirects=False)
    assert response.status == 303


async def test_token_is_exchanged_for_a_strict_httponly_cookie(
    served: Served, client: aiohttp.ClientSession
) -> None:
    assert (await client.get(served.base + "/")).status == 401
    wrong = await client.get(served.base + "/?token=guess", allow_redirects=False)
    assert wrong.status == 401
    response = await client.get(served.url + "&fontsize=18", allow_redirects=False)
    assert response.status == 303
    # The token leaves the address bar: the redirect keeps the rest of the query.
    assert response.headers["Location"] == "/?fontsize=18"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert served.url.split("token=")[1] not in cookie
    page = await client.get(served.base + "/")
    assert page.status == 200
    assert f"ws://127.0.0.1:{served.port}/ws" in await page.text()
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert "Access-Control-Allow-Origin" not in page.headers
    assert page.headers["Cache-Control"] == "no-store"
    script = await client.get(served.base + "/static/js/textual.js")
    assert script.status == 200
    # The library's static files are cached, by this browser only.
    assert script.headers["Cache-Control"] == "private, max-age=3600"


async def test_every_refused_request_starts_no_app(
    served: Served, client: aiohttp.ClientSession
) -> None:
    async with aiohttp.ClientSession() as stranger:  # no cookie
        for path in ("/", "/ws", "/static/js/textual.js", "/download/x", "/login", "/nope"):
            assert (await stranger.get(served.base + path)).status == 401, path
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await stranger.ws_connect(_ws(served), headers={"Origin": served.base})
        assert refused.value.status == 401
        # A stolen-looking cookie of the right name is no session.
        jar = {f"reasonix_serve_{served.port}": "forged"}
        async with aiohttp.ClientSession(cookies=jar) as forged:
            with pytest.raises(aiohttp.WSServerHandshakeError):
                await forged.ws_connect(_ws(served), headers={"Origin": served.base})
    await _sign_in(client, served)
    # Signed in, but a page of another site (CSWSH), no Origin, or a rebinding Host.
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": f"http://127.0.0.1:{served.port + 1}"},
        {"Origin": "null"},
        {},
        {"Origin": "http://evil.example", "Host": "evil.example"},
    ):
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(_ws(served), headers=headers)
        assert refused.value.status == 403, headers
    assert served.apps() == []
    preflight = await client.options(served.base + "/ws")
    assert preflight.status == 405 and "Access-Control-Allow-Origin" not in preflight.headers
    assert served.apps() == []


async def test_host_header_is_checked_on_every_request(
    served: Served, client: aiohttp.ClientSession
) -> None:
    await _sign_in(client, served)
    for host in ("evil.example", f"evil.example:{served.port}", "127.0.0.1.nip.io", "", "a b"):
        response = await client.get(served.base + "/", headers={"Host": host})
        assert response.status == 403, host
    for host in (f"localhost:{served.port}", f"127.0.0.1:{served.port}"):
        assert (await client.get(served.base + "/", headers={"Host": host})).status == 200


async def test_a_tab_runs_its_own_app_and_closing_it_ends_the_app(
    served: Served, client: aiohttp.ClientSession, workspace: Path
) -> None:
    await _sign_in(client, served)
    first = await client.ws_connect(_ws(served), headers={"Origin": served.base})
    await _screen_text(first, b"Ask Reasonix")
    [app] = wait_for(served.apps, "the first tab's app")  # type: ignore[misc]
    assert os.readlink(f"/proc/{app}/cwd") == str(workspace)
    second = await client.ws_connect(_ws(served), headers={"Origin": served.base})
    await _screen_text(second, b"Ask Reasonix")
    both = wait_for(lambda: len(served.apps()) == 2 and served.apps(), "a second app")
    assert app in both  # type: ignore[operator]
    await _type(first, "hello from tab one")
    await _screen_text(first, b"You said: hello from tab one")
    await first.close()
    wait_for(lambda: not alive(app), "the closed tab's app to end")
    assert len(served.apps()) == 1
    await second.close()
    wait_for(lambda: served.apps() == [], "every app to end")


async def test_a_signed_in_page_prespawns_the_app_its_websocket_claims(
    served: Served, client: aiohttp.ClientSession
) -> None:
    # Unauthenticated page requests (no cookie, a wrong token, a forged cookie) start
    # nothing: the guard answers them before the page handler that pre-spawns.
    jar = {f"reasonix_serve_{served.port}": "forged"}
    async with aiohttp.ClientSession() as stranger, aiohttp.ClientSession(cookies=jar) as forged:
        for _ in range(3):
            assert (await stranger.get(served.base + "/")).status == 401
            assert (await stranger.get(served.base + "/?token=guess")).status == 401
            assert (await forged.get(served.base + "/")).status == 401
    await _sign_in(client, served)
    assert served.apps() == []
    # The signed-in page starts its app before the page's websocket exists...
    assert (await client.get(served.base + "/")).status == 200
    [app] = wait_for(served.apps, "the pre-spawned app")  # type: ignore[misc]
    # ...and that websocket gets that very process, drawn at the tab's size.
    ws = await client.ws_connect(_ws(served), headers={"Origin": served.base})
    await _screen_text(ws, b"Ask Reasonix")
    assert served.apps() == [app]
    await _type(ws, "hello")
    await _screen_text(ws, b"You said: hello")
    # Reloading twice without a websocket: one app waits (not two), and it is ended
    # when no websocket claims it.
    assert (await client.get(served.base + "/")).status == 200
    assert (await client.get(served.base + "/")).status == 200
    both = wait_for(lambda: len(served.apps()) == 2 and served.apps(), "one waiting app")
    [waiting] = [p for p in both if p != app]  # type: ignore[union-attr]
    assert len(served.apps()) == 2
    wait_for(lambda: not alive(waiting), "the unclaimed app to be ended")
    assert served.apps() == [app]
    await ws.close()
    wait_for(lambda: served.apps() == [], "every app to end")


async def _press_until(ws: aiohttp.ClientWebSocketResponse, key: str, shown: bytes) -> None:
    """Press ``key`` until ``shown`` appears (a key pressed while the app starts is lost)."""
    end = asyncio.get_running_loop().time() + 60
    while True:
        await ws.send_json(["stdin", key])
        try:
            await _screen_text(ws, shown, deadline=5)
            return
        except AssertionError:
            assert asyncio.get_running_loop().time() < end, f"never showed {shown!r}"


async def test_first_run_setup_works_in_the_browser(
    workspace: Path, configured: object, home: Path, client: aiohttp.ClientSession
) -> None:
    served = start_serve(workspace, key=False)  # the provider's key is nowhere yet
    try:
        await _sign_in(client, served)
        ws = await client.ws_connect(_ws(served), headers={"Origin": served.base})
        await _screen_text(ws, b"Welcome to Reasonix")
        await _press_until(ws, "\r", b"Enter save and continue")  # the configured provider
        for key in TEST_KEY:
            await ws.send_json(["stdin", key])
        await ws.send_json(["stdin", "\r"])
        await _screen_text(ws, b"Ask Reasonix")
        assert TEST_KEY in (home / ".env").read_text(encoding="utf-8")
        await _type(ws, "hello after setup")
        await _screen_text(ws, b"You said: hello after setup")
        await ws.close()
    finally:
        served.stop()


async def test_continue_goes_to_one_tab_at_a_time(
    workspace: Path, configured: object, client: aiohttp.ClientSession
) -> None:
    served = start_serve(workspace, "-c")
    try:
        await _sign_in(client, served)
        first = await client.ws_connect(_ws(served), headers={"Origin": served.base})
        [one] = wait_for(served.apps, "the first app")  # type: ignore[misc]
        second = await client.ws_connect(_ws(served), headers={"Origin": served.base})
        pids = wait_for(lambda: len(served.apps()) == 2 and served.apps(), "the second app")
        [two] = [p for p in pids if p != one]  # type: ignore[union-attr]

        def argv(pid: int) -> list[str]:
            return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")

        assert "--continue" in argv(one) and "--continue" not in argv(two)
        await first.close()
        wait_for(lambda: not alive(one), "the first app to end")
        # The server lets go of the holder just after it has reaped the first app; a
        # tab opened in between starts a new session, so try until one continues.
        deadline = time.monotonic() + 60
        while True:
            third = await client.ws_connect(_ws(served), headers={"Origin": served.base})
            pids = wait_for(lambda: len(served.apps()) == 2 and served.apps(), "the third app")
            [three] = [p for p in pids if p != two]  # type: ignore[union-attr]
            if "--continue" in argv(three) or time.monotonic() > deadline:
                break
            await third.close()
            wait_for(lambda pid=three: not alive(pid), "the early third app to end")
        assert "--continue" in argv(three)  # the holder is gone: the next tab continues
        await second.close()
        await third.close()
    finally:
        served.stop()


async def test_ctrl_c_stops_the_server_and_its_apps(
    workspace: Path, configured: object, client: aiohttp.ClientSession
) -> None:
    served = start_serve(workspace)
    try:
        await _sign_in(client, served)
        ws = await client.ws_connect(_ws(served), headers={"Origin": served.base})
        await _screen_text(ws, b"Ask Reasonix")
        apps = wait_for(served.apps, "the tab's app")
        served.process.send_signal(signal.SIGINT)
        assert served.process.wait(60) == 0
        for pid in apps:  # type: ignore[union-attr]
            wait_for(lambda pid=pid: not alive(pid), f"app {pid} to end")
    finally:
        served.stop()


async def test_password_login_with_backoff(
    workspace: Path, configured: object, home: Path, client: aiohttp.ClientSession
) -> None:
    config = home / "config.toml"
    config.write_text("# my settings\n" + config.read_text(), encoding="utf-8")
    done = reasonix(workspace, "serve", "--set-password", stdin="correct horse\n")
    assert done.returncode == 0, done.stderr
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# my settings\n") and "correct horse" not in text
    assert 'auth_mode = "password"' in text and 'password_hash = "scrypt$' in text
    served = start_serve(workspace)
    try:
        assert "token=" not in served.url
        page = await client.get(served.base + "/")
        assert page.status == 401 and 'name="password"' in await page.text()
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await client.ws_connect(_ws(served), headers={"Origin": served.base})
        login = served.base + "/login"
        origin = {"Origin": served.base}
        # A login form posted from another site is refused (login CSRF).
        forged = await client.post(login, data={"password": "correct horse"},
                                   headers={"Origin": "http://evil.example"})  # fmt: skip
        assert forged.status == 403
        for _ in range(4):
            wrong = await client.post(login, data={"password": "nope"}, headers=origin)
            assert wrong.status == 401
        # Slowed down: even the right password waits now.
        slowed = await client.post(login, data={"password": "correct horse"}, headers=origin)
        assert slowed.status == 429 and int(slowed.headers["Retry-After"]) >= 1
        assert served.apps() == []

        async def signs_in() -> bool:
            response = await client.post(
                login, data={"password": "correct horse"}, headers=origin, allow_redirects=False
            )
            return response.status == 303

        end = asyncio.get_running_loop().time() + 60
        while not await signs_in():
            assert asyncio.get_running_loop().time() < end
            await asyncio.sleep(0.2)
        ws = await client.ws_connect(_ws(served), headers=origin)
        await _screen_text(ws, b"Ask Reasonix")
        await ws.close()
    finally:
        served.stop()


async def test_auth_none_on_loopback_still_checks_host_and_origin(
    workspace: Path, configured: object, client: aiohttp.ClientSession
) -> None:
    served = start_serve(workspace, "--auth", "none")
    try:
        assert (await client.get(served.base + "/", headers={"Host": "evil.example"})).status == 403
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(_ws(served), headers={"Origin": "http://evil.example"})
        assert refused.value.status == 403
        assert served.apps() == []
        # The page itself is served (and pre-spawns its app, ended when unclaimed).
        assert (await client.get(served.base + "/")).status == 200
        [app] = wait_for(served.apps, "the pre-spawned app")  # type: ignore[misc]
        wait_for(lambda: not alive(app), "the unclaimed app to be ended")
    finally:
        served.stop()


def test_auth_none_off_loopback_exits_2(workspace: Path, configured: object) -> None:
    done = reasonix(workspace, "serve", "--host", "0.0.0.0", "--port", "0", "--auth", "none")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--behind-proxy" in done.stderr


def test_password_mode_without_a_password_exits_2(workspace: Path, configured: object) -> None:
    done = reasonix(workspace, "serve", "--port", "0", "--auth", "password")
    assert done.returncode == 2 and "--set-password" in done.stderr


def test_short_password_is_refused(workspace: Path, home: Path) -> None:
    done = reasonix(workspace, "serve", "--set-password", stdin="short\n")
    assert done.returncode == 2 and not (home / "config.toml").exists()


async def test_a_project_cannot_set_serve(
    workspace: Path, configured: object, client: aiohttp.ClientSession
) -> None:
    (workspace / "reasonix.toml").write_text(
        '[serve]\nauth_mode = "none"\nhosts = ["evil.example"]\n', encoding="utf-8"
    )
    served = start_serve(workspace)
    try:
        assert (await client.get(served.base + "/")).status == 401  # still the token
        headers = {"Host": "evil.example"}
        assert (await client.get(served.url, headers=headers)).status == 403
    finally:
        served.stop()
    assert served.process.stderr is not None
    notice = served.process.stderr.read()
    assert "reasonix.toml: [serve] is ignored: only the user's config.toml may set it" in notice
    env = {"REASONIX_SERVE__AUTH_MODE": "none"}
    done = reasonix(workspace, "serve", "--port", "0", env=env)
    assert done.returncode == 2 and "REASONIX_SERVE__AUTH_MODE" in done.stderr


def test_a_missing_extra_is_one_line(workspace: Path, configured: object, tmp_path: Path) -> None:
    # A module named aiohttp that fails to import stands in for an install without it.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "aiohttp.py").write_text("raise ImportError('not installed')\n", encoding="utf-8")
    env = {"PYTHONPATH": f"{shadow}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = reasonix(workspace, "serve", "--port", "0", env=env)
    assert done.returncode == 2
    assert done.stderr == (
        "reasonix: error: reasonix serve needs the serve extra: pip install 'reasonix[serve]' "
        "(or: uv tool install 'reasonix[serve]')\n"
    )


async def test_behind_a_proxy(
    workspace: Path, configured: object, client: aiohttp.ClientSession
) -> None:
    served = start_serve(workspace, "--behind-proxy")
    try:
        proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
        response = await client.get(served.url, headers=proxied, allow_redirects=False)
        assert response.status == 303 and "Secure" in response.headers["Set-Cookie"]
        # A Secure cookie: the client keeps it for https only, as a browser would; the
        # proxy forwards it over loopback http.
        cookie = response.headers["Set-Cookie"].split(";", 1)[0]
        page = await client.get(served.base + "/", headers={**proxied, "Cookie": cookie})
        # The page was served over https by the proxy: its websocket is wss on the same host.
        assert f"wss://127.0.0.1:{served.port}/ws" in await page.text()
    finally:
        served.stop()
    # auth none off loopback is allowed only this way (the proxy authenticates).
    served = start_serve(workspace, "--host", "0.0.0.0", "--auth", "none", "--behind-proxy")
    try:
        local = served.base.replace("0.0.0.0", "127.0.0.1")
        assert (await client.get(local + "/")).status == 200
        assert (await client.get(local + "/", headers={"Host": "evil.example"})).status == 403
    finally:
        served.stop()
