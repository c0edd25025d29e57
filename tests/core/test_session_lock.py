"""Issue 29 item 10: two `reasonix run -c` at once on one session. The second
is refused with one line naming the process that holds the session (exit 1),
before it sends anything, and the session stays valid for the next `-c`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from reasonix_testkit import Reply
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _wait_until(condition, what: str, deadline: float = 60.0) -> None:
    """Poll until ``condition()`` holds (returns as soon as it does)."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _session_rows(home) -> list[dict]:
    (path,) = list((home / "sessions").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_second_continue_on_a_busy_session_is_refused_naming_the_holder(workspace, home, cfg):
    cfg.enqueue(Reply(content="first answer"))
    assert reasonix(workspace, "run", "first").returncode == 0
    release = threading.Event()
    calls: list[object] = []

    def held(record):  # the first -c's request: answered once the test says so
        calls.append(record)
        if len(calls) > 1:
            return Reply(content="interleaved")  # what a second writer would get
        release.wait(120)
        return Reply(content="second answer")

    cfg.responder = held
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    holder = subprocess.Popen(
        [sys.executable, "-m", "reasonix_tui.cli", "run", "-c", "second"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_until(lambda: len(cfg.requests) == 2, "the first -c's request")
        other = reasonix(workspace, "run", "-c", "third")
        assert other.returncode == 1, other.stderr
        lines = other.stderr.strip().splitlines()
        assert len(lines) == 1, other.stderr
        assert f"pid {holder.pid}" in lines[0] and "in use" in lines[0]
        assert "Traceback" not in other.stderr
        assert len(cfg.requests) == 2  # the refused run sent nothing
        # The same for -r ID.
        session_id = _session_rows(home)[0]["id"]
        by_id = reasonix(workspace, "run", "-r", session_id, "third")
        assert by_id.returncode == 1 and f"pid {holder.pid}" in by_id.stderr
        # Nor is the session rewound under the running agent; listing it is fine.
        rewound = reasonix(workspace, "rewind", "1", "--scope", "chat")
        assert rewound.returncode == 1 and f"pid {holder.pid}" in rewound.stderr
        assert reasonix(workspace, "rewind", "--list").returncode == 0
    finally:
        release.set()
        out, err = holder.communicate(timeout=120)
    assert holder.returncode == 0, err
    assert out.strip() == "second answer"
    cfg.responder = None
    # Released with the run: the next -c goes on, on a valid session.
    cfg.enqueue(Reply(content="third answer"))
    proc = reasonix(workspace, "run", "-c", "third")
    assert proc.returncode == 0, proc.stderr
    texts = [r["message"].get("content") for r in _session_rows(home) if r.get("type") == "message"]
    assert [t for t in texts if t and t.endswith("answer")] == [
        "first answer",
        "second answer",
        "third answer",
    ]


def test_a_lock_left_by_a_dead_process_does_not_block(workspace, home, cfg):
    cfg.enqueue(Reply(content="first answer"))
    assert reasonix(workspace, "run", "first").returncode == 0
    (path,) = list((home / "sessions").rglob("*.jsonl"))
    # A lock file from a run that was killed: its flock died with it.
    path.with_suffix(".lock").write_text("999999\n")
    cfg.enqueue(Reply(content="second answer"))
    proc = reasonix(workspace, "run", "-c", "second")
    assert proc.returncode == 0, proc.stderr
