"""What every sandboxed command must see afresh, tried between two calls of one session.

A sandbox kept alive across commands (a per-session bubblewrap "zygote", docs/
SECURITY.md "A sandbox kept per session") would save bubblewrap's namespace set-up per
command, but each of these is an attack a model (or anything writing the host) could
try on it; with a fresh bubblewrap per command, as today, every one holds. Any reuse
of a sandbox must keep these passing unchanged:

- a masked secret replaced by an atomic rename (an editor's save; it detaches a bind
  mount in any other mount namespace) stays masked, twice over (inode numbers reused);
- a ``forbid_read`` file that did not exist at the first command is masked at the next;
- a writable root replaced by another folder is bound anew (the old one is not written);
- a daemon a command started (``setsid``, backgrounded) is dead when the call returns
  and never seen by the next command;
- ``/tmp`` holds nothing a previous command left there;
- the environment follows ``os.environ`` per command, secrets removed.

Every test runs on both paths (``sandbox_path``): a fresh bubblewrap per command, and
the session's kept sandbox (tool/kept_sandbox.py), whose bubblewrap and zygote must be
gone when the keeper closes.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from reasonix_core.tool import shell_sandbox
from reasonix_core.tool.sandbox_keeper import SandboxKeeper
from tests.core.tool_helpers import all_gone, kept_pids, kept_sandbox_ctx, run_bash, sandbox_ctx

needs_bwrap = pytest.mark.skipif(
    shell_sandbox.bwrap_available() is None, reason="bwrap is not usable here"
)
pytestmark = [pytest.mark.sandbox, needs_bwrap]


@pytest.fixture(params=["kept", "fresh"], autouse=True)
async def sandbox_path(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[str]:
    """Each test on both paths: ``sandbox_ctx`` gives the kept sandbox's context for
    "kept" (the tests themselves are the same)."""
    if request.param == "fresh":
        yield "fresh"
        return
    keeper = SandboxKeeper()
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "sandbox_ctx", functools.partial(kept_sandbox_ctx, keeper))
    pids: list[int] = []
    try:
        yield "kept"
        pids = kept_pids(keeper)
    finally:
        await keeper.aclose()
    assert keeper.disabled is None and keeper.built >= 1, "the kept sandbox was not used"
    assert await all_gone(pids), f"left running after the keeper closed: {pids}"


def _replace_atomically(path: Path, text: str) -> None:
    """Write ``text`` beside ``path`` and rename it over ``path``, as editors save."""
    tmp = path.with_name(path.name + f".{uuid.uuid4().hex[:6]}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def test_a_masked_secret_replaced_by_rename_stays_masked(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    secret = ws / ".env"
    secret.write_text("TOKEN=first\n")
    ctx = sandbox_ctx(ws, tmp, forbid_read=(Path(".env"),))
    first = await run_bash(ctx, "cat .env; echo end")
    assert "first" not in first.text and "end" in first.text
    for round_ in ("second", "third"):  # twice: the second may reuse the first's inode
        _replace_atomically(secret, f"TOKEN={round_}\n")
        result = await run_bash(ctx, "cat .env; echo end")
        assert round_ not in result.text, result.text
        assert "end" in result.text


async def test_a_forbid_read_file_created_later_is_masked(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp, forbid_read=(Path("later.key"), Path("later-dir")))
    assert "end" in (await run_bash(ctx, "ls; echo end")).text
    (ws / "later.key").write_text("file-secret\n")
    (ws / "later-dir").mkdir()
    (ws / "later-dir" / "k").write_text("dir-secret\n")
    result = await run_bash(ctx, "cat later.key later-dir/k 2>&1; echo end")
    assert "file-secret" not in result.text and "dir-secret" not in result.text
    assert "end" in result.text


async def test_a_writable_root_replaced_by_another_folder_is_bound_anew(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    ws, tmp = dirs
    extra = tmp_path / "extra"
    extra.mkdir()
    ctx = sandbox_ctx(ws, tmp, allow_write=(extra,))
    await run_bash(ctx, f"echo one > {extra}/one")
    assert (extra / "one").read_text() == "one\n"
    moved = tmp_path / "extra-old"
    extra.rename(moved)
    extra.mkdir()
    await run_bash(ctx, f"echo two > {extra}/two")
    assert (extra / "two").read_text() == "two\n"
    assert not (moved / "two").exists()


async def _gone(pattern: str) -> bool:
    """Poll (30 s at most) until no host process has ``pattern`` in its command line."""
    with anyio.move_on_after(30):
        while True:
            alive = False
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    cmdline = Path(entry.path, "cmdline").read_bytes()
                except OSError:
                    continue
                if pattern.encode() in cmdline:
                    alive = True
                    break
            if not alive:
                return True
            await anyio.sleep(0.05)
    return False


async def test_a_daemon_from_one_command_is_dead_before_the_next(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    tag = f"reasonix-daemon-{uuid.uuid4().hex[:8]}"
    started = await run_bash(
        ctx, f"(setsid sh -c 'exec -a {tag} sleep 1000' </dev/null >/dev/null 2>&1 &); echo started"
    )
    assert "started" in started.text
    assert await _gone(tag), f"{tag} outlived its command"
    seen = await run_bash(ctx, f"ps -eo args | grep -c '^{tag}' || true")
    assert seen.text.strip().splitlines()[0] == "0", seen.text


async def test_tmp_is_empty_for_every_command(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    await run_bash(ctx, "echo planted > /tmp/planted; mkfifo /tmp/fifo")
    # (/tmp may hold the way to the session temp dir, bound back in: only what the
    # first command made matters)
    result = await run_bash(ctx, "ls -A /tmp; echo end")
    assert "planted" not in result.text and "fifo" not in result.text, result.text
    assert "end" in result.text


async def test_the_environment_is_taken_afresh_per_command(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    await run_bash(ctx, "true")
    monkeypatch.setenv("LATE_API_KEY", "sk-late-secret")
    monkeypatch.setenv("REASONIX_LATE_PLAIN", "plain-value")
    result = await run_bash(ctx, 'echo "key=${LATE_API_KEY-unset} plain=$REASONIX_LATE_PLAIN"')
    assert "key=unset" in result.text and "plain=plain-value" in result.text
    assert "sk-late-secret" not in result.text


async def test_a_spawning_loop_left_behind_is_dead_before_the_next(dirs: tuple[Path, Path]) -> None:
    """A daemon that keeps forking (the race a kill-by-list would lose) dies too."""
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    tag = f"reasonix-spawner-{uuid.uuid4().hex[:8]}"
    loop = f"while :; do (exec -a {tag} sleep 1000) & sleep 0.01; done"
    await run_bash(ctx, f"(setsid sh -c '{loop}' </dev/null >/dev/null 2>&1 &); sleep 0.2; echo ok")
    assert await _gone(tag), f"{tag} outlived its command"


async def test_a_command_that_kills_all_it_sees_leaves_the_next_confined(
    dirs: tuple[Path, Path],
) -> None:
    """``kill -9 -1`` reaches whatever shares the command's PID namespace (a kept
    sandbox's own process included): the next command still runs, and still confined."""
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    await run_bash(ctx, "kill -9 -1; echo after")
    # outside /tmp (the sandbox's /tmp is its own), so the sandbox sees it read-only
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    outside = base / f"reasonix-killall-{uuid.uuid4().hex[:10]}"
    outside.mkdir()
    try:
        result = await run_bash(ctx, f"ls -d {outside} && echo escaped > {outside}/f; echo ran")
        assert "ran" in result.text and str(outside) in result.text, result.text
        assert not (outside / "f").exists()
    finally:
        shutil.rmtree(outside)


async def test_a_command_keeps_no_capability_even_when_reasonix_runs_as_root(
    dirs: tuple[Path, Path],
) -> None:
    """Run as root (containers, CI), bubblewrap keeps every capability for the command
    unless told otherwise: it could `umount` a mask or remount `/` read-write and write
    the host. Unprivileged, the same checks hold trivially."""
    ws, tmp = dirs
    (ws / ".env").write_text("TOKEN=root-secret\n")
    ctx = sandbox_ctx(ws, tmp, forbid_read=(Path(".env"),))
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    outside = base / f"reasonix-caps-{uuid.uuid4().hex[:10]}"
    outside.mkdir()
    try:
        result = await run_bash(
            ctx,
            "grep CapEff /proc/self/status; umount .env 2>/dev/null; cat .env 2>/dev/null; "
            f"mount -o remount,rw / 2>/dev/null; echo x > {outside}/f 2>/dev/null; echo end",
        )
        assert "CapEff:\t0000000000000000" in result.text, result.text
        assert "root-secret" not in result.text and "end" in result.text
        assert not (outside / "f").exists()
    finally:
        shutil.rmtree(outside)
