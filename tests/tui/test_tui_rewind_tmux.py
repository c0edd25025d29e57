"""Esc Esc in a real terminal: tmux runs the real binary, sends two Escape keys
in one write (as a quick double press arrives), and the rewind picker opens."""

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


def test_esc_esc_opens_the_rewind_picker(tmp_path: Path) -> None:
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
        'models = ["deepseek-flash"]\n'
        'default = "deepseek-flash"\n'
        'api_key_env = "FIXTURE_API_KEY"\n'
        "context_window = 131072\n"
        'reasoning_protocol = "deepseek"\n'
    )
    (home / ".env").write_text("FIXTURE_API_KEY=sk-e2e\n")
    session = f"reasonix-rewind-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && env REASONIX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui; sleep 5"
    )
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "32", command],
        check=True,
        env=env,
    )
    try:
        _wait_for(session, "Ask Reasonix")
        _tmux("send-keys", "-t", session, "hello from tmux", "Enter")
        _wait_for(session, "You said: hello from tmux")
        _wait_for(session, "ask  ready")
        _tmux("send-keys", "-t", session, "Escape", "Escape")
        screen = _wait_for(session, "Rewind to the start of a turn")
        assert "hello from tmux" in screen  # the turn is listed
        _tmux("send-keys", "-t", session, "Enter")
        screen = _wait_for(session, "Conversation: continue from just before this turn")
        assert "no file" in screen.lower()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        server.stop()
