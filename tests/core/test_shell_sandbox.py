"""The bubblewrap command line, the probe, the clean environment, and real
sandboxed runs (marked ``sandbox``; skipped only when bwrap is not installed)."""

from __future__ import annotations

import os
import random
import shutil
import stat
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc
import pytest

from reasonix_core.tool import shell_sandbox
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.shell_sandbox import (
    INSTALL_HINT,
    SandboxUnavailable,
    build_command,
    bwrap_available,
    sanitized_env,
)
from tests.core.tool_helpers import run_bash, sandbox_ctx

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


def _pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


# -- command line (no bwrap needed) -----------------------------------------


def test_off_is_plain_bash(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    policy = SandboxPolicy(workspace=ws, temp_dir=tmp, bash="off")
    assert build_command(policy, "echo hi") == ["/bin/bash", "-c", "echo hi"]


def test_enforce_argv_layout(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: "/usr/bin/bwrap")
    ws, tmp = dirs
    extra = tmp_path / "extra"
    extra.mkdir()
    missing = tmp_path / "missing"
    hidden_dir = ws / "secrets"
    hidden_dir.mkdir()
    hidden_file = ws / ".env"
    hidden_file.write_text("KEY=1")
    policy = SandboxPolicy(
        workspace=ws,
        temp_dir=tmp,
        allow_write=(extra, missing),
        forbid_read=(hidden_dir, hidden_file, tmp_path / "not-there"),
    )
    argv = build_command(policy, "make test")

    assert argv[0] == "/usr/bin/bwrap"
    assert argv[1:4] == ["--ro-bind", "/", "/"]
    assert _pairs(argv, "--dev")[0][0] == "/dev"
    assert _pairs(argv, "--proc")[0][0] == "/proc"
    binds = [src for src, dst in _pairs(argv, "--bind") if src == dst]
    assert set(binds) == {str(ws.resolve()), str(tmp.resolve()), str(extra.resolve())}
    # /tmp is a fresh tmpfs, mounted before the write roots are re-bound into it.
    assert argv.index("/tmp") < argv.index("--bind")
    # Masks come after the writable binds so they win inside the workspace.
    masks = [a for i, a in enumerate(argv) if i and argv[i - 1] == "--tmpfs"]
    assert str(hidden_dir.resolve()) in masks
    assert ("/dev/null", str(hidden_file.resolve())) in _pairs(argv, "--ro-bind")
    assert argv.index(str(hidden_dir.resolve())) > max(
        i for i, a in enumerate(argv) if a == "--bind"
    )
    assert str(tmp_path / "not-there") not in argv
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--chdir") + 1] == str(ws.resolve())
    assert argv[-2:] == ["-c", "make test"]
    assert "/bin/bash" in argv

    with_net = build_command(SandboxPolicy(workspace=ws, temp_dir=tmp, network=True), "true")
    assert "--unshare-net" not in with_net


def test_enforce_keeps_git_hooks_and_config_read_only(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: "/usr/bin/bwrap")
    ws, tmp = dirs
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    argv = build_command(SandboxPolicy(workspace=ws, temp_dir=tmp), "true")
    ro = _pairs(argv, "--ro-bind")
    git = ws.resolve() / ".git"
    assert (str(git / "hooks"), str(git / "hooks")) in ro
    assert (str(git / "config"), str(git / "config")) in ro


def test_enforce_without_bwrap_raises_install_hint(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: None)
    ws, tmp = dirs
    with pytest.raises(SandboxUnavailable) as info:
        build_command(SandboxPolicy(workspace=ws, temp_dir=tmp), "true")
    message = str(info.value)
    assert "apt-get install bubblewrap" in message
    assert "dnf install bubblewrap" in message
    assert '`[sandbox] bash = "off"`' in message
    assert message.startswith(INSTALL_HINT)


def test_probe_rejects_bwrap_that_cannot_build_a_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(shell_sandbox, "SYSTEM_BWRAP_DIRS", (str(tmp_path),))
    assert bwrap_available() is None
    assert bwrap_available() is None  # cached
    assert shell_sandbox._probe.cache_info().misses == 1
    ws = tmp_path / "ws"
    ws.mkdir()
    with pytest.raises(SandboxUnavailable, match="No permissions to create new namespace"):
        build_command(SandboxPolicy(workspace=ws, temp_dir=tmp_path), "true")


def test_probe_reports_missing_bwrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    monkeypatch.setattr(shell_sandbox, "SYSTEM_BWRAP_DIRS", (str(tmp_path / "empty"),))
    assert bwrap_available() is None
    message = shell_sandbox._unavailable_message()
    assert "not found" in message
    assert "PATH is not searched" in message


def test_sanitized_env_drops_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
    monkeypatch.setenv("openai_api_key", "sk-lower")
    monkeypatch.setenv("MY_PROVIDER_SECRET", "hush")
    monkeypatch.setenv("KEEP_ME", "yes")
    monkeypatch.setenv("TERM", "xterm-256color")
    env = sanitized_env({"MY_PROVIDER_SECRET"})
    assert "DEEPSEEK_API_KEY" not in env
    assert "openai_api_key" not in env
    assert "MY_PROVIDER_SECRET" not in env
    assert env["KEEP_ME"] == "yes"
    assert env["TERM"] == "dumb"
    assert env["PAGER"] == "cat"
    assert env["GIT_PAGER"] == "cat"
    assert env["NO_COLOR"] == "1"
    assert os.environ["DEEPSEEK_API_KEY"] == "sk-deepseek"  # the process env is untouched


# -- real sandboxed runs -----------------------------------------------------


def _live_pids(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def _wait_gone(marker: str, seconds: float = 60.0) -> list[int]:
    pids = _live_pids(marker)
    for _ in range(int(seconds / 0.05)):
        if not pids:
            break
        await anyio.sleep(0.05)
        pids = _live_pids(marker)
    return pids


@pytest.mark.sandbox
@needs_bwrap
async def test_sandbox_write_inside_workspace_works(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    result = await run_bash(
        sandbox_ctx(ws, tmp), 'echo inside > made.txt && echo tmp > "$TMPDIR/t.txt"'
    )
    assert result.meta["sandboxed"] is True
    assert not result.is_error, result.text
    assert (ws / "made.txt").read_text() == "inside\n"
    assert (tmp / "t.txt").read_text() == "tmp\n"


@pytest.mark.sandbox
@needs_bwrap
async def test_sandbox_write_outside_workspace_fails(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    ws, tmp = dirs
    sibling = tmp_path / "outside"
    sibling.mkdir()
    ctx = sandbox_ctx(ws, tmp)
    result = await run_bash(ctx, f"echo escaped > {sibling}/f.txt")
    assert result.is_error
    assert not (sibling / "f.txt").exists()

    # Outside /tmp the real filesystem is visible but read-only.
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(Path.home())
    outside = Path(tempfile.mkdtemp(prefix="reasonix-sandbox-test-", dir=base))
    try:
        result = await run_bash(ctx, f"echo escaped > {outside}/f.txt")
        assert result.is_error
        assert "Read-only file system" in result.text
        assert not (outside / "f.txt").exists()
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@pytest.mark.sandbox
@needs_bwrap
async def test_sandbox_git_hooks_stay_read_only(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    result = await run_bash(sandbox_ctx(ws, tmp), "echo evil > .git/hooks/pre-commit")
    assert result.is_error
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    result = await run_bash(sandbox_ctx(ws, tmp), "echo ok > .git/HEAD")
    assert not result.is_error, result.text


@pytest.mark.sandbox
@needs_bwrap
async def test_sandbox_forbid_read_hides_file_and_dir(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    (ws / ".env").write_text("TOKEN=super-secret-value\n")
    (ws / "keys").mkdir()
    (ws / "keys" / "id").write_text("private-key-material\n")
    ctx = sandbox_ctx(ws, tmp, forbid_read=(ws / ".env", ws / "keys"))
    result = await run_bash(ctx, "cat .env; ls keys; cat keys/id; echo done")
    assert "super-secret-value" not in result.text
    assert "private-key-material" not in result.text
    assert "done" in result.text
    # The host files are untouched.
    assert (ws / ".env").read_text() == "TOKEN=super-secret-value\n"


async def _probe_network(ctx: ToolContext) -> ToolResult:
    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.send(b"pong\n")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        result = await run_bash(ctx, f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -n1 <&3")
        tg.cancel_scope.cancel()
    return result


@pytest.mark.sandbox
@needs_bwrap
async def test_sandbox_network_blocked_unless_enabled(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    blocked = await _probe_network(sandbox_ctx(ws, tmp, network=False))
    assert blocked.is_error
    assert "pong" not in blocked.text
    allowed = await _probe_network(sandbox_ctx(ws, tmp, network=True))
    assert not allowed.is_error, allowed.text
    assert "pong" in allowed.text


@pytest.mark.sandbox
@needs_bwrap
async def test_sandbox_timeout_kills_every_process(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    marker = f"30.{random.randrange(10**6):06d}"
    started = time.monotonic()
    result = await run_bash(sandbox_ctx(ws, tmp), f"sleep {marker} & wait", timeout_seconds=1)
    assert time.monotonic() - started < 8
    assert result.meta["timed_out"] is True
    assert result.outcome == "error"
    assert await _wait_gone(marker) == []


@pytest.mark.sandbox
@needs_bwrap
async def test_cancelled_before_the_spawn_runs_nothing_and_leaks_no_descriptor(
    dirs: tuple[Path, Path],
) -> None:
    # The seccomp filter travels in a descriptor made while the command is prepared
    # (in a worker thread); a cancellation arriving meanwhile must still close it.
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    await run_bash(ctx, "true")  # warm: the probe and the guard exist
    before = set(os.listdir("/proc/self/fd"))
    with anyio.CancelScope() as scope:
        scope.cancel()
        await run_bash(ctx, "echo ran > ran.txt")
    assert scope.cancelled_caught
    assert not (ws / "ran.txt").exists()
    assert set(os.listdir("/proc/self/fd")) <= before
