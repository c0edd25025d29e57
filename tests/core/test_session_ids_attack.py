"""Issue 29, second adversarial pass: session ids given to `run -r` that are
paths, empty or patterns. Each is one line naming the id (exit 2); an empty id
never silently starts a new session in place of the one asked for."""

from __future__ import annotations

import pytest

from reasonix_testkit import Reply
from tests.conftest import reasonix, write_config

HOSTILE_IDS = ["", " ", "../x", "/etc/passwd", "*", "20261207-000000-abcdef/../../x", "a" * 5000]


@pytest.mark.parametrize("session_id", HOSTILE_IDS, ids=lambda s: repr(s)[:20])
@pytest.mark.parametrize("fork", [False, True])
def test_run_refuses_a_session_id_that_is_not_one(workspace, home, server, session_id, fork):
    write_config(home, server.base_url)
    server.enqueue(Reply(content="should not be asked"))
    args = ["run", "-r", session_id, *(["--fork-session"] if fork else []), "hi"]
    result = reasonix(workspace, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert server.requests == []
    assert not list((home / "sessions").rglob("*.jsonl")) if (home / "sessions").exists() else True
