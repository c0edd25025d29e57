"""Forking the user's own session (issue 32 item 4): ``reasonix run --fork-session -c``
/ ``-r ID`` run in a new session copied from that one, leaving it untouched; the first
request is a byte-exact extension of the original's last, so the cache hits."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix_testkit import Reply
from tests.conftest import reasonix


def sessions(home: Path) -> dict[str, Path]:
    return {p.stem: p for p in (home / "sessions").glob("*/*.jsonl")}


def messages_end(body: bytes) -> bytes:
    """The request's bytes up to the end of its last message (tools and the rest follow)."""
    return body[: body.index(b'],"tools"')]


def run_json(workspace: Path, *args: str) -> dict:
    proc = reasonix(workspace, "run", "--output-format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_fork_session_continue_extends_the_last_request_and_keeps_the_original(
    workspace, home, configured
):
    server = configured
    server.enqueue(Reply(content="first answer"), Reply(content="forked answer"))
    first = run_json(workspace, "first question")
    (original_id,) = sessions(home)
    original = sessions(home)[original_id].read_bytes()
    forked = run_json(workspace, "--fork-session", "-c", "second question")
    assert forked["session_id"] != original_id == first["session_id"]
    assert set(sessions(home)) == {original_id, forked["session_id"]}
    assert sessions(home)[original_id].read_bytes() == original  # untouched
    last, fork_first = (r.body for r in server.requests)
    assert fork_first.startswith(messages_end(last))
    sent = json.loads(fork_first)["messages"]
    assert sent[-2] == {"role": "assistant", "content": "first answer", "reasoning_content": ""}
    assert sent[-1]["content"].startswith("second question")
    # The fork knows where it came from; its records continue the original's.
    header = json.loads(sessions(home)[forked["session_id"]].read_text().splitlines()[0])
    assert header["extra"]["forked_from"] == original_id


def test_fork_session_with_resume_id_and_twice_from_one_original(workspace, home, configured):
    server = configured
    server.enqueue(*(Reply(content=f"a{i}") for i in range(3)))
    original_id = run_json(workspace, "start")["session_id"]
    original = sessions(home)[original_id].read_bytes()
    one = run_json(workspace, "--fork-session", "-r", original_id, "branch one")["session_id"]
    two = run_json(workspace, "--fork-session", "-r", original_id, "branch two")["session_id"]
    assert len({original_id, one, two}) == 3
    assert sessions(home)[original_id].read_bytes() == original
    first, b1, b2 = (r.body for r in server.requests)
    assert b1.startswith(messages_end(first)) and b2.startswith(messages_end(first))
    assert b"branch one" not in b2  # the branches do not see each other


def test_fork_session_needs_a_session_to_copy(workspace, configured):
    proc = reasonix(workspace, "run", "--fork-session", "hello")
    assert proc.returncode == 2
    assert "--fork-session needs -c or -r ID" in proc.stderr
    proc = reasonix(workspace, "run", "--fork-session", "-r", "../../etc/passwd", "hello")
    assert proc.returncode != 0 and "not a session id" in proc.stderr
    assert configured.requests == []
