"""A fleet in the real binary, in a real terminal: the engine's child events become cards
under the fleet's tool card, and a real Esc cancels the parent and the child still
running; the session then goes on. tmux runs ``python -m reasonix_tui`` against the
loopback fixture, scripted by content (the children's requests interleave)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from test_tui_e2e_tmux import _tmux, _wait_for

from reasonix_testkit import ChatDialect, ContentScript, FixtureServer, Reply, Stall, ToolCallSpec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


def test_fleet_cards_and_escape_in_the_real_binary(tmp_path: Path) -> None:
    items = [
        {"id": "slow", "prompt": "ITEM-SLOW: think for a long time", "read_only": True},
        {"id": "quick", "prompt": "ITEM-QUICK: answer now", "read_only": True},
    ]
    script = ContentScript()
    script.when(
        "PARENT-FLEET",
        Reply(tool_calls=[ToolCallSpec("fleet", json.dumps({"items": items}))]),
        Reply(content="The parent goes on."),
    )
    script.when("ITEM-QUICK", Reply(content="quick answer"))
    script.when("ITEM-SLOW", Stall(60))
    server = FixtureServer(ChatDialect("deepseek"), api_key="sk-e2e", port=0)
    server.responder = script
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
    session = f"reasonix-fleet-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && env REASONIX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui --permission-mode yolo; sleep 5"
    )
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "32", command],
        check=True,
        env=env,
    )
    try:
        _wait_for(session, "Ask Reasonix")
        _tmux("send-keys", "-t", session, "PARENT-FLEET split it", "Enter")
        screen = _wait_for(session, "✓ quick")
        assert "fleet  2 items  running" in screen
        assert "◐ slow · read_only_task" in screen  # live, under the fleet's card
        assert "quick answer" not in screen  # a child's answer is not the parent's
        _tmux("send-keys", "-t", session, "Escape")
        screen = _wait_for(session, "Turn cancelled")
        assert "⊘ slow" in screen and "✓ quick" in screen
        _tmux("send-keys", "-t", session, "and now?", "Enter")
        _wait_for(session, "The parent goes on.")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        server.stop()
