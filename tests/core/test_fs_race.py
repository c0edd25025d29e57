"""The file tools against an attacker who swaps path components while a tool
runs, malformed paths, and temp files left by a killed run (issue 10, holes 1,
7 and 8).

The racing tests use ``renameat2(RENAME_EXCHANGE)`` to swap a real directory
and a symlink to an outside folder atomically, in a tight loop on a second
thread, while the tools run on the event loop. Tools are called through
``execute`` directly, so an exception escaping a tool fails the test instead
of being turned into a result by the registry.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import functools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.base import ToolResult
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.sandbox import SandboxPolicy
from tests.core.tool_helpers import FILE_TOOLS

RENAME_EXCHANGE = 2
AT_FDCWD = -100
RACE_ROUNDS = 1000

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux-only")


def _renameat2() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:  # glibc < 2.28: the raw syscall (x86_64 number)
        syscall = libc.syscall

        def fn(olddirfd: int, old: bytes, newdirfd: int, new: bytes, flags: int) -> int:
            return int(syscall(316, olddirfd, old, newdirfd, new, flags))

    return fn


class Flipper:
    """Swaps ``a`` and ``b`` with RENAME_EXCHANGE as fast as it can until stopped."""

    def __init__(self, a: Path, b: Path) -> None:
        self._a, self._b = os.fsencode(a), os.fsencode(b)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.swaps = 0
        self.error: int | None = None

    def _run(self) -> None:
        rename = _renameat2()
        while not self._stop.is_set():
            if rename(AT_FDCWD, self._a, AT_FDCWD, self._b, RENAME_EXCHANGE) != 0:
                self.error = ctypes.get_errno()
                return
            self.swaps += 1

    def __enter__(self) -> Flipper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Arena:
    ws: Path
    tmp: Path
    outside: Path
    ctx: ToolContext
    tools: dict[str, Any]

    async def run(self, name: str, **args: Any) -> ToolResult:
        # execute, not registry.call: an escaping exception must fail the test.
        result = await self.tools[name].execute(args, self.ctx)
        assert isinstance(result, ToolResult)
        return result

    def hidden_and_plain(self, hidden: dict[str, str], plain: dict[str, str]) -> tuple[Path, Path]:
        """``outside/secrets`` (forbid_read from now on) and ``ws/sub``, each holding
        its ``{name: text}`` files; returns both folders."""
        secrets_dir = self.outside / "secrets"
        sub = self.ws / "sub"
        for folder, files in ((secrets_dir, hidden), (sub, plain)):
            folder.mkdir()
            for name, text in files.items():
                (folder / name).write_text(text)
        self.ctx.env = dataclasses.replace(
            self.ctx.env,
            sandbox=SandboxPolicy(workspace=self.ws, temp_dir=self.tmp, forbid_read=(secrets_dir,)),
        )
        return secrets_dir, sub

    def outside_snapshot(self) -> dict[str, bytes]:
        """Every entry outside: files with their bytes, directories and links marked."""
        snap: dict[str, bytes] = {}
        for p in sorted(self.outside.rglob("*")):
            rel = str(p.relative_to(self.outside))
            if p.is_symlink():
                snap[rel] = b"<link>"
            elif p.is_dir():
                snap[rel] = b"<dir>"
            else:
                snap[rel] = p.read_bytes()
        return snap


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    ws, tmp, outside = tmp_path / "ws", tmp_path / "session-tmp", tmp_path / "outside"
    for d in (ws, tmp, outside):
        d.mkdir()
    ctx = ToolContext(env=SessionEnv(workspace=ws, temp_dir=tmp))
    yield Arena(ws, tmp, outside, ctx, {t.name: t for t in builtin_tools(FILE_TOOLS)})


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _ok_or_error(result: ToolResult, name: str) -> bool:
    """True on success; an error result must be an ordinary one, not a crash report."""
    if result.is_error:
        assert not re.match(rf"{name} failed: \w+", result.text), result.text
        return False
    return True


# -- racing flipper ----------------------------------------------------------------------------


async def test_swapped_directory_never_redirects_write_or_edit(arena: Arena) -> None:
    """Hole 1: `sub` flips between a directory and a symlink to an outside folder
    while write_file (existing parents and new ones), edit_file, multi_edit and
    move_file work under it."""
    sub = arena.ws / "sub"
    sub.mkdir()
    (sub / "y").write_text("same text\n")
    # The outside twin holds the same text, so a redirected edit would pass the
    # observation check and overwrite it.
    (arena.outside / "y").write_text("same text\n")
    (arena.outside / "m").write_text("outside m\n")  # bait for a redirected move
    (arena.ws / "link").symlink_to(arena.outside, target_is_directory=True)
    before = arena.outside_snapshot()
    assert _ok_or_error(await arena.run("read_file", path="sub/y"), "read_file")

    attempted = succeeded = 0
    state = ("same text", "other text")
    fds_before = _open_fds()
    with Flipper(sub, arena.ws / "link") as flipper:
        for i in range(RACE_ROUNDS):
            attempted += 1
            r = await arena.run("write_file", path="sub/x", content=f"round {i}\n")
            succeeded += _ok_or_error(r, "write_file")
            attempted += 1
            r = await arena.run("edit_file", path="sub/y", old_string=state[0], new_string=state[1])
            if _ok_or_error(r, "edit_file"):
                succeeded += 1
                state = (state[1], state[0])
            elif "FS_NOT_OBSERVED" in r.text or "FS_STALE_VERSION" in r.text:
                _ok_or_error(await arena.run("read_file", path="sub/y"), "read_file")
            attempted += 1
            edits = [{"old_string": state[0], "new_string": state[1]}]
            r = await arena.run("multi_edit", path="sub/y", edits=edits)
            if _ok_or_error(r, "multi_edit"):
                succeeded += 1
                state = (state[1], state[0])
            attempted += 1
            r = await arena.run("write_file", path=f"sub/new{i % 7}/deep/z", content="z\n")
            succeeded += _ok_or_error(r, "write_file")
            attempted += 1
            src, dst = ("sub/x", "sub/m") if i % 2 == 0 else ("sub/m", "sub/x")
            succeeded += _ok_or_error(
                await arena.run("move_file", source_path=src, destination_path=dst), "move_file"
            )
    assert flipper.error is None, os.strerror(flipper.error or 0)
    assert _open_fds() == fds_before, "descriptors leaked on some path"
    after = arena.outside_snapshot()
    written_outside = sum(
        len(v) for k, v in after.items() if before.get(k) != v and not v.startswith(b"<")
    )
    created_outside = [k for k, v in after.items() if k not in before]
    print(
        f"race: {RACE_ROUNDS} rounds, {flipper.swaps} swaps, {attempted} writes attempted, "
        f"{succeeded} succeeded, {written_outside} bytes written outside, "
        f"{len(created_outside)} entries created outside"
    )
    assert after == before, "a write landed outside the workspace"
    assert written_outside == 0
    assert flipper.swaps > RACE_ROUNDS  # the race really ran
    # Whatever landed, landed in the real directory (wherever its name is now).
    real = sub if sub.is_dir() and not sub.is_symlink() else arena.ws / "link"
    assert not list(real.glob(".rx-*.tmp")), "a temp file was left behind"


@pytest.mark.parametrize("swapped", ["directory", "file"])
async def test_swap_never_reveals_forbid_read(arena: Arena, swapped: str) -> None:
    """Hole 1 for reads: `sub` flips between a directory and a link to a hidden
    folder, or the file `sub/x` itself flips with a link to a hidden file."""
    secrets_dir, sub = arena.hidden_and_plain({"x": "TOPSECRET\n"}, {"x": "harmless\n"})
    if swapped == "directory":
        pair = (sub, arena.ws / "link")
        pair[1].symlink_to(secrets_dir, target_is_directory=True)
    else:
        pair = (sub / "x", sub / "link")
        pair[1].symlink_to(secrets_dir / "x")
    reads = shown = 0
    fds_before = _open_fds()
    with Flipper(*pair) as flipper:
        for _ in range(RACE_ROUNDS * 2):
            reads += 1
            r = await arena.run("read_file", path="sub/x")
            assert "TOPSECRET" not in r.text, "read_file revealed a forbid_read file"
            shown += _ok_or_error(r, "read_file")
    print(
        f"read race ({swapped}): {reads} reads, {flipper.swaps} swaps, {shown} shown, "
        "0 secrets revealed"
    )
    assert flipper.error is None
    assert _open_fds() == fds_before, "descriptors leaked on some path"
    assert flipper.swaps > RACE_ROUNDS


async def test_swapped_directory_never_lets_grep_read_forbid_read(arena: Arena) -> None:
    """The same swap under grep's walk: a listed name opened after the swap must not
    be searched if what was opened is hidden."""
    secrets_dir, sub = arena.hidden_and_plain({"x.txt": "TOPSECRET\n"}, {"x.txt": "harmless\n"})
    (arena.ws / "link").symlink_to(secrets_dir, target_is_directory=True)
    searches = 0
    with Flipper(sub, arena.ws / "link") as flipper:
        for _ in range(RACE_ROUNDS // 2):
            searches += 1
            r = await arena.run("grep", pattern="S.CRET|harmless", path=".")
            assert "TOPSECRET" not in r.text, "grep revealed a forbid_read file"
            _ok_or_error(r, "grep")
    print(f"grep race: {searches} searches, {flipper.swaps} swaps, 0 secrets revealed")
    assert flipper.error is None


async def test_swapped_directory_never_lists_forbid_read_names(arena: Arena) -> None:
    """The same swap under ls and glob: the names inside a hidden folder stay hidden."""
    secrets_dir, sub = arena.hidden_and_plain({"SECRETNAME.txt": "k\n"}, {"plain.txt": "p\n"})
    (arena.ws / "link").symlink_to(secrets_dir, target_is_directory=True)
    listings = 0
    with Flipper(sub, arena.ws / "link") as flipper:
        for _ in range(RACE_ROUNDS // 2):
            for name, args in (
                ("ls", {"path": "sub"}),
                ("ls", {"path": ".", "recursive": True}),
                ("glob", {"pattern": "**/*.txt"}),
            ):
                listings += 1
                r = await arena.run(name, **args)
                assert "SECRETNAME" not in r.text, f"{name} listed a forbid_read folder"
                _ok_or_error(r, name)
    print(f"listing race: {listings} listings, {flipper.swaps} swaps, 0 hidden names shown")
    assert flipper.error is None


# -- malformed paths ---------------------------------------------------------------------------


MALFORMED = [
    ("nul", "a\x00b"),
    ("lone surrogate", "a\udc80b"),
    ("high surrogate", "x\ud800y"),
    ("blank", "   "),
    ("long component", "n" * 300 + "/f.txt"),
    ("long path", "d/" * 3000 + "f.txt"),
    ("symlink loop", "loop/f.txt"),
    ("self loop final", "loop"),
    ("file as directory", "plain.txt/f.txt"),
]

TOOL_ARGS: dict[str, Any] = {
    "read_file": lambda p: {"path": p},
    "write_file": lambda p: {"path": p, "content": "x"},
    "edit_file": lambda p: {"path": p, "old_string": "a", "new_string": "b"},
    "multi_edit": lambda p: {"path": p, "edits": [{"old_string": "a", "new_string": "b"}]},
    "move_file": lambda p: {"source_path": p, "destination_path": "moved.txt"},
    "move_file_dst": lambda p: {"source_path": "plain.txt", "destination_path": p},
    "ls": lambda p: {"path": p},
    "glob": lambda p: {"pattern": "*", "path": p},
}


@pytest.mark.parametrize("tool", sorted(TOOL_ARGS))
async def test_malformed_paths_are_error_results(arena: Arena, tool: str) -> None:
    """Hole 7: each malformed path is an error result naming the path (or, for
    text that is not valid Unicode, the argument), never a crash."""
    (arena.ws / "loop").symlink_to("loop")
    (arena.ws / "plain.txt").write_text("a\n")
    registry = ToolRegistry(builtin_tools(FILE_TOOLS))
    name = tool.removesuffix("_dst")
    handled = 0
    for kind, path in MALFORMED:
        if tool == "move_file" and kind == "self loop final":
            continue  # moving a symlink itself (not followed) is an ordinary move
        args = TOOL_ARGS[tool](path)
        # Through the registry, as the loop calls it; its catch-all "<tool> failed:
        # <Exception>" result is the crash being asserted against.
        r = await registry.call(name, json.dumps(args), arena.ctx)
        assert r.is_error, f"{kind}: {r.text}"
        assert not re.match(rf"{name} failed: \w+", r.text), f"{kind}: {r.text}"
        named = path[:20] in r.text or repr(path)[1:-1][:20] in r.text
        field = next(k for k, v in args.items() if v == path)
        assert named or f"invalid arguments: {field}" in r.text, (
            f"{kind}: the error does not name the path: {r.text}"
        )
        handled += 1
    assert handled == len(MALFORMED) - (tool == "move_file")
    assert (arena.ws / "plain.txt").read_text() == "a\n"
    assert sorted(os.listdir(arena.ws)) == ["loop", "plain.txt"]  # nothing was created


@pytest.mark.parametrize("path", ["a\x00b", "a\udc80b", "x\ud800y", "", "  "])
async def test_malformed_paths_never_raise_out_of_a_tool(arena: Arena, path: str) -> None:
    for name in ("read_file", "write_file", "edit_file", "move_file", "ls", "glob"):
        args = TOOL_ARGS[name](path)
        try:
            r = await arena.run(name, **args)
        except Exception as exc:  # only argument validation may raise (the registry's job)
            assert type(exc).__name__ == "ToolArgumentError", repr(exc)
        else:
            assert r.is_error and r.text.startswith(("invalid path", "path denied")), r.text


async def test_empty_path_is_an_argument_error(arena: Arena) -> None:
    registry = ToolRegistry(builtin_tools(FILE_TOOLS))
    for name in ("read_file", "write_file", "edit_file"):
        args = TOOL_ARGS[name]("")
        r = await registry.call(name, json.dumps(args), arena.ctx)
        assert r.is_error and r.text.startswith(f"{name}: invalid arguments"), r.text


# -- symlinks that stay inside keep working --------------------------------------------------


async def test_symlinks_inside_the_workspace_still_work(arena: Arena) -> None:
    real_dir = arena.ws / "pkg" / "real"
    real_dir.mkdir(parents=True)
    (real_dir / "m.py").write_text("x = 1\n")
    (arena.ws / "alias-dir").symlink_to("pkg/real", target_is_directory=True)
    (arena.ws / "alias.py").symlink_to(real_dir / "m.py")  # absolute target
    (arena.ws / "pkg" / "up").symlink_to("..", target_is_directory=True)
    # A link from the workspace into the session temp dir (another write root).
    (arena.ws / "scratch").symlink_to(arena.tmp, target_is_directory=True)

    r = await arena.run("read_file", path="alias-dir/m.py")
    assert r.text == "     1\tx = 1", r.text
    r = await arena.run("edit_file", path="alias.py", old_string="x = 1", new_string="x = 2")
    assert not r.is_error, r.text
    assert (arena.ws / "alias.py").is_symlink()
    assert (real_dir / "m.py").read_text() == "x = 2\n"
    r = await arena.run("write_file", path="alias-dir/new/n.py", content="n\n")
    assert not r.is_error, r.text
    assert r.text.startswith("created pkg/real/new/n.py"), r.text
    assert (real_dir / "new" / "n.py").read_text() == "n\n"
    r = await arena.run("write_file", path="pkg/up/pkg/up/top.txt", content="t\n")
    assert not r.is_error, r.text
    assert (arena.ws / "top.txt").read_text() == "t\n"
    r = await arena.run("write_file", path="scratch/s.txt", content="s\n")
    assert not r.is_error, r.text
    assert (arena.tmp / "s.txt").read_text() == "s\n"
    # A dangling link inside the workspace creates its target, as before.
    (arena.ws / "later").symlink_to("pkg/later.txt")
    r = await arena.run("write_file", path="later", content="l\n")
    assert not r.is_error, r.text
    assert (arena.ws / "pkg" / "later.txt").read_text() == "l\n"


async def test_symlinks_pointing_outside_are_refused_for_write(arena: Arena) -> None:
    (arena.outside / "t.txt").write_text("outside\n")
    (arena.ws / "out-dir").symlink_to(arena.outside, target_is_directory=True)
    (arena.ws / "out-file").symlink_to(arena.outside / "t.txt")
    (arena.ws / "out-rel").symlink_to("../outside/new.txt")
    (arena.ws / "pkg").mkdir()
    (arena.ws / "pkg" / "hop").symlink_to("../out-dir", target_is_directory=True)
    for path in ("out-dir/x.txt", "out-file", "out-rel", "pkg/hop/x.txt", "out-dir/d/e/f.txt"):
        r = await arena.run("write_file", path=path, content="pwned")
        assert r.is_error and r.text.startswith("path denied:"), f"{path}: {r.text}"
        r = await arena.run("edit_file", path=path, old_string="outside", new_string="pwned")
        assert r.is_error and r.text.startswith("path denied:"), f"{path}: {r.text}"
    assert arena.outside_snapshot() == {"t.txt": b"outside\n"}
    assert not (arena.outside / "d").exists()


# -- temp files ----------------------------------------------------------------------------------


KILLED_WRITER = textwrap.dedent(
    """
    import asyncio, os, sys, time
    from pathlib import Path
    from reasonix_core.tool import ToolContext, builtin_tools
    from reasonix_core.tool.env import SessionEnv

    ws = Path(sys.argv[1])
    real_fsync = os.fsync

    def fsync_then_hang(fd):
        real_fsync(fd)
        print("written", flush=True)  # every byte is in the temp file; not yet published
        time.sleep(600)

    os.fsync = fsync_then_hang
    (tool,) = builtin_tools(["write_file"])
    ctx = ToolContext(env=SessionEnv(workspace=ws, temp_dir=ws / ".tmp"))
    asyncio.run(tool.execute({"path": "big.bin", "content": "z" * (24 << 20)}, ctx))
    """
)


def test_temp_file_of_a_killed_run_is_swept(arena: Arena) -> None:
    """Hole 8: a run killed mid-write left a large .rx-*.tmp behind."""
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(arena.ws)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "written"
        leftovers = [p.name for p in arena.ws.iterdir() if p.name.startswith(".rx-")]
        assert len(leftovers) == 1 and leftovers[0].startswith(f".rx-{child.pid}-"), leftovers
        assert (arena.ws / leftovers[0]).stat().st_size == 24 << 20
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert not (arena.ws / "big.bin").exists()
    # A live process's temp file is never touched.
    live = arena.ws / f".rx-{os.getpid()}-00ff.tmp"
    live.write_bytes(b"in flight")
    r = anyio.run(functools.partial(arena.run, "write_file", path="next.txt", content="n\n"))
    assert not r.is_error, r.text
    names = sorted(p.name for p in arena.ws.iterdir())
    assert names == sorted([live.name, "next.txt"]), names


async def test_temp_is_removed_when_publish_fails(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    (arena.ws / "f.txt").write_text("a\n")
    assert not (await arena.run("read_file", path="f.txt")).is_error
    real_replace = os.replace

    def failing_replace(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "replace", failing_replace)
    r = await arena.run("edit_file", path="f.txt", old_string="a", new_string="b")
    monkeypatch.setattr(os, "replace", real_replace)
    assert r.is_error and "f.txt" in r.text, r.text
    assert sorted(p.name for p in arena.ws.iterdir()) == ["f.txt"]
    assert (arena.ws / "f.txt").read_text() == "a\n"


async def test_realpath_failing_mid_swap_is_an_error_result(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hole 1/7: a fast flipper made ``os.path.realpath`` raise EINVAL (its lstat saw
    a symlink, its readlink a directory) and the exception crashed the run."""
    (arena.ws / "sub").mkdir()
    real_realpath = os.path.realpath

    def flipped_realpath(path: Any, *args: Any, **kwargs: Any) -> str:
        if "sub" in os.fspath(path):
            raise OSError(errno.EINVAL, "Invalid argument", os.fspath(path))
        return real_realpath(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", flipped_realpath)
    calls = [
        ("read_file", {"path": "sub/x"}),
        ("write_file", {"path": "sub/x", "content": "x"}),
        ("edit_file", {"path": "sub/x", "old_string": "a", "new_string": "b"}),
        ("multi_edit", {"path": "sub/x", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ("move_file", {"source_path": "sub/x", "destination_path": "y"}),
        ("ls", {"path": "sub"}),
        ("glob", {"pattern": "*", "path": "sub"}),
    ]
    for name, args in calls:
        r = await arena.run(name, **args)
        assert r.is_error and "sub" in r.text, f"{name}: {r.text}"
        assert "Invalid argument" in r.text, f"{name}: {r.text}"


@pytest.mark.parametrize(
    "path", ["a\x00b", "a\udc80b", "n" * 5000, "loop/x"], ids=["nul", "surrogate", "long", "loop"]
)
def test_policy_decision_on_malformed_path_does_not_raise(tmp_path: Path, path: str) -> None:
    """Hole 7: the permission check resolved the path with realpath before the tool
    ran, and a NUL byte (ValueError) or a swap (EINVAL) escaped as an exception."""
    from reasonix_core.permission.policy import Policy

    (tmp_path / "loop").symlink_to("loop")
    policy = Policy(workspace=tmp_path, deny=["Read(.env)"])
    for tool, read_only in (("read_file", True), ("write_file", False), ("grep", True)):
        decision = policy.decide(tool, read_only, {"path": path, "content": "x"})
        assert decision.verdict is not None


async def test_a_missing_root_is_never_replaced_by_a_file(arena: Arena) -> None:
    arena.tmp.rmdir()
    r = await arena.run("write_file", path=str(arena.tmp), content="x")
    assert r.is_error and "root" in r.text, r.text
    assert not arena.tmp.exists()
    deep = SandboxPolicy(
        workspace=arena.ws, temp_dir=arena.tmp, allow_write=(arena.outside / "a" / "b",)
    )
    arena.ctx.env = dataclasses.replace(arena.ctx.env, sandbox=deep)
    r = await arena.run("write_file", path=str(arena.outside / "a" / "b"), content="x")
    assert r.is_error and "root" in r.text, r.text
    assert not (arena.outside / "a").exists()
    assert deep.write_roots[-1] == arena.outside / "a" / "b"
    r = await arena.run("write_file", path=str(arena.tmp / "a.txt"), content="x")
    assert not r.is_error, r.text  # the root itself is created as a directory
    assert (arena.tmp / "a.txt").read_text() == "x"
