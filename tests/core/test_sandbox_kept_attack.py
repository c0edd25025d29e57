"""An attacker's review of the sandbox kept per session (tool/kept_sandbox.py,
sandbox_zygote.py): one command trying to change what a later one gets, to reach the
zygote, or to reach the host. Each test drives the real bash tool through a real
kept bubblewrap, as ``test_sandbox_kept.py`` does; nothing bounds a wall time.

What every command inherits from the zygote but a command can change from outside
it (same uid, no capability, no ptrace needed): ``prlimit --pid 1``, ``renice``,
``taskset``, ``chrt``, ``ionice`` on pid 1, and as root its ``/proc/1/oom_score_adj``.
Before the fix each of these stayed for every later command of the session."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reasonix_core.tool import shell_sandbox
from reasonix_core.tool.sandbox_keeper import SandboxKeeper
from tests.core.tool_helpers import all_gone, kept_pids, kept_sandbox_ctx, run_bash, sandbox_ctx

needs_bwrap = pytest.mark.skipif(
    shell_sandbox.bwrap_available() is None, reason="bwrap is not usable here"
)
pytestmark = [pytest.mark.sandbox, needs_bwrap]

PYTHON = os.path.realpath(sys.executable)


@pytest.fixture
async def keeper() -> AsyncIterator[SandboxKeeper]:
    keeper = SandboxKeeper()
    try:
        yield keeper
    finally:
        pids = kept_pids(keeper)
        await keeper.aclose()
        assert await all_gone(pids), f"left running after the keeper closed: {pids}"


def _have(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


# What a later command sees of what it inherited (each line names one thing).
INHERITED = (
    "prlimit --pid $$ --noheadings --output RESOURCE,SOFT,HARD; "
    "echo nice=$(nice); taskset -p $$; chrt -p $$; ionice -p $$; "
    "echo oom=$(cat /proc/self/oom_score_adj); echo filter=$(cat /proc/self/coredump_filter)"
)


@pytest.mark.parametrize(
    "attack",
    [
        "prlimit --pid 1 --fsize=4096:4096",
        "prlimit --pid 1 --nofile=64:64",
        "prlimit --pid 1 --nproc=50:50",
        "prlimit --pid 1 --as=200000000:200000000",
        "prlimit --pid 1 --stack=65536",
        "renice -n 19 -p 1",
        "taskset -p -c 0 1",
        "chrt -i -p 0 1",
        "ionice -c 3 -p 1",
        "echo 1000 > /proc/1/oom_score_adj",
        "echo 0 > /proc/1/coredump_filter",
    ],
    ids=[
        "fsize",
        "nofile",
        "nproc",
        "as",
        "stack",
        "renice",
        "taskset",
        "chrt-idle",
        "ionice-idle",
        "oom-score",
        "coredump-filter",
    ],
)
async def test_what_a_command_changes_in_the_zygote_never_reaches_the_next_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path], attack: str
) -> None:
    """The next command inherits exactly what a fresh bubblewrap's would: the kept
    sandbox that was changed is retired and a new one built."""
    _have("prlimit", "taskset", "chrt", "ionice", "renice")
    ctx = kept_sandbox_ctx(keeper, *dirs)
    before = await run_bash(ctx, INHERITED)
    await run_bash(ctx, f"{attack}; echo attacked")
    after = await run_bash(ctx, INHERITED)
    fresh = await run_bash(sandbox_ctx(*dirs), INHERITED)
    assert after.text == before.text, (before.text, after.text)
    assert _no_pids(after.text) == _no_pids(fresh.text), (after.text, fresh.text)


def _no_pids(text: str) -> str:
    """``taskset -p``/``chrt -p`` name the pid they were asked about."""
    return re.sub(r"pid \d+'s", "pid N's", text)


async def test_a_file_size_limit_set_on_pid_1_does_not_break_the_next_command(
    keeper: SandboxKeeper, dirs: tuple[Path, Path]
) -> None:
    """The consequence, not just the number: with RLIMIT_FSIZE lowered on the zygote a
    later command's write of 8 KiB died of SIGXFSZ."""
    _have("prlimit")
    ctx = kept_sandbox_ctx(keeper, *dirs)
    await run_bash(ctx, "true")
    await run_bash(ctx, "prlimit --pid 1 --fsize=4096:4096")
    result = await run_bash(ctx, "head -c 8192 /dev/zero > big && wc -c < big")
    assert "8192" in result.text, result.text
    assert (dirs[0] / "big").stat().st_size == 8192
