"""The real binary in a real terminal: tmux runs ``python -m reasonix_tui`` against the
loopback fixture server; the test types with send-keys and reads with capture-pane."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from reasonix_testkit import ChatDialect, FixtureServer
from reasonix_testkit.serve import demo_responder

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


def _tmux(*args: str) -> str:
    done = subprocess.run(["tmux", *args], capture_output=True, text=True, check=True)
    return done.stdout


def _wait_for(session: str, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-t", session, "-p")
        if needle in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared; last screen:\n{screen}")


def test_real_binary_answers_and_quits(tmp_path: Path) -> None:
    server = FixtureServer(ChatDialect("deepseek"), api_key="sk-e2e", port=0)
    server.responder = demo_responder
    server.start()
    home, workspace = tmp_path / "rx-home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (workspace / "main.py").write_text("print('x')\n")
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
    exit_file = tmp_path / "exit.txt"
    session = f"reasonix-e2e-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && env REASONIX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui; echo $? > {exit_file}; sleep 5"
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
        screen = _wait_for(session, "You said: hello from tmux")
        assert "● ask" in screen
        _tmux("send-keys", "-t", session, "please list files", "Enter")
        screen = _wait_for(session, "Here is what I found")
        assert "main.py" in screen and "✓ ok" in screen
        # The answer streams before the turn ends; a Ctrl+C before then cancels the turn
        # instead of arming the quit (seen on a loaded machine).
        _wait_for(session, "ask  ready")
        _tmux("send-keys", "-t", session, "C-c")
        _wait_for(session, "Press Ctrl+C again to quit")
        _tmux("send-keys", "-t", session, "C-c")
        deadline = time.monotonic() + 10
        while not exit_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert exit_file.read_text().strip() == "0"
        assert (home / "logs" / "reasonix.log").exists()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        server.stop()


def test_real_binary_runs_a_skill_from_the_slash_menu(tmp_path: Path) -> None:
    """Real keys: ``/gr`` shows the project's skill in the menu once the services are
    built, Tab completes it, Enter sends its body with the arguments filled in."""
    server = FixtureServer(ChatDialect("deepseek"), api_key="sk-e2e", port=0)
    server.responder = demo_responder
    server.start()
    home, workspace = tmp_path / "rx-home", tmp_path / "ws"
    home.mkdir()
    skill = workspace / ".reasonix" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: greet\ndescription: Greet someone warmly\n---\n\nSay hello to $ARGUMENTS.\n"
    )
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
    session = f"reasonix-e2e-{uuid.uuid4().hex[:8]}"
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
        _wait_for(session, "Ask Reasonix", timeout=40)
        _wait_for(session, "ask  ready", timeout=40)  # the services are built: skills known
        _tmux("send-keys", "-t", session, "/gr")
        _wait_for(session, "/greet")  # the menu's one item
        _tmux("send-keys", "-t", session, "Tab")
        _wait_for(session, "/greet ")
        _tmux("send-keys", "-t", session, "Ada Lovelace", "Enter")
        _wait_for(session, "You said: Say hello to Ada Lovelace.")
        user = [m for m in server.requests[0].json["messages"] if m["role"] == "user"][0]
        assert user["content"].startswith("Say hello to Ada Lovelace.")
        assert "- greet: Greet someone warmly" in server.requests[0].json["messages"][0]["content"]
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        server.stop()


def test_resume_scroll_follow_and_alt_enter_in_a_real_terminal(tmp_path: Path) -> None:
    """Issue 14, items 1-4: ``-c`` redraws the saved session at its bottom; PageUp/Home
    scroll it with the composer focused; Alt+Enter (ESC CR) adds a line; sending jumps
    back to the bottom."""
    import json

    from reasonix_core.agent.session import SessionHeader, SessionStore
    from reasonix_core.messages import Message, ToolCall

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
    header = SessionHeader(
        id="20250101-000000-e2e000",
        workspace=str(workspace),
        created="2025-01-01T00:00:00",
        model="deepseek-flash",
        effort="auto",
        system_prompt="",
        tools_fingerprint="",
    )
    store = SessionStore.create(home / "sessions", workspace, header)
    for n in range(30):
        call = ToolCall(id=f"c{n}", name="read_file", arguments=json.dumps({"path": f"f{n}.py"}))
        store.append(Message(role="user", content=f"old question {n}"))
        store.append(Message(role="assistant", reasoning_content="hmm", tool_calls=(call,)))
        store.append(Message(role="tool", tool_call_id=call.id, content=f"contents {n}"))
        store.append(Message(role="assistant", content=f"Old answer number {n}."))
    store.close()

    session = f"reasonix-e2e-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && env REASONIX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui -c; sleep 5"
    )
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "32", command],
        check=True,
        env=env,
    )
    try:
        screen = _wait_for(session, "Old answer number 29.")  # drawn, at the bottom
        assert "thought" in screen and "read_file" in screen
        _tmux("send-keys", "-t", session, "PageUp")
        screen = _wait_for_gone(session, "Old answer number 29.")
        # Empty composer: Home goes to the top, where the older blocks are drawn above the
        # view; scrolling on up shows them.
        _tmux("send-keys", "-t", session, "Home")
        deadline = time.monotonic() + 20

        def older_shown(screen: str) -> bool:  # the first 16 blocks drawn were turns 26-29
            return any(int(n) < 26 for n in re.findall(r"old question (\d+)", screen))

        while not older_shown(screen := _tmux("capture-pane", "-t", session, "-p")):
            assert time.monotonic() < deadline, f"the older blocks never showed:\n{screen}"
            _tmux("send-keys", "-t", session, "PageUp")
            time.sleep(0.3)
        _tmux("send-keys", "-t", session, "End")
        _wait_for(session, "Old answer number 29.")
        _tmux("send-keys", "-t", session, "PageUp")
        _wait_for_gone(session, "Old answer number 29.")
        # Alt+Enter as a terminal sends it (ESC CR) adds a line instead of sending.
        _tmux("send-keys", "-t", session, "first line")
        _tmux("send-keys", "-t", session, "M-Enter")
        _tmux("send-keys", "-t", session, "second line")
        screen = _wait_for(session, "second line")
        assert "first line" in screen
        assert "You said" not in screen
        _tmux("send-keys", "-t", session, "Enter")  # sending jumps to the bottom
        screen = _wait_for(session, "You said: first line")
        assert "Old answer number 29." in screen
        _tmux("send-keys", "-t", session, "/status", "Enter")
        _wait_for(session, "session 20250101-000000-e2e000")
        _tmux("send-keys", "-t", session, "C-d")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        server.stop()


def _wait_for_gone(session: str, needle: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-t", session, "-p")
        if needle not in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never went away; last screen:\n{screen}")
