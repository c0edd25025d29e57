"""MCP declarations: [[mcp.servers]], .mcp.json, precedence, ${VAR} expansion, bad entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core.mcp.config import load_mcp_setup


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def by_name(setup) -> dict:
    return {s.name: s for s in setup.servers}


def test_toml_array_and_table_forms(home: Path, workspace: Path) -> None:
    write(
        workspace / "reasonix.toml",
        """
[[mcp.servers]]
name = "fs"
command = "fs-server"
args = ["--root", "."]
env = { MODE = "ro" }

[[mcp.servers]]
name = "web"
type = "streamable-http"
url = "https://mcp.example.com/mcp"
headers = { "X-Team" = "core" }
startup_timeout_seconds = 5
call_timeout_seconds = 7
tool_timeout_seconds = { crawl = 600 }
""",
    )
    write(home / "config.toml", '[mcp.servers.notes]\ncommand = "notes"\nenabled = false\n')
    servers = by_name(
        load_mcp_setup(workspace, home, startup_timeout=30, call_timeout=300, trust_project=True)
    )
    fs, web, notes = servers["fs"], servers["web"], servers["notes"]
    assert (fs.transport, fs.command, fs.args, dict(fs.env)) == (
        "stdio",
        "fs-server",
        ("--root", "."),
        {"MODE": "ro"},
    )
    assert fs.cwd == workspace and (fs.startup_timeout, fs.call_timeout) == (30, 300)
    assert (web.transport, web.url, dict(web.headers)) == (
        "http",
        "https://mcp.example.com/mcp",
        {"X-Team": "core"},
    )
    assert (web.startup_timeout, web.call_timeout) == (5, 7)
    assert dict(web.tool_timeouts) == {"crawl": 600} and dict(fs.tool_timeouts) == {}
    assert notes.enabled is False and notes.source == str(home / "config.toml")


def test_precedence_project_over_global_and_toml_over_mcp_json(home: Path, workspace: Path) -> None:
    write(
        home / "config.toml",
        '[[mcp.servers]]\nname = "a"\ncommand = "global-a"\n\n'
        '[[mcp.servers]]\nname = "b"\ncommand = "global-b"\n\n'
        '[[mcp.servers]]\nname = "only-global"\ncommand = "g"\n',
    )
    write(
        workspace / ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "a": {"command": "json-a"},
                    "b": {"command": "json-b"},
                    "only-json": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                }
            }
        ),
    )
    write(workspace / "reasonix.toml", '[[mcp.servers]]\nname = "b"\ncommand = "toml-b"\n')
    servers = by_name(load_mcp_setup(workspace, home, trust_project=True))
    assert servers["a"].command == "json-a"  # project .mcp.json beats the global file
    assert servers["a"].source == str(workspace / ".mcp.json")
    assert servers["b"].command == "toml-b"  # reasonix.toml beats .mcp.json
    assert servers["only-global"].command == "g"
    assert servers["only-json"].transport == "sse"


def test_mcp_json_claude_schema(home: Path, workspace: Path) -> None:
    write(
        workspace / ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "local": {
                        "command": "npx",
                        "args": ["-y", "pkg"],
                        "env": {"K": "v"},
                        "someFutureKey": 1,
                    },
                    "remote": {"url": "https://x.example/mcp", "headers": {"A": "b"}},
                    "typed": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
                }
            }
        ),
    )
    setup = load_mcp_setup(workspace, home, trust_project=True)
    servers = by_name(setup)
    assert not setup.problems
    assert servers["local"].transport == "stdio" and servers["local"].args == ("-y", "pkg")
    assert servers["remote"].transport == "http" and dict(servers["remote"].headers) == {"A": "b"}
    assert servers["typed"].transport == "http"


def test_var_expansion_from_env_then_project_dotenv(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TOKEN", "from-env")
    monkeypatch.setenv("EMPTY_ONE", "")
    monkeypatch.delenv("UNSET_ONE", raising=False)
    write(workspace / ".env", "MCP_TOKEN=from-dotenv\nMCP_HOST=dotenv.example\nMCP_BIN=/opt/bin\n")
    write(
        workspace / "reasonix.toml",
        """
[[mcp.servers]]
name = "s"
command = "${MCP_BIN}/server"
args = ["--root", "${REASONIX_WORKSPACE_ROOT}", "${UNSET_ONE:-fallback}", "${EMPTY_ONE:-empty-default}"]
env = { TOKEN = "${MCP_TOKEN}" }

