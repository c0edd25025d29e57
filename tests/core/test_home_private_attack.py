"""Issue 29, second adversarial pass over the private home: every command that
writes into ``~/.reasonix`` run under a hostile ``umask 000`` (the new writers:
``mcp add``, the OAuth token store, ``serve --set-password``, forks), and a token
store or config planted as a link. Nothing may be left readable by others."""

from __future__ import annotations

import os
import subprocess
import sys

from reasonix_testkit import Reply
from tests.conftest import TEST_KEY, TEST_KEY_ENV, write_config
from tests.core.test_home_private import loose


def _loose_umask(workspace, *args: str, stdin: str | None = None):
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    return subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", *args],
        cwd=workspace,
        env=env,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0),
    )


def test_every_writer_keeps_the_home_private_under_umask_000(workspace, home, server):
    write_config(home, server.base_url)
    server.enqueue(Reply(content="first"), Reply(content="second"))
    commands = [
        ("run", "hi"),
        ("run", "-c", "again"),
        ("mcp", "add", "remote", "http://127.0.0.1:9/mcp", "--header", "X-Key: v"),
        ("mcp", "add", "local", "--env", "A=b", "--", "/bin/true"),
        ("mcp", "remove", "local"),
        ("mcp", "auth", "remote", "--logout"),
        ("trust",),
    ]
    for args in commands:
        done = _loose_umask(workspace, *args)
        assert "Traceback" not in done.stderr, (args, done.stderr)
    done = _loose_umask(workspace, "serve", "--set-password", stdin="correct horse\n")
    assert done.returncode == 0, done.stderr
    assert loose(home) == [], "\n".join(loose(home))


def test_a_config_linked_elsewhere_is_replaced_not_written_through(workspace, home, tmp_path):
    home.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim.toml"
    victim.write_text("# someone else's file\n")
    os.chmod(victim, 0o644)
    (home / "config.toml").symlink_to(victim)
    done = _loose_umask(workspace, "mcp", "add", "remote", "http://127.0.0.1:9/mcp")
    assert "Traceback" not in done.stderr
    assert victim.read_text() == "# someone else's file\n"
    assert victim.stat().st_mode & 0o777 == 0o644
