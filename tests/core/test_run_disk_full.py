"""A filling disk never costs a JSON run its result (issue 29 item 11).

The real CLI against the loopback fixture server, with its sessions folder (or its
``--metrics`` file) on a real file system that is nearly full: a 256 KiB tmpfs that
bubblewrap mounts in a private mount namespace, filled up to the space the test
leaves free. The kernel itself answers ENOSPC, at whichever write comes first
(the session file's creation, its lock, an append, the metrics snapshot or the
final metrics file), so no write path is left out the way a patched ``os.write`` or
``open`` would leave out the ones it does not patch. bubblewrap needs no root and
no mount rights outside its namespace; where it cannot mount (no bwrap, no user
namespaces, a bwrap without ``--size``), the tests are skipped.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix_testkit import ChatDialect, FixtureServer, Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config

DISK = 256 * 1024
PAGE = 4096  # tmpfs counts whole pages: a sweep in pages meets every state


@functools.cache
def small_disk_unavailable() -> str | None:
    """Why a small file system cannot be mounted here (None when it can)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed"
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    proc = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--size", str(DISK), "--tmpfs", str(probe), "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        return f"bubblewrap cannot mount a sized tmpfs here: {proc.stderr.strip()}"
    return None


@pytest.fixture
def small_disk() -> None:
    reason = small_disk_unavailable()
    if reason is not None:
        pytest.skip(reason)


def run_on_full_disk(
    workspace: Path, home: Path, mount: Path, free: int, *args: str, keep: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``reasonix *args`` with a ``DISK``-sized tmpfs on ``mount`` holding a filler
    that leaves ``free`` bytes; what the run left there is copied to ``keep``."""
    mount.mkdir(parents=True, exist_ok=True)
    keep_step = f"; cp -a {mount}/. {keep}/; rm -f {keep}/.filler" if keep else ""
    script = f'head -c {DISK - free} /dev/zero > {mount}/.filler; "$@"; rc=$?{keep_step}; exit $rc'
    mount_tmpfs = ["bwrap", "--dev-bind", "/", "/", "--size", str(DISK), "--tmpfs", str(mount)]
    env = dict(os.environ, REASONIX_HOME=str(home), **{TEST_KEY_ENV: TEST_KEY})
    return subprocess.run(
        [*mount_tmpfs, "sh", "-c", script, "sh", sys.executable, "-m", "reasonix_tui.cli", *args],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def script_a_turn(server) -> None:
    """A tool call and a long answer: several appends, several pages."""
    server.enqueue(
        Reply(content="reading " * 300, tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="it says alpha. " * 1500),
    )


def result_of(proc: subprocess.CompletedProcess[str]) -> dict:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip(), f"no result on stdout (exit {proc.returncode}): {proc.stderr}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["type"] == "result"
    return result


def assert_disk_full(proc: subprocess.CompletedProcess[str], result: dict, where: Path) -> None:
    assert proc.returncode == 1, (proc.returncode, result, proc.stderr)
    assert result["subtype"] == "error_disk_full" and result["is_error"] is True, result
    assert "No space left on device" in result["result"], result["result"]
    assert str(where) in result["result"], result["result"]
    assert "metrics" in result
    assert "No space left on device" in proc.stderr, proc.stderr


def assert_whole_records(folder: Path) -> int:
    """Every session file under ``folder`` is whole JSON lines (no torn record)."""
    files = list(folder.rglob("*.jsonl"))
    for path in files:
        data = path.read_bytes()
        assert not data or data.endswith(b"\n"), (path, data[-80:])
        for line in data.splitlines():
            json.loads(line)
    return len(files)


def test_every_full_disk_moment_of_the_session_ends_with_the_json_result(
    workspace, home, tmp_path, small_disk
):
    """Sessions on a disk with 0, 1, 2... pages free, until the run fits: the
    session file's creation, its lock, each append and its close all meet ENOSPC
    at some level, and each prints the result, exit 1, no traceback."""
    (workspace / "a.txt").write_text("alpha\n")
    sessions = home / "sessions"
    failures = 0
    for pages in range(DISK // PAGE):
        keep = tmp_path / f"kept-{pages}"
        keep.mkdir()
        # A server of its own: a run that failed early leaves its replies unread.
        with FixtureServer(ChatDialect("deepseek"), api_key=TEST_KEY) as server:
            write_config(home, server.base_url)
            script_a_turn(server)
            proc = run_on_full_disk(
                workspace,
                home,
                sessions,
                pages * PAGE,
                "run",
                "read a.txt",
                "--output-format",
                "json",
                keep=keep,
            )
        result = result_of(proc)
        assert_whole_records(keep)
        if proc.returncode == 0:
            assert result["subtype"] == "success", result
            break
        assert_disk_full(proc, result, sessions)
        failures += 1
        last_failed = keep
    else:
        pytest.fail("the run never fitted on the disk")
    # The sweep met the disk full at more than one moment before the run fitted.
    assert failures >= 3, failures
    # Once there is space, the session the last full disk stopped mid-turn continues.
    shutil.copytree(last_failed, sessions, dirs_exist_ok=True)
    with FixtureServer(ChatDialect("deepseek"), api_key=TEST_KEY) as server:
        write_config(home, server.base_url)
        server.enqueue(Reply(content="continued"))
        proc = reasonix(workspace, "run", "-c", "go on", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert result_of(proc)["result"] == "continued"


def test_a_full_disk_under_the_metrics_file_ends_with_the_json_result(
    workspace, home, server, tmp_path, small_disk
):
    write_config(home, server.base_url)
    (workspace / "a.txt").write_text("alpha\n")
    metrics_dir = tmp_path / "metrics-disk"
    metrics = metrics_dir / "run.json"
    script_a_turn(server)
    proc = run_on_full_disk(
        workspace,
        home,
        metrics_dir,
        0,
        "run",
        "read a.txt",
        "--output-format",
        "json",
        "--metrics",
        str(metrics),
    )
    result = result_of(proc)
    assert_disk_full(proc, result, metrics)
    # The session itself was saved whole on its own disk.
    assert assert_whole_records(home / "sessions") == 1


def test_stream_json_and_text_say_the_disk_is_full(workspace, home, server, small_disk):
    write_config(home, server.base_url)
    (workspace / "a.txt").write_text("alpha\n")
    sessions = home / "sessions"
    script_a_turn(server)
    proc = run_on_full_disk(
        workspace, home, sessions, 0, "run", "read a.txt", "--output-format", "stream-json"
    )
    assert_disk_full(proc, result_of(proc), sessions)
    proc = run_on_full_disk(workspace, home, sessions, 0, "run", "read a.txt")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "No space left on device" in proc.stderr and str(sessions) in proc.stderr
