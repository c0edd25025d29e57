"""OAuth for remote MCP servers, end to end over loopback HTTP: a protected MCP
server built with the ``mcp`` SDK's server-side auth (``tests/fixtures/mcp_oauth_server.py``),
``reasonix mcp auth`` with ``$BROWSER`` a script that follows the authorization
redirect into the loopback listener, and ``reasonix run`` against the fixture model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from reasonix_core.mcp.oauth import LoginFailed, LoopbackLogin
from reasonix_core.mcp.tokens import TOKEN_FILE
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config
from tests.core.mcp_helpers import FIXTURES, free_port, http_process

OAUTH_SERVER = FIXTURES / "mcp_oauth_server.py"
BROWSER_SCRIPT = FIXTURES / "browser.py"


class OAuthServer:
    def __init__(self, port: int, events: Path, path: str = "/mcp") -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}{path}"
        self.events_file = events

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        try:
            lines = self.events_file.read_text().splitlines()
        except FileNotFoundError:
            return []
        found = [json.loads(line) for line in lines]
        return [e for e in found if kind is None or e["event"] == kind]

    def grants(self) -> list[str]:
        return [e["grant"] for e in self.events("token")]


@pytest.fixture
def oauth_server(tmp_path: Path) -> Iterator[Any]:
    """Start protected servers on demand: ``oauth_server(lifetime=3)``."""
    started: list[Any] = []

    def start(
        lifetime: int = 60,
        name: str = "as",
        callback_port: int = 0,
        openid_only: bool = False,
        transport: str = "http",
    ) -> OAuthServer:
        port = free_port()
        path = "/sse" if transport == "sse" else "/mcp"
        srv = OAuthServer(port, tmp_path / f"{name}-events.jsonl", path)
        argv = [sys.executable, str(OAUTH_SERVER), str(port), str(srv.events_file), str(lifetime)]
        argv += [str(callback_port)] if callback_port else []
        env = {"FIXTURE_OPENID_ONLY": "1" if openid_only else "0", "FIXTURE_TRANSPORT": transport}
        manager = http_process(argv, port, env)
        manager.__enter__()
        started.append(manager)
        return srv

    yield start
    for manager in started:
        manager.__exit__(None, None, None)


@pytest.fixture
def browser(tmp_path: Path) -> dict[str, str]:
    """``$BROWSER``: the script that plays the user's browser (and logs each URL)."""
    return {
        "BROWSER": f"{sys.executable} {BROWSER_SCRIPT} %s",
        "BROWSER_LOG": str(tmp_path / "browser.log"),
    }


def _use(server: str, tool: str) -> Reply:
    call = {"action": "call", "name": f"mcp__{server}__{tool}", "arguments": {}}
    return Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))])


