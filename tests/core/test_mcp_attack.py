"""Issue 29, second adversarial pass over MCP declarations and OAuth storage:
``reasonix mcp add`` with hostile values, a hostile repository's declarations
(control characters, CR LF header smuggling, a ``reasonix.toml`` linked to the
user's config), and the token store's files planted as links."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from reasonix_core.mcp.tokens import TOKEN_FILE, TokenStore
from tests.core import test_mcp_oauth as _oauth

# The OAuth fixtures (a protected MCP server with its authorization server, and
# the browser script), shared with test_mcp_oauth.py.
oauth_server = _oauth.oauth_server
browser = _oauth.browser


def _cli(workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", *args],
        cwd=workspace,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


URL = "http://127.0.0.1:9/mcp"

HOSTILE_ADDS = [
    ["evil", URL, "--header", "X-A: a\r\nHost: evil.example"],
    ["evil", URL, "--header", "X-A: a\nX-Injected: 1"],
    ["evil", URL, "--header", "X-B: \x1b]0;owned\x07"],
    ["evil", URL, "--header", "X-C: del\x7f"],
    ["evil", "http://127.0.0.1:9/\x1b[2Jmcp"],
    ["evil", "http://127.0.0.1:9/\rmcp"],
    ["evil", URL, "--client-id", "id\n[mcp]\nx = 1"],
    ["evil", URL, "--client-id", "id\x1b[31m"],
    ['e"]\n[x', URL],
    ["../evil", URL],
    ["evil\x1b", URL],
    ["evil", URL, "--header", "X-D\r\nHost: b:1"],
]


@pytest.mark.parametrize("args", HOSTILE_ADDS)
def test_mcp_add_refuses_control_characters_and_writes_nothing(workspace, home, args):
    result = _cli(workspace, "mcp", "add", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (home / "config.toml").exists()


def _trusted_project(workspace, home, toml: str = "", mcp_json: object = None) -> None:
    if toml:
        (workspace / "reasonix.toml").write_text(toml)
    if mcp_json is not None:
        (workspace / ".mcp.json").write_text(json.dumps(mcp_json))
    trusted = _cli(workspace, "trust")
    assert trusted.returncode == 0, trusted.stderr


HOSTILE_DECLARATIONS = [
    {"j": {"url": URL, "headers": {"X": "a\r\nHost: evil.example"}}},
    {"j": {"url": URL, "headers": {"X\r\nHost": "b"}}},
    {"j": {"url": "http://127.0.0.1:9/\x1b]0;owned\x07"}},
    {"j": {"url": URL, "client_id": "id\x1b[2J"}},
    {"j": {"command": "/bin/true", "env": {"A": "x\x00y"}}},
    {"j": {"command": "/bin/tr\x00ue"}},
]


@pytest.mark.parametrize("servers", HOSTILE_DECLARATIONS)
def test_a_hostile_declaration_is_a_config_problem_never_on_the_wire(workspace, home, servers):
    _trusted_project(workspace, home, mcp_json={"mcpServers": servers})
    for args in (("mcp", "list"), ("mcp", "list", "--no-connect"), ("mcp", "get", "j")):
        result = _cli(workspace, *args)
        out = result.stdout + result.stderr
        assert "Traceback" not in out
        assert "\x1b" not in out and "\x07" not in out and "\r" not in out
        if args[1] == "list":
            assert any(w in out for w in ("control character", "NUL", "HTTP token")), out


def test_project_reasonix_toml_linked_to_the_user_config_is_not_copied(workspace, home):
    added = _cli(workspace, "mcp", "add", "private", "http://127.0.0.1:9/private")
    assert added.returncode == 0, added.stderr
    user_config = home / "config.toml"
    user_config.write_text(user_config.read_text() + "# my notes: token abc\n")
    before = user_config.read_text()
    link = workspace / "reasonix.toml"
    link.symlink_to(os.path.relpath(user_config, workspace))
    for args in (
        ("mcp", "add", "--scope", "project", "s1", URL),
        ("mcp", "remove", "--scope", "project", "private"),
    ):
        result = _cli(workspace, *args)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "outside the project" in result.stderr
        assert "Traceback" not in result.stderr
        assert link.is_symlink()
        assert user_config.read_text() == before


def test_project_reasonix_toml_linked_inside_the_project_is_edited(workspace, home):
    real = workspace / "conf" / "reasonix.toml"
    real.parent.mkdir()
    real.write_text("")
    (workspace / "reasonix.toml").symlink_to("conf/reasonix.toml")
    result = _cli(workspace, "mcp", "add", "--scope", "project", "s1", URL)
    assert result.returncode == 0, result.stderr


def test_token_store_files_planted_as_links_are_not_written_through(home, tmp_path):
    home.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (home / TOKEN_FILE).symlink_to(victim)
    store = TokenStore(home)
    store.save_tokens("https://mcp.example/", {"access_token": "t", "token_type": "Bearer"})
    assert victim.read_text() == "keep\n"
    assert not (home / TOKEN_FILE).is_symlink()
    assert (home / TOKEN_FILE).stat().st_mode & 0o777 == 0o600


def test_token_store_lock_planted_as_a_link_creates_nothing_elsewhere(home, tmp_path):
    home.mkdir(parents=True, exist_ok=True)
    made = tmp_path / "made-by-the-lock"
    (home / f".{TOKEN_FILE}.lock").symlink_to(made)
    store = TokenStore(home)
    with pytest.raises(OSError):
        store.save_tokens("https://mcp.example/", {"access_token": "t", "token_type": "Bearer"})
    assert not made.exists()


# -- a hostile authorization server --------------------------------------------


@pytest.mark.parametrize("token", ["crlf", "esc"])
def test_a_token_with_control_characters_is_refused_at_login(
    workspace, home, oauth_server, browser, token
):
    from tests.conftest import reasonix

    hostile = _hostile_server(oauth_server, token)
    assert _cli(workspace, "mcp", "add", "sec", hostile.url).returncode == 0
    done = reasonix(workspace, "mcp", "auth", "sec", "--timeout", "60", env=browser, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "Traceback" not in out
    assert "control character" in out
    assert "X-Injected" not in out and "\x1b" not in out
    assert not TokenStore(home).logged_in(hostile.url)


@pytest.mark.parametrize("token", ["huge-expiry", "negative-expiry"])
def test_a_token_with_a_hostile_lifetime_logs_in(workspace, home, oauth_server, browser, token):
    from tests.conftest import reasonix

    hostile = _hostile_server(oauth_server, token)
    assert _cli(workspace, "mcp", "add", "sec", hostile.url).returncode == 0
    done = reasonix(workspace, "mcp", "auth", "sec", "--timeout", "60", env=browser, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    expires = TokenStore(home).expires_at(hostile.url)
    assert expires is not None


def _hostile_server(start, token: str):
    os.environ["FIXTURE_TOKEN"] = token
    try:
        return start(name=f"hostile-{token}")
    finally:
        del os.environ["FIXTURE_TOKEN"]


# -- the loopback listener, as anything on this machine can reach it -------------


async def test_the_loopback_listener_survives_hostile_requests() -> None:
    import anyio
    import httpx

    from reasonix_core.mcp.oauth import LoopbackLogin

    async with LoopbackLogin(timeout=60, open_url=lambda url: None) as login:
        await login.open_browser("http://as.example/authorize?state=right-state")
        base = login.redirect_uri
        port = login.port
        # Raw requests: an oversized head, garbage, a request line with no target,
        # a connection that sends nothing and closes, a POST, a path traversal.
        raw = [
            b"GET /callback?state=guess&code=" + b"A" * 40_000 + b" HTTP/1.1\r\n\r\n",
            b"\x00\xff\xfe garbage\r\n\r\n",
            b"GET\r\n\r\n",
            b"",
            b"POST /callback?state=right-state&code=x HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            b"GET /../callback?state=right-state&code=x HTTP/1.1\r\n\r\n",
        ]
        for payload in raw:
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                if payload:
                    await stream.send(payload)
                try:
                    with anyio.fail_after(30):
                        await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, TimeoutError):
                    pass
        async with httpx.AsyncClient() as client:
            for params in (
                {"code": "c", "state": "right-state\r\nX: y"},
                {"code": "c", "state": ""},
                {"code": "c"},
                {"state": "right-state"},  # no code
            ):
                response = await client.get(base, params=params)
                assert response.status_code == 400, params
            # A refusal from the "server" with a hostile error text: shortened, filtered.
            refused = await client.get(
                base, params={"state": "right-state", "error": "\x1b[2Jaccess_denied" + "x" * 500}
            )
            assert refused.status_code == 200
        with pytest.raises(Exception) as failed:
            await login.wait()
        message = str(failed.value)
        assert "\x1b" not in message and len(message) < 120, message