[[mcp.servers]]
name = "h"
url = "https://${MCP_HOST}/mcp"
headers = { Authorization = "Bearer ${MCP_TOKEN}" }
""",
    )
    servers = by_name(load_mcp_setup(workspace, home, trust_project=True))
    s, h = servers["s"], servers["h"]
    assert s.command == "/opt/bin/server"
    assert s.args == ("--root", str(workspace), "fallback", "empty-default")
    assert dict(s.env) == {"TOKEN": "from-env"}  # the environment wins over .env
    assert h.url == "https://dotenv.example/mcp"
    assert dict(h.headers) == {"Authorization": "Bearer from-env"}


def test_unset_variable_is_reported_by_name_never_by_value(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    monkeypatch.setenv("SECRET_USER", "alice-secret-value")
    write(
        workspace / "reasonix.toml",
        '[[mcp.servers]]\nname = "gh"\nurl = "https://api.example/${SECRET_USER}"\n'
        'headers = { Authorization = "Bearer ${NOT_SET_TOKEN}" }\n\n'
        '[[mcp.servers]]\nname = "ok"\ncommand = "fine"\n',
    )
    setup = load_mcp_setup(workspace, home, trust_project=True)
    assert [s.name for s in setup.servers] == ["ok"]  # the others still start
    (problem,) = setup.problems
    text = str(problem)
    assert problem.name == "'gh'" and str(workspace / "reasonix.toml") in text
    assert "NOT_SET_TOKEN" in text and "headers.Authorization" in text
    assert "alice-secret-value" not in text


def test_bad_entries_are_reported_with_file_and_entry_name(home: Path, workspace: Path) -> None:
    write(
        workspace / "reasonix.toml",
        """
[[mcp.servers]]
name = "typo"
comand = "x"

[[mcp.servers]]
command = "nameless"

[[mcp.servers]]
name = "weird"
type = "carrier-pigeon"
command = "x"

[[mcp.servers]]
name = "no-url"
type = "sse"

[[mcp.servers]]
name = "good"
command = "ok"
""",
    )
    write(workspace / ".mcp.json", "{ not json")
    setup = load_mcp_setup(workspace, home, trust_project=True)
    assert [s.name for s in setup.servers] == ["good"]
    messages = [str(p) for p in setup.problems]
    toml, mcp_json = str(workspace / "reasonix.toml"), str(workspace / ".mcp.json")
    assert any(mcp_json in m and "invalid JSON" in m for m in messages)
    assert any(
        toml in m and "'typo'" in m and "comand" in m and "did you mean 'command'" in m
        for m in messages
    )
    assert any(toml in m and "#1" in m and "no name" in m for m in messages)
    assert any("'weird'" in m and "carrier-pigeon" in m for m in messages)
    assert any("'no-url'" in m and "needs a url" in m for m in messages)
    assert setup.configured  # the proxy is offered: the model can see what is wrong


def test_unknown_mcp_table_key_is_a_problem_not_a_crash(home: Path, workspace: Path) -> None:
    write(workspace / "reasonix.toml", "[mcp]\nservrs = []\n")
    setup = load_mcp_setup(workspace, home, trust_project=True)
    assert not setup.servers
    assert "servrs" in str(setup.problems[0])


def test_stateful_names_default_to_serial_and_explicit_config_wins(
    home: Path, workspace: Path
) -> None:
    write(
        workspace / "reasonix.toml",
        """
[[mcp.servers]]
name = "Playwright"
command = "x"

[[mcp.servers]]
name = "my-chrome-tools"
command = "x"

[[mcp.servers]]
name = "browser"
command = "x"
concurrency = "parallel"

[[mcp.servers]]
name = "files"
command = "x"

[[mcp.servers]]
name = "db"
command = "x"
concurrency = "serial"
""",
    )
    servers = by_name(load_mcp_setup(workspace, home, trust_project=True))
    assert servers["Playwright"].concurrency == "serial"
    assert servers["my-chrome-tools"].concurrency == "serial"
    assert servers["browser"].concurrency == "parallel"
    assert servers["files"].concurrency == "parallel"
    assert servers["db"].concurrency == "serial"


def test_names_are_sanitised_and_clashes_reported(home: Path, workspace: Path) -> None:
    write(
        workspace / "reasonix.toml",
        '[[mcp.servers]]\nname = "my server"\ncommand = "x"\n\n'
        '[[mcp.servers]]\nname = "my_server"\ncommand = "y"\n',
    )
    setup = load_mcp_setup(workspace, home, trust_project=True)
    assert [s.key for s in setup.servers] == ["my_server"]
    assert "clashes" in str(setup.problems[0])


def test_nothing_declared(home: Path, workspace: Path) -> None:
    setup = load_mcp_setup(workspace, home, trust_project=True)
    assert not setup.servers and not setup.problems and not setup.configured
