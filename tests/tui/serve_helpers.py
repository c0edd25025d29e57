"""A real ``reasonix serve`` process on loopback for the serve tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import TEST_KEY, TEST_KEY_ENV

DEADLINE = 60.0


def wait_for(condition: Callable[[], object], what: str, deadline: float = DEADLINE) -> object:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def children(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc), zombies excluded."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    out: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        out += kids
        frontier += kids
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str

    @property
    def base(self) -> str:
        return self.url.split("?", 1)[0].rstrip("/")

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def apps(self) -> list[int]:
        return children(self.process.pid)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_serve(
    workspace: Path, *args: str, env: dict[str, str] | None = None, key: bool = True
) -> Served:
    child_env = dict(os.environ)
    if key:
        child_env[TEST_KEY_ENV] = TEST_KEY
    else:
        child_env.pop(TEST_KEY_ENV, None)
    child_env.update(env or {})
    process = subprocess.Popen(
        [sys.executable, "-m", "reasonix_tui.cli", "serve", "--port", "0", *args],
        cwd=workspace,
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"http://\S+", line)
    if match is None:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"no URL printed: {line!r} {err!r}")
    return Served(process, match.group(0))