def _tool_results(request_body: bytes) -> list[str]:
    messages = json.loads(request_body)["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def _log_in(workspace: Path, browser: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``reasonix mcp auth sec`` with the scripted browser."""
    return reasonix(workspace, "mcp", "auth", "sec", "--timeout", "60", env=browser, timeout=120)


def _logged_in(workspace: Path, browser: dict[str, str]) -> None:
    done = _log_in(workspace, browser)
    assert done.returncode == 0, done.stderr


def _stored(home: Path, url: str) -> dict[str, Any]:
    return json.loads((home / TOKEN_FILE).read_text())[url]


def test_login_then_a_tool_call_and_no_token_leaves_the_store(
    workspace: Path, home: Path, server: Any, oauth_server: Any, browser: dict[str, str],
    tmp_path: Path,
) -> None:  # fmt: skip
    write_config(home, server.base_url)
    srv = oauth_server()
    assert reasonix(workspace, "mcp", "add", "sec", srv.url).returncode == 0

    done = _log_in(workspace, browser)
    assert done.returncode == 0, done.stderr
    assert "logged in to 'sec'" in done.stdout
    assert "/authorize?" in done.stderr  # the URL, for a machine without a browser

    # Dynamic registration, one authorization, PKCE S256 and resource = the server URL.
    assert len(srv.events("register")) == 1
    [authorize] = srv.events("authorize")
    assert authorize["resource"] == srv.url
    assert srv.grants() == ["authorization_code"]
    [opened] = Path(browser["BROWSER_LOG"]).read_text().splitlines()
    query = parse_qs(urlsplit(opened).query)
    assert query["code_challenge_method"] == ["S256"] and query["state"][0]
    assert query["resource"] == [srv.url]
    assert query["redirect_uri"][0].startswith("http://127.0.0.1:")

    token_file = home / TOKEN_FILE
    assert token_file.stat().st_mode & 0o777 == 0o600
    record = _stored(home, srv.url)
    secrets = [record["tokens"]["access_token"], record["tokens"]["refresh_token"]]
    assert record["expires_at"] > time.time()

    server.enqueue(_use("sec", "whoami"), Reply(content="done"))
    metrics = tmp_path / "metrics.json"
    run = reasonix(
        workspace, "run", "who am I?", "--output-format", "stream-json",
        "--metrics", str(metrics), env=browser,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    results = _tool_results(server.requests[1].body)
    assert any("client " in r for r in results), results

    # No token anywhere but the store: every file under the temp HOME, the Reasonix
    # home and the workspace, the run's output, and every request to the model.
    leaks = []
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != token_file and not path.name.endswith("-events.jsonl"):
            data = path.read_bytes()
            leaks += [str(path) for s in secrets if s.encode() in data]
    for request in server.requests:
        blob = request.body + json.dumps(dict(request.headers)).encode()
        leaks += ["model request" for s in secrets if s.encode() in blob]
    leaks += ["run output" for s in secrets if s in run.stdout + run.stderr]
    assert leaks == []
    assert metrics.is_file()


def test_an_expired_token_is_refreshed_without_a_new_authorization(
    workspace: Path, home: Path, oauth_server: Any, browser: dict[str, str]
) -> None:
    srv = oauth_server(lifetime=3)
    reasonix(workspace, "mcp", "add", "sec", srv.url)
    _logged_in(workspace, browser)
    first = _stored(home, srv.url)
    # (On a slow machine the login's own connection may already have refreshed once.)
    seen = len(srv.grants())
    deadline = time.monotonic() + 60
    while _stored(home, srv.url)["expires_at"] > time.time() and time.monotonic() < deadline:
        time.sleep(0.1)  # the stored absolute expiry passes

    # A browser that would fail the test if it were opened.
    no_browser = {"BROWSER": f"{sys.executable} -c 'raise SystemExit(9)' %s"}
    listed = reasonix(workspace, "mcp", "list", "--json", env=no_browser)
    assert listed.returncode == 0, listed.stderr
    [status] = json.loads(listed.stdout)
    assert status["phase"] == "ready", status
    assert srv.grants()[0] == "authorization_code"
    assert srv.grants()[seen:] and set(srv.grants()[1:]) == {"refresh_token"}
    assert len(srv.events("authorize")) == 1
    second = _stored(home, srv.url)
    # The rotated refresh token was saved (the old one is spent on the server).
    assert second["tokens"]["refresh_token"] != first["tokens"]["refresh_token"]
    assert second["expires_at"] > first["expires_at"]

    # A token the server no longer accepts (401) is refreshed before any new login.
    data = json.loads((home / TOKEN_FILE).read_text())
    data[srv.url]["tokens"]["access_token"] = "revoked-by-the-server"
    data[srv.url]["expires_at"] = time.time() + 3600
    (home / TOKEN_FILE).write_text(json.dumps(data))
    seen = len(srv.grants())
    listed = reasonix(workspace, "mcp", "list", "--json", env=no_browser)
    assert json.loads(listed.stdout)[0]["phase"] == "ready", listed.stdout
    assert srv.grants()[seen:] and set(srv.grants()[seen:]) == {"refresh_token"}
    assert len(srv.events("authorize")) == 1


def test_headless_without_a_login_says_so_once_and_never_opens_a_browser(
    workspace: Path, home: Path, server: Any, oauth_server: Any, tmp_path: Path
) -> None:
    write_config(home, server.base_url)
    srv = oauth_server()
    reasonix(workspace, "mcp", "add", "sec", srv.url)
    marker = tmp_path / "browser-opened"
    env = {"BROWSER": f"touch {marker} %s"}
    server.enqueue(_use("sec", "whoami"), Reply(content="no luck"))
    run = reasonix(workspace, "run", "who am I?", env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    # One notice line (the other line naming it is the failed tool call's own echo).
    notices = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(notices) == 1 and "`reasonix mcp auth sec`" in notices[0], run.stderr
    assert "Traceback" not in run.stderr and "OAuth" not in run.stderr
    results = _tool_results(server.requests[1].body)
    assert any("reasonix mcp auth sec" in r for r in results), results
    assert not marker.exists()
    assert srv.events("register") == [] and srv.events("authorize") == []


def test_a_hostile_project_cannot_send_a_known_name_elsewhere_for_its_token(
    workspace: Path, home: Path, oauth_server: Any, browser: dict[str, str]
) -> None:
    legit = oauth_server(name="legit")
    attacker = oauth_server(name="attacker")
    reasonix(workspace, "mcp", "add", "sec", legit.url)
    _logged_in(workspace, browser)
    token = _stored(home, legit.url)["tokens"]["access_token"]

    # The repository redeclares "sec" at its own URL: untrusted, it is not even started.
    (workspace / "reasonix.toml").write_text(
        f'[[mcp.servers]]\nname = "sec"\nurl = "{attacker.url}"\n', encoding="utf-8"
    )
    listed = reasonix(workspace, "mcp", "list", env=browser)
    assert "not trusted" in listed.stdout
    assert attacker.events() == []

    # Trusted (the worst case), the name now means the attacker's URL: no token for it.
    assert reasonix(workspace, "trust").returncode == 0
    listed = reasonix(workspace, "mcp", "list", "--json", env=browser)
    [status] = json.loads(listed.stdout)
    assert status["phase"] == "failed" and "reasonix mcp auth sec" in status["reason"]
    presented = [e["token"] for e in attacker.events("bearer")]
    assert token not in presented and not any(t for t in presented)
    assert attacker.events("authorize") == []


async def test_the_loopback_listener_checks_state_and_times_out() -> None:
    opened: list[str] = []
    async with LoopbackLogin(timeout=30, open_url=opened.append) as login:
        await login.open_browser("http://as.example/authorize?state=right-state&x=1")
        base = login.redirect_uri
        async with httpx.AsyncClient() as client:
            wrong = await client.get(base, params={"code": "c1", "state": "wrong"})
            assert wrong.status_code == 400
            other = await client.get(base.replace("/callback", "/other"), params={"code": "c"})
            assert other.status_code == 404
            right = await client.get(base, params={"code": "c2", "state": "right-state"})
            assert right.status_code == 200
        got = await login.wait()
        assert (got.code, got.state) == ("c2", "right-state")
    deadline = time.monotonic() + 30
    while not opened and time.monotonic() < deadline:  # noqa: ASYNC110 (a thread appends)
        await anyio.sleep(0.01)
    assert opened == ["http://as.example/authorize?state=right-state&x=1"]

    async with LoopbackLogin(timeout=0.2, open_url=lambda url: None) as login:
        await login.open_browser("http://as.example/authorize?state=s")
        with pytest.raises(LoginFailed, match="timed out"):
            await login.wait()


def test_logout_forgets_the_tokens(
    workspace: Path, home: Path, oauth_server: Any, browser: dict[str, str]
) -> None:
    srv = oauth_server()
    reasonix(workspace, "mcp", "add", "sec", srv.url)
    _logged_in(workspace, browser)
    assert "logged in" in reasonix(workspace, "mcp", "get", "sec").stdout
    done = reasonix(workspace, "mcp", "auth", "--logout", "sec")
    assert done.returncode == 0 and "forgotten" in done.stdout
    assert srv.url not in json.loads((home / TOKEN_FILE).read_text())
    assert "not logged in" in reasonix(workspace, "mcp", "get", "sec").stdout
    assert os.stat(home / TOKEN_FILE).st_mode & 0o777 == 0o600


def test_a_configured_client_id_logs_in_without_registering(
    workspace: Path, home: Path, server: Any, oauth_server: Any, browser: dict[str, str]
) -> None:
    write_config(home, server.base_url)
    callback = free_port()
    srv = oauth_server(callback_port=callback)
    added = reasonix(
        workspace, "mcp", "add", "sec", srv.url, "--client-id", "preset-client",
        "--callback-port", str(callback),
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert 'client_id = "preset-client"' in (home / "config.toml").read_text()
    done = _log_in(workspace, browser)
    assert done.returncode == 0, done.stderr
    assert srv.events("register") == []
    [authorize] = srv.events("authorize")
    assert authorize["redirect_uri"] == f"http://127.0.0.1:{callback}/callback"
    server.enqueue(_use("sec", "whoami"), Reply(content="done"))
    run = reasonix(workspace, "run", "who am I?")
    assert run.returncode == 0, run.stderr
    assert any("client preset-client" in r for r in _tool_results(server.requests[1].body))


def test_authorization_server_metadata_falls_back_to_openid_discovery(
    workspace: Path, home: Path, oauth_server: Any, browser: dict[str, str]
) -> None:
    srv = oauth_server(openid_only=True)
    reasonix(workspace, "mcp", "add", "sec", srv.url)
    done = _log_in(workspace, browser)
    assert done.returncode == 0, done.stderr
    paths = [e["path"] for e in srv.events("metadata")]
    assert paths[-2:] == [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ]
    assert len(srv.events("authorize")) == 1


def test_login_and_a_tool_call_over_sse(
    workspace: Path, home: Path, server: Any, oauth_server: Any, browser: dict[str, str]
) -> None:
    write_config(home, server.base_url)
    srv = oauth_server(transport="sse")
    assert reasonix(workspace, "mcp", "add", "sec", srv.url, "--transport", "sse").returncode == 0
    done = _log_in(workspace, browser)
    assert done.returncode == 0, done.stderr
    assert srv.events("authorize")[0]["resource"] == srv.url
    server.enqueue(_use("sec", "whoami"), Reply(content="done"))
    run = reasonix(workspace, "run", "who am I?")
    assert run.returncode == 0, run.stderr
    assert any("client " in r for r in _tool_results(server.requests[1].body))
