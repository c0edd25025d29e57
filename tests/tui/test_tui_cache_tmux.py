"""The prompt cache in a real terminal: tmux runs ``python -m reasonix_tui`` against the
loopback fixture; /model asks before breaking a warm cache, and /cache then shows the
break, named and priced."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from reasonix_testkit import ChatDialect, FixtureServer
from reasonix_testkit.serve import demo_responder
from tests.tui.test_tui_e2e_tmux import _tmux, _wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


def test_model_switch_asks_then_cache_view_names_the_break(tmp_path: Path) -> None:
    server = FixtureServer(ChatDialect("deepseek"), api_key="sk-e2e", port=0)
    server.responder = demo_responder
    server.start()
    home, workspace = tmp_path / "rx-home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "config.toml").write_text(
        "[[providers]]\n"
        'name = "fixture"\n'
        'kind = "openai"\n'
        f'base_url = "{server.base_url}"\n'
        'models = ["deepseek-flash", "deepseek-v4-pro"]\n'
        'default = "deepseek-flash"\n'
        'api_key_env = "FIXTURE_API_KEY"\n'
        "context_window = 131072\n"
        'reasoning_protocol = "deepseek"\n'
    )
    (home / ".env").write_text("FIXTURE_API_KEY=sk-e2e\n")
    session = f"reasonix-cache-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && env REASONIX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui; sleep 5"
    )
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "36", command],
        check=True,
        env=env,
    )
    try:
        _wait_for(session, "Ask Reasonix")
        _tmux("send-keys", "-t", session, "hello", "Enter")
        _wait_for(session, "You said: hello")
        _wait_for(session, "ask  ready")
        _tmux("send-keys", "-t", session, "/model deepseek-v4-pro", "Enter")
        screen = _wait_for(session, "Switch the model to deepseek-v4-pro?")
        assert "cached tokens" in screen and "now (" in screen
        _tmux("send-keys", "-t", session, "n")
        _wait_for(session, "ask  ready")
        assert "deepseek-flash" in _tmux("capture-pane", "-t", session, "-p")
        _tmux("send-keys", "-t", session, "/model deepseek-v4-pro", "Enter")
        _wait_for(session, "Switch the model to deepseek-v4-pro?")
        _tmux("send-keys", "-t", session, "y")
        _wait_for(session, "Model switched to deepseek-v4-pro")
        _tmux("send-keys", "-t", session, "again", "Enter")
        _wait_for(session, "You said: again")
        _wait_for(session, "ask  ready")
        _tmux("send-keys", "-t", session, "/cache", "Enter")
        screen = _wait_for(session, "by reason:")
        assert "request 2: model at byte 0" in screen
        assert "model: 1 break" in screen
        _tmux("send-keys", "-t", session, "Escape")
        _tmux("send-keys", "-t", session, "C-d")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        server.stop()
