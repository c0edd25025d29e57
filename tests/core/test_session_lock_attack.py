"""Issue 29, second adversarial pass: the session lock file as a local attacker
or a broken disk leaves it (a FIFO, a symlink, a folder, garbage). Every one
ends in a one-line error or a normal run, never a traceback, and a symlink is
never followed to create or truncate a file elsewhere."""

from __future__ import annotations

import os

import pytest

from reasonix_testkit import Reply
from tests.conftest import reasonix, write_config


@pytest.fixture
def first_run(workspace, home, server):
    write_config(home, server.base_url)
    server.enqueue(Reply(content="first answer"))
    assert reasonix(workspace, "run", "first").returncode == 0
    (session,) = list((home / "sessions").rglob("*.jsonl"))
    return session


def _continue(workspace, server):
    server.enqueue(Reply(content="next answer"))
    return reasonix(workspace, "run", "-c", "next")


def _one_line_error(result) -> None:
    assert result.returncode == 2, result.stderr  # a session error, as for any unusable session
    assert "Traceback" not in result.stderr
    assert "session lock" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_fifo_as_the_lock_file_is_a_clear_error(workspace, server, first_run):
    lock = first_run.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    _one_line_error(_continue(workspace, server))


def test_a_symlink_as_the_lock_file_is_not_followed(workspace, server, first_run, tmp_path):
    lock = first_run.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    lock.symlink_to(victim)
    _one_line_error(_continue(workspace, server))
    assert victim.read_text() == "keep me\n"
    dangling = tmp_path / "made-by-the-lock"
    lock.unlink()
    lock.symlink_to(dangling)
    _one_line_error(_continue(workspace, server))
    assert not dangling.exists()


def test_a_folder_as_the_lock_file_is_a_clear_error(workspace, server, first_run):
    lock = first_run.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    lock.mkdir()
    _one_line_error(_continue(workspace, server))


@pytest.mark.parametrize("content", [b"", b"not a pid\n", b"9" * 100_000, b"\xff\xfe\x00"])
def test_a_stale_lock_with_garbage_is_taken_over(workspace, server, first_run, content):
    first_run.with_suffix(".lock").write_bytes(content)
    result = _continue(workspace, server)
    assert result.returncode == 0, result.stderr
    assert first_run.with_suffix(".lock").read_text().strip() != "9" * 100_000
