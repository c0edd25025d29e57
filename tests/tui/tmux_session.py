"""Shared set-up for the tmux tests: the real ``python -m reasonix_tui`` in a real
terminal, talking to the loopback fixture server. The test types with send-keys and
reads the pane with capture-pane."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from reasonix_testkit import ChatDialect, FixtureServer, Responder
from reasonix_testkit.serve import demo_responder

# Every tmux test is slow and is skipped, not failed, on a machine without tmux.
tmux_test_marks = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


def tmux(*args: str, socket: str = "") -> str:
    """A tmux command, on the server at the path ``socket`` (``tmux -S``) when given."""
    where = ["-S", socket] if socket else []
    done = subprocess.run(["tmux", *where, *args], capture_output=True, text=True, check=True)
    return done.stdout


@dataclass(frozen=True)
class TmuxPane:
    """One detached tmux session; every command targets it by name, on its own tmux
    server (``socket``): keys another program sends to the default server, to a session
    name ours begins with, cannot reach it."""

    session: str
    socket: str = ""

    def send_keys(self, *keys: str) -> None:
        tmux("send-keys", "-t", self.session, *keys, socket=self.socket)

    def screen(self) -> str:
        return tmux("capture-pane", "-t", self.session, "-p", socket=self.socket)

    def wait_for(self, needle: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never appeared; last screen:\n{screen}")

    def send_and_await_echo(self, text: str) -> None:
        """Send ``text`` as a prompt and wait for the demo responder's echo, then for the
        turn to end: the next key then goes to an idle composer, not to a running turn."""
        self.send_keys(text, "Enter")
        self.wait_for(f"You said: {text}")
        self.wait_for("ask  ready")

    def wait_for_gone(self, needle: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle not in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never went away; last screen:\n{screen}")


@dataclass(frozen=True)
class FixtureProvider:
    server: FixtureServer
    home: Path
    workspace: Path


@contextmanager
def fixture_provider(
    tmp_path: Path,
    responder: Responder = demo_responder,
    models: Sequence[str] = ("deepseek-flash",),
) -> Iterator[FixtureProvider]:
    """A running fixture server, an empty workspace and a REASONIX_HOME whose only
    provider is that server (the first model the default); the server stops on exit."""
    server = FixtureServer(ChatDialect("deepseek"), api_key="sk-e2e", port=0)
    server.responder = responder
    server.start()
    try:
        home, workspace = tmp_path / "rx-home", tmp_path / "ws"
        home.mkdir()
        workspace.mkdir()
        model_list = ", ".join(f'"{model}"' for model in models)
        (home / "config.toml").write_text(
            "[[providers]]\n"
            'name = "fixture"\n'
            'kind = "openai"\n'
            f'base_url = "{server.base_url}"\n'
            f"models = [{model_list}]\n"
            f'default = "{models[0]}"\n'
            'api_key_env = "FIXTURE_API_KEY"\n'
            "context_window = 131072\n"
            'reasoning_protocol = "deepseek"\n'
        )
        (home / ".env").write_text("FIXTURE_API_KEY=sk-e2e\n")
        yield FixtureProvider(server, home, workspace)
    finally:
        server.stop()


@contextmanager
def reasonix_in_tmux(
    provider: FixtureProvider,
    *,
    name: str,
    args: str = "",
    width: int = 100,
    height: int = 32,
    exit_file: Path | None = None,
) -> Iterator[TmuxPane]:
    """The real binary in a detached tmux session of the given size, run from the
    workspace; the session is killed on exit. With ``exit_file`` the binary's exit code
    is written there. The trailing sleep keeps the pane open after the binary exits, so
    a test can still read the last screen."""
    session = f"{name}-{uuid.uuid4().hex[:8]}"
    record_exit = f"; echo $? > {exit_file}" if exit_file is not None else ""
    command = (
        f"cd {provider.workspace} && env REASONIX_HOME={provider.home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui{' ' + args if args else ''}{record_exit}; sleep 5"
    )
    # Inside a tmux already (a developer's shell), TMUX would make new-session refuse.
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    # A tmux server of its own (tmux -S): nothing else typing into tmux reaches it.
    socket_dir = Path(tempfile.mkdtemp(prefix="rx-tmux-"))
    socket = str(socket_dir / "socket")
    try:
        size = ["-x", str(width), "-y", str(height)]
        server = ["tmux", "-S", socket, "-f", "/dev/null"]
        subprocess.run(
            [*server, "new-session", "-d", "-s", session, *size, command], check=True, env=env
        )
        yield TmuxPane(session, socket)
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True)
        shutil.rmtree(socket_dir, ignore_errors=True)
