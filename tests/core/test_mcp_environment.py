"""What a stdio MCP server's process sees: a working environment (locale, proxy, CA,
temp dir, the project folder, its own env) and never a provider key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core.errors import ConfigError
from reasonix_core.mcp.config import expand_vars, load_mcp_setup
from tests.core.mcp_helpers import host, stdio_server

PASSED = {
    "LANG": "zh_CN.UTF-8",
    "LC_ALL": "zh_CN.UTF-8",
    "LC_MESSAGES": "C",
    "HTTPS_PROXY": "http://proxy.corp:3128",
    "https_proxy": "http://proxy.corp:3128",
    "HTTP_PROXY": "http://proxy.corp:3128",
    "http_proxy": "http://proxy.corp:3128",
    "NO_PROXY": "localhost,.corp",
    "no_proxy": "localhost,.corp",
    "SSL_CERT_FILE": "/etc/corp/ca.pem",
    "SSL_CERT_DIR": "/etc/corp/certs",
    "REQUESTS_CA_BUNDLE": "/etc/corp/ca.pem",
    "NODE_EXTRA_CA_CERTS": "/etc/corp/ca.pem",
    "TMPDIR": "/var/tmp/me",
}
KEPT_OUT = {
    "DEEPSEEK_API_KEY": "sk-deepseek-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "SOME_OTHER_THING": "x",
}


async def test_a_stdio_server_gets_a_working_environment_and_no_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**PASSED, **KEPT_OUT}.items():
        monkeypatch.setenv(name, value)
    dump = tmp_path / "env.json"
    server = stdio_server(
        "fx", "serve", "--env-dump", str(dump), env={"OWN": "mine", "LANG": "C.UTF-8"}
    )
    h = host(tmp_path, server)
    async with h:
        (status,) = await h.wait_ready()
    assert status.phase == "ready", status
    seen = json.loads(dump.read_text())
    for name, value in PASSED.items():
        if name != "LANG":
            assert seen.get(name) == value, name
    assert seen["LANG"] == "C.UTF-8"  # the server's own env wins
    assert seen["OWN"] == "mine"
    assert seen["REASONIX_PROJECT_DIR"] == str(tmp_path)
    assert seen["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    for name in KEPT_OUT:
        assert name not in seen, name
    assert "sk-" not in json.dumps(seen)


def test_a_set_but_empty_variable_in_a_header_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[[mcp.servers]]\nname = "gh"\nurl = "https://example.invalid/mcp"\n'
        'headers = { Authorization = "Bearer ${GH_TOKEN}" }\n'
    )
    monkeypatch.setenv("GH_TOKEN", "")
    setup = load_mcp_setup(tmp_path, home)
    assert setup.servers == ()
    (problem,) = setup.problems
    assert "environment variable GH_TOKEN is set but empty (used in headers.Authorization)" in str(
        problem
    )
    # Elsewhere an empty value stays allowed (an env entry may be meant empty).
    with pytest.raises(ConfigError, match="GH_TOKEN is set but empty"):
        expand_vars("Bearer ${GH_TOKEN}", {"GH_TOKEN": ""}.get, "headers.x", empty_is_error=True)
    assert expand_vars("${GH_TOKEN}", {"GH_TOKEN": ""}.get) == ""
