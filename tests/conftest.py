"""Shared fixtures: an isolated Reasonix home, a workspace, and the loopback
fixture server configured as the only provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TEST_KEY_ENV = "REASONIX_TEST_KEY"
TEST_KEY = "sk-test-0123456789"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test ever sees the developer's real config, keys or sessions."""
    home = tmp_path / "reasonix-home"
    home.mkdir()
    monkeypatch.setenv("REASONIX_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    (tmp_path / "user-home").mkdir()
    for name in list(os.environ):
        # REASONIX_AGENT__MAX_STEPS, REASONIX_DEFAULT_MODEL...: settings from the environment.
        setting = name.startswith("REASONIX_") and ("__" in name or name.endswith("DEFAULT_MODEL"))
        if name.endswith("_API_KEY") or setting:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(TEST_KEY_ENV, raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "reasonix-home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def server() -> Iterator[object]:
    from reasonix_testkit import ChatDialect, FixtureServer

    with FixtureServer(ChatDialect("deepseek"), api_key=TEST_KEY) as srv:
        yield srv


def provider_toml(
    base_url: str,
    *,
    name: str = "fixture",
    protocol: str = "deepseek",
    models: tuple[str, ...] = ("deepseek-flash", "deepseek-v4-pro"),
) -> str:
    model_list = ", ".join(f'"{m}"' for m in models)
    return f"""
[[providers]]
name = "{name}"
kind = "openai"
base_url = "{base_url}"
models = [{model_list}]
default = "{models[0]}"
api_key_env = "{TEST_KEY_ENV}"
context_window = 1000000
reasoning_protocol = "{protocol}"
"""


def write_config(home: Path, base_url: str, extra: str = "", **kwargs: object) -> Path:
    text = (
        provider_toml(base_url, **kwargs)  # type: ignore[arg-type]
        + """
[agent]
retry_base_delay = 0.01
retry_max_delay = 0.05

[sandbox]
bash = "off"
"""
        + extra
    )
    path = home / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cfg(home: Path, server: object) -> object:
    """The fixture server as the default provider (the key not set: child
    processes get it from :func:`reasonix`)."""
    write_config(home, server.base_url)  # type: ignore[attr-defined]
    return server


def first_user_text(server: object) -> str:
    """The first user message of the first request the fixture server received."""
    body = server.requests[0].body  # type: ignore[attr-defined]
    messages = json.loads(body)["messages"]
    return next(m["content"] for m in messages if m["role"] == "user")


@pytest.fixture
def configured(home: Path, server: object, monkeypatch: pytest.MonkeyPatch) -> object:
    """The fixture server as the default provider, with its key in the env."""
    write_config(home, server.base_url)  # type: ignore[attr-defined]
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    return server


def reasonix(
    workspace: Path,
    *args: str,
    stdin: str | None = None,
    key: bool = True,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``reasonix *args`` in a child process, in ``workspace``.

    The child inherits this process's isolated environment (REASONIX_HOME), plus
    the test key unless ``key`` is false, plus ``env``.
    """
    child_env = dict(os.environ)
    if key:
        child_env[TEST_KEY_ENV] = TEST_KEY
    child_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", *args],
        cwd=workspace,
        env=child_env,
        input=stdin,
        # Not the test runner's own standard input: a piped one would be appended.
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
