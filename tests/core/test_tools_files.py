"""The file tools on real temporary workspaces: read_file, write_file, edit_file,
multi_edit, move_file, ls, glob, grep, plus the .gitignore matcher."""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from reasonix_core.tool import ToolContext, ToolRegistry, builtin_names, builtin_tools
from reasonix_core.tool.base import ToolResult
from reasonix_core.tool.builtin import glob as glob_mod
from reasonix_core.tool.builtin import grep as grep_mod
from reasonix_core.tool.builtin import ls as ls_mod
from reasonix_core.tool.builtin import read_file as read_mod
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.ignore import GlobPattern, IgnoreMatcher, expand_braces, parse_gitignore
from reasonix_core.tool.ledger import FileLedger
from reasonix_core.tool.sandbox import SandboxPolicy
from tests.core.tool_helpers import FILE_TOOLS

Call = Callable[..., Awaitable[ToolResult]]


@dataclass
class Env:
    ws: Path
    tmp: Path
    outside: Path
    ctx: ToolContext
    registry: ToolRegistry

    async def call(self, name: str, **args: Any) -> ToolResult:
        return await self.registry.call(name, json.dumps(args), self.ctx)

    async def read(self, path: str) -> ToolResult:
        result = await self.call("read_file", path=path)
        assert not result.is_error, result.text
        return result


@pytest.fixture
def env(tmp_path: Path) -> Env:
    ws = tmp_path / "ws"
    tmp = tmp_path / "session-tmp"
    outside = tmp_path / "outside"
    for d in (ws, tmp, outside):
        d.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    ctx = ToolContext(env=SessionEnv(workspace=ws, temp_dir=tmp))
    return Env(ws, tmp, outside, ctx, ToolRegistry(builtin_tools(FILE_TOOLS)))


def forbid(env: Env, *paths: Path) -> None:
    sandbox = SandboxPolicy(workspace=env.ws, temp_dir=env.tmp, forbid_read=tuple(paths))
    env.ctx.env = dataclasses.replace(env.ctx.env, sandbox=sandbox)


def assert_error(result: ToolResult, start: str) -> None:
    assert result.is_error, result.text
    assert result.text.startswith(start), result.text


# -- registry and schemas ---------------------------------------------------------------------


def test_registry_order_and_schemas() -> None:
    names = builtin_names()
    assert names[: len(FILE_TOOLS)] == FILE_TOOLS
    read_only = {"read_file": True, "ls": True, "glob": True, "grep": True}
    for tool in builtin_tools(FILE_TOOLS):
        assert tool.description and len(tool.description) > 80
        assert tool.read_only is read_only.get(tool.name, False)
        schema = tool.parameters
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert isinstance(schema["required"], list)
        assert set(schema["required"]) <= set(schema["properties"])
    # Byte-stable: two registries produce the same fingerprint.
    assert (
        ToolRegistry(builtin_tools(FILE_TOOLS)).fingerprint
        == ToolRegistry(builtin_tools(FILE_TOOLS)).fingerprint
    )


async def test_services_created_lazily(env: Env) -> None:
    assert env.ctx.ledger is None
    await env.call("ls")
    assert isinstance(env.ctx.ledger, FileLedger)
    assert env.ctx.sandbox is None  # the default policy is not stored


async def test_invalid_arguments_become_results(env: Env) -> None:
    r = await env.call("read_file", file_path="x")
    assert_error(r, "read_file: invalid arguments:")
    assert "path" in r.text
    r = await env.registry.call("edit_file", "{not json", env.ctx)
    assert_error(r, "edit_file: arguments are not valid JSON")


# -- read_file ---------------------------------------------------------------------------


async def test_read_file_numbering_and_window(env: Env) -> None:
    (env.ws / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 2501)))
    r = await env.call("read_file", path="f.txt")
    lines = r.text.split("\n")
    assert lines[0] == "     1\tline 1"
    assert lines[1999] == "  2000\tline 2000"
    assert lines[-1] == "… 500 more lines; call read_file with offset=2001 to continue"
    assert r.meta["lines"] == 2500
    r = await env.call("read_file", path="f.txt", offset=2001, limit=2)
    assert r.text.split("\n")[:2] == ["  2001\tline 2001", "  2002\tline 2002"]
    assert "498 more lines; call read_file with offset=2003" in r.text
    r = await env.call("read_file", path="f.txt", offset=2500)
    assert r.text == "  2500\tline 2500"
    r = await env.call("read_file", path="f.txt", offset=9999)
    assert not r.is_error and "has 2500 lines; offset=9999 is past the end" in r.text


async def test_read_file_truncates_long_lines_and_crlf(env: Env) -> None:
    (env.ws / "long.txt").write_bytes(b"x" * 2500 + b"\r\nshort\r\n")
    r = await env.call("read_file", path="long.txt")
    first, second = r.text.split("\n")
    assert first.startswith("     1\t" + "x" * 2000 + "… [line truncated: 500 more chars]")
    assert second == "     2\tshort"


async def test_read_file_empty_binary_directory_missing(env: Env) -> None:
    (env.ws / "empty.txt").write_bytes(b"")
    r = await env.call("read_file", path="empty.txt")
    assert not r.is_error and "empty" in r.text
    (env.ws / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00" + bytes(range(256)))
    r = await env.call("read_file", path="blob.bin")
    assert r.is_error and "binary" in r.text
    (env.ws / "pkg").mkdir()
    r = await env.call("read_file", path="pkg")
    assert r.is_error and "directory" in r.text and "ls" in r.text
    (env.ws / "config.py").write_text("x")
    r = await env.call("read_file", path="confg.py")
    assert_error(r, "FS_NOT_FOUND: confg.py does not exist")
    assert "config.py" in r.text


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        (codecs.BOM_UTF8 + "héllo\nwörld\n".encode(), "utf-8 with BOM"),
        (codecs.BOM_UTF16_LE + "héllo\nwörld\n".encode("utf-16-le"), "utf-16-le with BOM"),
        (codecs.BOM_UTF16_BE + "héllo\nwörld\n".encode("utf-16-be"), "utf-16-be with BOM"),
        ("héllo\nwörld\n".encode("utf-16-le"), "utf-16-le"),
        ("héllo\nwörld 中文\n".encode("gb18030"), "gb18030"),
    ],
)
async def test_read_file_encodings(env: Env, raw: bytes, label: str) -> None:
    (env.ws / "enc.txt").write_bytes(raw)
    r = await env.call("read_file", path="enc.txt")
    assert not r.is_error, r.text
    assert r.text.startswith("     1\théllo\n     2\twörld")
    assert f"(file encoding: {label}" in r.text
    assert "\ufeff" not in r.text


async def test_read_file_forbid_read(env: Env) -> None:
    (env.ws / ".env").write_text("KEY=1\n")
    (env.ws / "alias").symlink_to(env.ws / ".env")
    forbid(env, env.ws / ".env")
    for path in (".env", "alias", str(env.ws / ".env")):
        r = await env.call("read_file", path=path)
        assert_error(r, "path denied:")
        assert "KEY" not in r.text


async def test_read_file_outside_workspace_allowed(env: Env) -> None:
    r = await env.call("read_file", path=str(env.outside / "secret.txt"))
    assert r.text == "     1\ttop secret"


async def test_read_file_streams_large_files(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_mod, "STREAM_THRESHOLD", 1000)
    monkeypatch.setattr(read_mod, "_CHUNK", 64)
    text = "".join(f"row {i} é\r\n" for i in range(1, 301))
    (env.ws / "big.txt").write_text(text, newline="")
    r = await env.call("read_file", path="big.txt", offset=100, limit=3)
    assert r.text.split("\n")[:3] == ["   100\trow 100 é", "   101\trow 101 é", "   102\trow 102 é"]
    assert "198 more lines; call read_file with offset=103" in r.text
    # The window observation covers the whole file: an edit far from the window works.
    r = await env.call("edit_file", path="big.txt", old_string="row 7 é", new_string="ROW 7")
    assert not r.is_error, r.text
    (env.ws / "bigbin").write_bytes(b"\x00" * 5000)
    r = await env.call("read_file", path="bigbin")
    assert r.is_error and "binary" in r.text


# -- write_file ---------------------------------------------------------------------------


async def test_write_file_create_and_overwrite(env: Env) -> None:
    r = await env.call("write_file", path="deep/new/dir/a.txt", content="one\ntwo\n")
    assert not r.is_error
    assert r.text == "created deep/new/dir/a.txt (8 bytes, 2 lines)"
    assert (env.ws / "deep/new/dir/a.txt").read_text() == "one\ntwo\n"
    assert "+one" in r.meta["diff"] and r.meta["action"] == "created"
    # A file just written counts as observed: overwrite straight away.
    r = await env.call("write_file", path="deep/new/dir/a.txt", content="one\nTWO\nthree\n")
    assert not r.is_error, r.text
    assert r.text.startswith("overwrote deep/new/dir/a.txt (14 bytes, 3 lines; was 2 lines")
    assert "-two" in r.meta["diff"] and "+TWO" in r.meta["diff"]
    r = await env.call("write_file", path="deep/new/dir/a.txt", content="one\nTWO\nthree\n")
    assert not r.is_error and "nothing was written" in r.text


async def test_write_file_requires_observation(env: Env) -> None:
    target = env.ws / "existing.txt"
    target.write_text("original\n")
    r = await env.call("write_file", path="existing.txt", content="new\n")
    assert_error(r, "FS_NOT_OBSERVED: read existing.txt before overwriting it")
    assert r.meta["code"] == "FS_NOT_OBSERVED"
    assert target.read_text() == "original\n"
    await env.read("existing.txt")
    target.write_text("changed externally\n")
    r = await env.call("write_file", path="existing.txt", content="new\n")
    assert_error(r, "FS_STALE_VERSION: existing.txt changed on disk")
    assert target.read_text() == "changed externally\n"
    await env.read("existing.txt")
    r = await env.call("write_file", path="existing.txt", content="new\n")
    assert not r.is_error and target.read_text() == "new\n"


async def test_write_file_preserves_mode_crlf_and_encoding(env: Env) -> None:
    script = env.ws / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    script.chmod(0o751)
    await env.read("run.sh")
    r = await env.call("write_file", path="run.sh", content="#!/bin/sh\necho bye\n")
    assert not r.is_error, r.text
    assert "kept CRLF" in r.text
    assert script.read_bytes() == b"#!/bin/sh\r\necho bye\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    u16 = env.ws / "u16.txt"
    u16.write_bytes(codecs.BOM_UTF16_LE + "a\n".encode("utf-16-le"))
    await env.read("u16.txt")
    r = await env.call("write_file", path="u16.txt", content="ü\n")
    assert not r.is_error, r.text
    assert u16.read_bytes() == codecs.BOM_UTF16_LE + "ü\n".encode("utf-16-le")
    # No temp files left behind.
    assert sorted(p.name for p in env.ws.iterdir()) == ["run.sh", "u16.txt"]


async def test_write_file_confinement(env: Env) -> None:
    (env.ws / "link-out").symlink_to(env.outside, target_is_directory=True)
    (env.ws / "file-out").symlink_to(env.outside / "secret.txt")
    for path in (
        "../outside/pwn.txt",
        str(env.outside / "pwn.txt"),
        "link-out/pwn.txt",
        "file-out",
        "sub/../../outside/pwn.txt",
    ):
        r = await env.call("write_file", path=path, content="pwned")
        assert_error(r, "path denied:")
        assert r.meta["code"] == "PATH_DENIED"
    assert sorted(p.name for p in env.outside.iterdir()) == ["secret.txt"]
    assert (env.outside / "secret.txt").read_text() == "top secret\n"
    # The session temp dir is writable.
    r = await env.call("write_file", path=str(env.tmp / "scratch.txt"), content="ok")
    assert not r.is_error, r.text


async def test_write_file_directory_and_parent_file(env: Env) -> None:
    (env.ws / "d").mkdir()
    r = await env.call("write_file", path="d", content="x")
    assert r.is_error and "directory" in r.text
    (env.ws / "plain").write_text("x")
    r = await env.call("write_file", path="plain/child.txt", content="x")
    assert r.is_error and "not a directory" in r.text


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
async def test_write_file_read_only_file(env: Env) -> None:
    f = env.ws / "ro.txt"
    f.write_text("x\n")
    f.chmod(0o444)
    await env.read("ro.txt")
    r = await env.call("edit_file", path="ro.txt", old_string="x", new_string="y")
    assert r.is_error and "read-only" in r.text
    assert f.read_text() == "x\n"


async def test_write_file_rejects_unencodable_text(env: Env) -> None:
    latin = env.ws / "latin.txt"
    latin.write_bytes("caf\xe9 \xff\n".encode("latin-1"))
    await env.read("latin.txt")
    r = await env.call("write_file", path="latin.txt", content="中文\n")
    assert r.is_error and "cannot encode" in r.text
    r = await env.registry.call(
        "write_file", '{"path": "s.txt", "content": "bad \\ud800 surrogate"}', env.ctx
    )
    assert r.is_error and "cannot encode" in r.text
    assert not (env.ws / "s.txt").exists()


# -- edit_file -------------------------------------------------------------------------------


SOURCE = "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


async def test_edit_file_happy_path(env: Env) -> None:
    (env.ws / "m.py").write_text(SOURCE)
    await env.read("m.py")
    r = await env.call("edit_file", path="m.py", old_string="a + b", new_string="b + a")
    assert not r.is_error, r.text
    assert r.text == "edited m.py: 1 replacement at line 5 (+1 -1 lines)"
    assert "-    return a + b\n+    return b + a\n" in r.meta["diff"]
    assert (env.ws / "m.py").read_text() == SOURCE.replace("a + b", "b + a")


async def test_edit_file_read_edit_edit_repeatedly(env: Env) -> None:
    f = env.ws / "m.py"
    f.write_text(SOURCE)
    for i in range(3):
        await env.read("m.py")
        r1 = await env.call(
            "edit_file", path="m.py", old_string="import os", new_string=f"import os  # {i}a"
        )
        assert not r1.is_error, r1.text
        # Something unrelated runs (a bash command reading the file) in between.
        assert "import os" in f.read_text()
        r2 = await env.call("edit_file", path="m.py", old_string=f"# {i}a", new_string=f"# {i}b")
        assert not r2.is_error, r2.text
        if i < 2:
            f.write_text(SOURCE)  # an external reset; the next round re-reads
    assert f.read_text().startswith("import os  # 2b")


async def test_edit_file_not_observed_and_stale(env: Env) -> None:
    f = env.ws / "m.py"
    f.write_text(SOURCE)
    r = await env.call("edit_file", path="m.py", old_string="a + b", new_string="b + a")
    assert_error(r, "FS_NOT_OBSERVED: read m.py before editing it (any read_file window counts)")
    await env.call("read_file", path="m.py", offset=8, limit=1)  # any window counts
    # Same size, content changed, mtime restored: still caught by the content hash.
    st = f.stat()
    f.write_text(SOURCE.replace("a + b", "a * b"))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    r = await env.call("edit_file", path="m.py", old_string="a * b", new_string="b * a")
    assert_error(r, "FS_STALE_VERSION: m.py changed on disk since you last read or wrote it")
    assert r.meta["code"] == "FS_STALE_VERSION"
    await env.read("m.py")
    r = await env.call("edit_file", path="m.py", old_string="a * b", new_string="b * a")
    assert not r.is_error, r.text


async def test_edit_file_missing_file(env: Env) -> None:
    r = await env.call("edit_file", path="nope.py", old_string="a", new_string="b")
    assert_error(r, "FS_NOT_FOUND: nope.py does not exist")
    assert "write_file" in r.text


async def test_edit_file_not_found_diagnostics(env: Env) -> None:
    (env.ws / "m.py").write_text(SOURCE)
    await env.read("m.py")
    r = await env.call("edit_file", path="m.py", old_string="return a+b", new_string="x")
    assert r.is_error
    assert r.text.startswith("old_string was not found in m.py.")
    assert "     5\t    return a + b" in r.text  # nearest line with its number
    r = await env.call(
        "edit_file", path="m.py", old_string="def add(a, b):\n  return a + b", new_string="x"
    )
    assert "Lines 4-5 match it when whitespace is ignored" in r.text
    r = await env.call(
        "edit_file", path="m.py", old_string="     4\tdef add(a, b):", new_string="x"
    )
    assert "line-number prefixes" in r.text
    r = await env.call("edit_file", path="m.py", old_string="zzzzqqqq", new_string="x")
    assert "No similar lines" in r.text
    assert (env.ws / "m.py").read_text() == SOURCE


async def test_edit_file_not_unique_and_replace_all(env: Env) -> None:
    (env.ws / "m.py").write_text(SOURCE)
    await env.read("m.py")
    r = await env.call("edit_file", path="m.py", old_string="(a, b)", new_string="(x, y)")
    assert r.is_error
    assert "matches 2 times in m.py (at lines 4, 8)" in r.text
    assert "replace_all=true" in r.text
    r = await env.call(
        "edit_file", path="m.py", old_string="(a, b)", new_string="(x, y)", replace_all=True
    )
    assert r.text.startswith("edited m.py: 2 replacements, first at line 4")
    assert (env.ws / "m.py").read_text().count("(x, y)") == 2


async def test_edit_file_argument_errors(env: Env) -> None:
    (env.ws / "m.py").write_text(SOURCE)
    await env.read("m.py")
    r = await env.call("edit_file", path="m.py", old_string="a + b", new_string="a + b")
    assert r.is_error and "identical" in r.text
    r = await env.call("edit_file", path="m.py", old_string="", new_string="x")
    assert r.is_error and "empty" in r.text
    r = await env.call("edit_file", path="m.py", old_string=1, new_string="x")
    assert_error(r, "edit_file: invalid arguments: old_string")


async def test_edit_file_preserves_bom_utf16_and_crlf(env: Env) -> None:
    cases = {
        "bom.txt": codecs.BOM_UTF8 + b"alpha\r\nbeta\r\ngamma\r\n",
        "u16.txt": codecs.BOM_UTF16_BE + "alpha\nbeta\ngamma\n".encode("utf-16-be"),
        "gb.txt": "alpha\n中文 beta\ngamma\n".encode("gb18030"),
    }
    for name, raw in cases.items():
        (env.ws / name).write_bytes(raw)
        await env.read(name)
        r = await env.call(
            "edit_file", path=name, old_string="beta\ngamma", new_string="BETA\ngamma"
        )
        assert not r.is_error, (name, r.text)
    assert (env.ws / "bom.txt").read_bytes() == codecs.BOM_UTF8 + b"alpha\r\nBETA\r\ngamma\r\n"
    assert (env.ws / "u16.txt").read_bytes() == codecs.BOM_UTF16_BE + "alpha\nBETA\ngamma\n".encode(
        "utf-16-be"
    )
    assert (env.ws / "gb.txt").read_bytes() == "alpha\n中文 BETA\ngamma\n".encode("gb18030")


async def test_edit_file_mixed_line_endings_untouched(env: Env) -> None:
    f = env.ws / "mixed.txt"
    f.write_bytes(b"a\r\nb\nc\r\n")
    await env.read("mixed.txt")
    r = await env.call("edit_file", path="mixed.txt", old_string="b\nc", new_string="B\nc")
    assert not r.is_error, r.text
    assert f.read_bytes() == b"a\r\nB\nc\r\n"


async def test_edit_file_binary_refused(env: Env) -> None:
    f = env.ws / "b.bin"
    f.write_bytes(b"abc")
    await env.read("b.bin")
    f.write_bytes(b"abc\x00\x00\x01\x02")
    env.ctx.ledger.observe(f)  # observed, but binary now
    r = await env.call("edit_file", path="b.bin", old_string="abc", new_string="x")
    assert r.is_error and "binary" in r.text


async def test_symlink_alias_is_the_same_file(env: Env) -> None:
    real = env.ws / "real.py"
    real.write_text(SOURCE)
    (env.ws / "alias.py").symlink_to(real)
    await env.read("alias.py")  # observed via the alias ...
    r = await env.call("edit_file", path="real.py", old_string="import os", new_string="import re")
    assert not r.is_error, r.text  # ... edits via the real path
    r = await env.call("edit_file", path="alias.py", old_string="import re", new_string="import io")
    assert not r.is_error, r.text
    assert (env.ws / "alias.py").is_symlink()
    assert real.read_text().startswith("import io")


async def test_concurrent_edits_are_serialised(env: Env) -> None:
    f = env.ws / "c.py"
    f.write_text(SOURCE)
    await env.read("c.py")
    results: dict[str, ToolResult] = {}

    async def edit(key: str, old: str, new: str) -> None:
        results[key] = await env.call("edit_file", path="c.py", old_string=old, new_string=new)

    async with anyio.create_task_group() as tg:
        tg.start_soon(edit, "one", "return a + b", "return a + b + 1")
        tg.start_soon(edit, "two", "return a - b", "return a - b - 1")
    assert not results["one"].is_error and not results["two"].is_error
    text = f.read_text()
    assert "a + b + 1" in text and "a - b - 1" in text  # no lost update

    # Two writers racing on the same text: exactly one wins, the other fails cleanly.
    async with anyio.create_task_group() as tg:
        tg.start_soon(edit, "x", "import os", "import x")
        tg.start_soon(edit, "y", "import os", "import y")
    errors = [k for k in ("x", "y") if results[k].is_error]
    assert len(errors) == 1
    assert "not found" in results[errors[0]].text
    winner = "y" if errors == ["x"] else "x"
    assert f.read_text().startswith(f"import {winner}\n")


async def test_concurrent_external_change_is_detected(env: Env) -> None:
    f = env.ws / "c.py"
    f.write_text(SOURCE)
    await env.read("c.py")
    ledger: FileLedger = env.ctx.ledger
    # Hold the file's lock, change it behind the ledger's back, then release.
    async with anyio.create_task_group() as tg:
        await ledger.lock(f).acquire()
        result: list[ToolResult] = []

        async def edit() -> None:
            result.append(
                await env.call("edit_file", path="c.py", old_string="import os", new_string="z")
            )

        tg.start_soon(edit)
        await anyio.sleep(0.05)
        f.write_text(SOURCE + "# external\n")
        ledger.lock(f).release()
    assert_error(result[0], "FS_STALE_VERSION")
    assert f.read_text() == SOURCE + "# external\n"


async def test_change_during_compute_is_caught_before_publish(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix_core.tool.builtin import edit_file as edit_mod

    f = env.ws / "c.py"
    f.write_text(SOURCE)
    await env.read("c.py")
    real_apply = edit_mod.apply_edit

    def racing_apply(*args: Any) -> Any:
        f.write_text(SOURCE.replace("sub", "SUB"))  # an external writer sneaks in
        return real_apply(*args)

    monkeypatch.setattr(edit_mod, "apply_edit", racing_apply)
    r = await env.call("edit_file", path="c.py", old_string="import os", new_string="import re")
    assert_error(r, "FS_STALE_VERSION")
    assert f.read_text() == SOURCE.replace("sub", "SUB")


async def test_permission_change_is_not_a_content_change(env: Env) -> None:
    f = env.ws / "p.sh"
    f.write_text("echo hi\n")
    await env.read("p.sh")
    f.chmod(0o700)
    r = await env.call("edit_file", path="p.sh", old_string="hi", new_string="bye")
    assert not r.is_error, r.text
    assert stat.S_IMODE(f.stat().st_mode) == 0o700
    assert f.read_text() == "echo bye\n"


async def test_edit_confinement(env: Env) -> None:
    (env.ws / "out.txt").symlink_to(env.outside / "secret.txt")
    ledger = env.ctx.ledger = env.ctx.ledger or FileLedger()
    ledger.observe(env.outside / "secret.txt")
    for path in ("out.txt", "../outside/secret.txt", str(env.outside / "secret.txt")):
        r = await env.call("edit_file", path=path, old_string="top", new_string="pwned")
        assert_error(r, "path denied:")
        r = await env.call(
            "multi_edit", path=path, edits=[{"old_string": "top", "new_string": "pwned"}]
        )
        assert_error(r, "path denied:")
    assert (env.outside / "secret.txt").read_text() == "top secret\n"


# -- multi_edit ---------------------------------------------------------------------------------


async def test_multi_edit_sequential_and_atomic(env: Env) -> None:
    f = env.ws / "m.py"
    f.write_text(SOURCE)
    r = await env.call("multi_edit", path="m.py", edits=[{"old_string": "os", "new_string": "x"}])
    assert_error(r, "FS_NOT_OBSERVED")
    await env.read("m.py")
    r = await env.call(
        "multi_edit",
        path="m.py",
        edits=[
            {"old_string": "def add", "new_string": "def plus"},
            {"old_string": "def plus(a, b)", "new_string": "def plus(a, b, c=0)"},
            {"old_string": "return", "new_string": "return  ", "replace_all": True},
        ],
    )
    assert not r.is_error, r.text
    assert r.text.startswith("edited m.py: 3 edits applied (4 replacements)")
    text = f.read_text()
    assert "def plus(a, b, c=0):\n    return   a + b" in text
    before = f.read_bytes()
    r = await env.call(
        "multi_edit",
        path="m.py",
        edits=[
            {"old_string": "import os", "new_string": "import sys"},
            {"old_string": "def missing()", "new_string": "x"},
            {"old_string": "sub", "new_string": "minus"},
        ],
    )
    assert_error(r, "edits[1] failed")
    assert "No changes were written to m.py" in r.text
    assert f.read_bytes() == before
    r = await env.call(
        "multi_edit",
        path="m.py",
        edits=[{"old_string": "return", "new_string": "yield"}],
    )
    assert_error(r, "edits[0] failed: old_string matches 2 times")
    r = await env.call("multi_edit", path="m.py", edits=[])
    assert_error(r, "multi_edit: invalid arguments: edits")


# -- move_file -------------------------------------------------------------------------------


async def test_move_file_happy_path_keeps_observation(env: Env) -> None:
    (env.ws / "a.py").write_text(SOURCE)
    await env.read("a.py")
    r = await env.call("move_file", source_path="a.py", destination_path="pkg/sub/b.py")
    assert not r.is_error, r.text
    assert r.text == "moved file a.py -> pkg/sub/b.py"
    assert not (env.ws / "a.py").exists() and (env.ws / "pkg/sub/b.py").read_text() == SOURCE
    r = await env.call("edit_file", path="pkg/sub/b.py", old_string="import os", new_string="x")
    assert not r.is_error, r.text


async def test_move_file_errors(env: Env) -> None:
    (env.ws / "a.txt").write_text("a")
    (env.ws / "b.txt").write_text("b")
    r = await env.call("move_file", source_path="missing.txt", destination_path="c.txt")
    assert_error(r, "FS_NOT_FOUND: source missing.txt does not exist")
    r = await env.call("move_file", source_path="a.txt", destination_path="b.txt")
    assert_error(r, "FS_ALREADY_EXISTS: destination b.txt already exists")
    assert (env.ws / "a.txt").read_text() == "a" and (env.ws / "b.txt").read_text() == "b"
    r = await env.call("move_file", source_path="a.txt", destination_path="../outside/a.txt")
    assert_error(r, "path denied:")
    r = await env.call(
        "move_file", source_path=str(env.outside / "secret.txt"), destination_path="s.txt"
    )
    assert_error(r, "path denied:")
    r = await env.call("move_file", source_path=".", destination_path="elsewhere")
    assert r.is_error and "root" in r.text
    (env.ws / "d").mkdir()
    r = await env.call("move_file", source_path="d", destination_path="d/inner")
    assert r.is_error and "into itself" in r.text
    assert sorted(p.name for p in env.outside.iterdir()) == ["secret.txt"]


async def test_move_directory_and_symlink(env: Env) -> None:
    (env.ws / "d").mkdir()
    (env.ws / "d" / "f.txt").write_text("f\n")
    await env.read("d/f.txt")
    r = await env.call("move_file", source_path="d", destination_path="e")
    assert r.text == "moved directory d -> e"
    r = await env.call("edit_file", path="e/f.txt", old_string="f", new_string="g")
    assert not r.is_error, r.text
    (env.ws / "link").symlink_to(env.outside / "secret.txt")
    r = await env.call("move_file", source_path="link", destination_path="link2")
    assert r.text == "moved symlink link -> link2"
    assert (env.ws / "link2").is_symlink()
    assert (env.outside / "secret.txt").read_text() == "top secret\n"


# -- ls -----------------------------------------------------------------------------------------


def make_tree(ws: Path) -> None:
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (ws / "src" / "main.py").write_text("print('hi')\n")
    (ws / "README.md").write_text("# readme\n")
    (ws / ".hidden").write_text("h")
    (ws / ".github").mkdir()
    (ws / ".github" / "ci.yml").write_text("on: push\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref\n")
    (ws / "node_modules" / "lib").mkdir(parents=True)
    (ws / "node_modules" / "lib" / "index.js").write_text("x")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("built = True\n")
    (ws / "debug.log").write_text("log x = 1\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")


async def test_ls_plain(env: Env) -> None:
    make_tree(env.ws)
    r = await env.call("ls")
    assert r.text.split("\n") == [
        "README.md (9 bytes)",
        "build/",
        "debug.log (10 bytes)",
        "src/",
        "(not shown: 3 hidden, .git, node_modules)",
    ]
    r = await env.call("ls", path="src")
    assert r.text.split("\n") == ["main.py (12 bytes)", "pkg/"]
    r = await env.call("ls", path=".github")  # listing a hidden dir shows its contents
    assert r.text == "ci.yml (9 bytes)"
    r = await env.call("ls", path="nowhere")
    assert_error(r, "FS_NOT_FOUND")


async def test_ls_recursive_gitignore_aware(env: Env) -> None:
    make_tree(env.ws)
    r = await env.call("ls", recursive=True)
    lines = r.text.split("\n")
    assert lines[:5] == [
        "README.md (9 bytes)",
        "src/",
        "src/main.py (12 bytes)",
        "src/pkg/",
        "src/pkg/mod.py (6 bytes)",
    ]
    assert "gitignored" in lines[-1]
    assert not any("build" in line or "debug.log" in line for line in lines[:-1])


async def test_ls_cap_and_forbid(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(8):
        (env.ws / f"f{i}.txt").write_text("x")
    (env.ws / "secrets").mkdir()
    (env.ws / "secrets" / "key").write_text("k")
    monkeypatch.setattr(ls_mod, "MAX_ENTRIES", 5)
    r = await env.call("ls")
    lines = r.text.split("\n")
    assert len(lines) == 6 and lines[-1].startswith("… listing capped at 5 entries")
    monkeypatch.setattr(ls_mod, "MAX_ENTRIES", 1000)
    forbid(env, env.ws / "secrets")
    r = await env.call("ls", recursive=True)
    assert "secrets" not in r.text
    r = await env.call("ls", path="secrets")
    assert_error(r, "path denied:")


# -- glob ------------------------------------------------------------------------------------------


async def test_glob_recursive_newest_first(env: Env) -> None:
    make_tree(env.ws)
    os.utime(env.ws / "src" / "main.py", ns=(1, 1_000_000_000))
    os.utime(env.ws / "src" / "pkg" / "mod.py", ns=(1, 2_000_000_000))
    r = await env.call("glob", pattern="**/*.py")
    assert r.text.split("\n") == ["src/pkg/mod.py", "src/main.py"]  # build/ is gitignored
    r = await env.call("glob", pattern="*.py", path="src")
    assert r.text == "src/main.py"
    r = await env.call("glob", pattern="*.py")
    assert not r.is_error and "no files match" in r.text and "**/*.py" in r.text
    r = await env.call("glob", pattern="**/*.{md,py}")
    assert set(r.text.split("\n")) == {"README.md", "src/main.py", "src/pkg/mod.py"}
    r = await env.call("glob", pattern="src/**")
    assert set(r.text.split("\n")) == {"src/main.py", "src/pkg/mod.py"}


async def test_glob_hidden_only_when_named(env: Env) -> None:
    make_tree(env.ws)
    r = await env.call("glob", pattern="**/*.yml")
    assert "no files match" in r.text
    r = await env.call("glob", pattern=".github/*.yml")
    assert r.text == ".github/ci.yml"
    r = await env.call("glob", pattern="**/.github/*")
    assert r.text == ".github/ci.yml"
    r = await env.call("glob", pattern="**/index.js")
    assert "no files match" in r.text  # node_modules skipped


async def test_glob_cap_forbid_and_outside(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(7):
        (env.ws / f"f{i}.txt").write_text("x")
    monkeypatch.setattr(glob_mod, "MAX_RESULTS", 3)
    r = await env.call("glob", pattern="*.txt")
    lines = r.text.split("\n")
    assert len(lines) == 4 and lines[-1].startswith("… 4 more matches not shown")
    monkeypatch.setattr(glob_mod, "MAX_RESULTS", 500)
    forbid(env, env.ws / "f0.txt")
    r = await env.call("glob", pattern="*.txt")
    assert "f0.txt" not in r.text and "f1.txt" in r.text
    r = await env.call("glob", pattern="f0.txt")
    assert "no files match" in r.text
    r = await env.call("glob", pattern="../outside/*.txt")
    assert r.text == str((env.outside / "secret.txt").resolve())
    r = await env.call("glob", pattern="*", path="missing")
    assert_error(r, "FS_NOT_FOUND")


# -- grep ---------------------------------------------------------------------------------------------


async def test_grep_basic_and_gitignore(env: Env) -> None:
    make_tree(env.ws)
    r = await env.call("grep", pattern=r"x = 1")
    assert r.text.split("\n") == ["src/pkg/mod.py:1:x = 1"]  # debug.log and build/ ignored
    r = await env.call("grep", pattern="PRINT", case_insensitive=True)
    assert r.text == "src/main.py:1:print('hi')"
    r = await env.call("grep", pattern="=", glob="*.py")
    assert r.text == "src/pkg/mod.py:1:x = 1"
    r = await env.call("grep", pattern="push")
    assert "no matches" in r.text  # hidden dir skipped
    r = await env.call("grep", pattern="push", path=".github")
    assert r.text == ".github/ci.yml:1:on: push"
    r = await env.call("grep", pattern="built", path="build/out.py")  # named explicitly
    assert r.text == "build/out.py:1:built = True"


async def test_grep_nested_gitignore_and_negation(env: Env) -> None:
    (env.ws / ".gitignore").write_text("*.gen\n!keep.gen\n/top-only.txt\n")
    (env.ws / "a").mkdir()
    (env.ws / "a" / ".gitignore").write_text("local.txt\n!*.gen\n")
    for rel in ("x.gen", "keep.gen", "top-only.txt", "a/top-only.txt", "a/local.txt", "a/y.gen"):
        (env.ws / rel).write_text("needle\n")
    r = await env.call("grep", pattern="needle")
    assert set(r.text.split("\n")) == {
        "a/top-only.txt:1:needle",
        "a/y.gen:1:needle",
        "keep.gen:1:needle",
    }


async def test_grep_binary_cap_invalid_and_crlf(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    (env.ws / "bin.dat").write_bytes(b"needle\x00\x01")
    (env.ws / "many.txt").write_text("".join("needle\n" for _ in range(10)))
    (env.ws / "crlf.txt").write_bytes(b"end needle\r\nnext\r\n")
    monkeypatch.setattr(grep_mod, "MAX_MATCHES", 4)
    r = await env.call("grep", pattern="needle$")
    lines = r.text.split("\n")
    assert lines[0] == "crlf.txt:1:end needle"
    assert lines[4].startswith("… results capped at 4 matches")
    assert "binary" in lines[-1]
    r = await env.call("grep", pattern="needle", path="bin.dat")
    assert "binary" in r.text
    r = await env.call("grep", pattern="(unclosed")
    assert_error(r, "invalid regular expression '(unclosed'")
    assert "position" in r.text


async def test_grep_forbid_read(env: Env) -> None:
    (env.ws / "secrets").mkdir()
    (env.ws / "secrets" / "k.txt").write_text("needle\n")
    (env.ws / "ok.txt").write_text("needle\n")
    (env.ws / "alias.txt").symlink_to(env.ws / "secrets" / "k.txt")
    forbid(env, env.ws / "secrets")
    r = await env.call("grep", pattern="needle")
    assert r.text == "ok.txt:1:needle"
    r = await env.call("grep", pattern="needle", path="secrets")
    assert_error(r, "path denied:")


# A pattern regex cannot defuse (the backreference defeats its safeguards), and a
# line it backtracks on for longer than any budget; it matches "xaaab" at once.
SLOW_PATTERN = r"(a+)+\1b"
# The "b" keeps the pattern's literal part in the line, so grep runs the pattern on it.
HOSTILE_LINE = "a" * 3000 + "!b"


async def test_grep_skips_a_file_the_pattern_is_too_slow_on(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_mod, "PATTERN_BUDGET_SECONDS", 0.5)
    (env.ws / "data.txt").write_text(f"aab\n{HOSTILE_LINE}\naab\n")
    (env.ws / "good.txt").write_text("none\nxaaab\n")
    r = await env.call("grep", pattern=SLOW_PATTERN)
    assert not r.is_error
    lines = r.text.split("\n")
    # The match found before the budget ran out stays; the rest of data.txt is skipped.
    assert sorted(lines[:2]) == ["data.txt:1:aab", "good.txt:2:xaaab"]
    assert lines[2:] == [
        "… pattern too slow on data.txt; skipped after 0.5 s - simplify the pattern "
        "(avoid nested or overlapping repeats such as (a+)+ or (a|aa)*)"
    ]
    assert r.meta["too_slow"] == 1
    assert r.meta["matches"] == 2
    r = await env.call("grep", pattern=SLOW_PATTERN, path="data.txt", glob="*.txt")
    assert r.text.split("\n")[-1].startswith("… pattern too slow on data.txt; skipped")
    (env.ws / "data.txt").write_text(f"{HOSTILE_LINE}\n")
    r = await env.call("grep", pattern=SLOW_PATTERN, path="data.txt")
    assert r.text.split("\n") == [
        f"no matches for /{SLOW_PATTERN}/ in data.txt (1 file searched)",
        "… pattern too slow on data.txt; skipped after 0.5 s - simplify the pattern "
        "(avoid nested or overlapping repeats such as (a+)+ or (a|aa)*)",
    ]


async def test_grep_slow_pattern_leaves_the_event_loop_running(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other tasks (the TUI, the agent) keep running while a pattern backtracks:
    the match runs with the GIL released, unlike ``re``."""
    monkeypatch.setattr(grep_mod, "PATTERN_BUDGET_SECONDS", 1.0)
    (env.ws / "data.txt").write_text(f"{HOSTILE_LINE}\n")
    matching = anyio.Event()
    real_compile = grep_mod._compile

    class Watched:
        """The compiled pattern, flagging when the worker thread starts matching."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.pattern = inner.pattern

        def search(self, subject: str, **kwargs: Any) -> Any:
            if not matching.is_set():  # in the worker thread
                anyio.from_thread.run_sync(matching.set)
            return self.inner.search(subject, **kwargs)

    monkeypatch.setattr(grep_mod, "_compile", lambda *a: Watched(real_compile(*a)))
    done = anyio.Event()
    result: list[ToolResult] = []

    async def run_grep() -> None:
        result.append(await env.call("grep", pattern=SLOW_PATTERN))
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_grep)
        await matching.wait()
        # With the GIL held by the match (as with re) none of these ticks would
        # run before the search gave up.
        for _ in range(5):
            await anyio.sleep(0.01)
        ticked_while_matching = not done.is_set()
    assert ticked_while_matching
    assert "pattern too slow on data.txt" in result[0].text


@pytest.mark.parametrize("pattern", [r"\p{L}", "(?|a|b)", r"\K", "(?<n>a)", r"a\z", r"[\d-z]"])
async def test_grep_syntax_is_python_re(env: Env, pattern: str) -> None:
    """Patterns the regex module would take but re refuses keep re's error."""
    with pytest.raises(re.error) as refused:
        re.compile(pattern)
    exc = refused.value
    r = await env.call("grep", pattern=pattern)
    assert_error(r, f"invalid regular expression {pattern!r}: {exc.msg} at position {exc.pos} ")
    assert r.meta["code"] == "INVALID_REGEX"


async def test_grep_refuses_a_long_literal_run(env: Env) -> None:
    """regex builds a table for a literal stretch holding the GIL, in time cubic
    in its length when it repeats: longer stretches than that are refused."""
    (env.ws / "a.txt").write_text("b" * 1200 + "\n")
    limit = grep_mod.MAX_LITERAL_RUN
    r = await env.call("grep", pattern="b" * limit)
    assert r.text == f"a.txt:1:{'b' * 500}… [700 more chars]"
    # Classes of one character, {1}, escapes and groups join the run, as in regex.
    half = "b" * (limit // 2)
    for pattern in (
        "b" * (limit + 1),
        f"{half}[b]{half}",
        f"{half}(?:b{{1}}){half}",
        f"{half}\\x62{half}",
    ):
        r = await env.call("grep", pattern=pattern)
        assert_error(r, f"pattern too long to search: it holds {limit + 1} literal characters")
        assert r.meta["code"] == "PATTERN_TOO_LONG"
    r = await env.call("grep", pattern=f"{half}b?{half}")  # a repeat breaks the run
    assert not r.is_error


@pytest.mark.parametrize(
    "pattern",
    [
        r"x = 1",
        "needle$",
        "S.CRET|harmless",
        "hunt.r2",
        r"^\s*def \w+\(",
        r"\bfoo\b",
        r"(?i)straße",
        "[^\\W\\d]+",
        r"a{2,}",
        r"(?<=a)b",
        r"(\w)\1",
        "^$",
        r"\d+\.\d*",
    ],
)
@pytest.mark.parametrize("case_insensitive", [False, True])
def test_grep_matches_like_python_re(pattern: str, case_insensitive: bool) -> None:
    """regex's default VERSION0 finds what re finds."""
    lines = [
        "x = 1",
        "end needle",
        "SECRET harmless",
        "hunt_r2",
        "  def go(x):",
        "a foo.",
        "STRASSE straße",
        "ab 12",
        "aab",
        "xx",
        "",
        "3.14",
        "Σσς ſK",
        "é_1",
    ]
    compiled = grep_mod._compile(pattern, case_insensitive)
    assert not isinstance(compiled, ToolResult)
    reference = re.compile(pattern, (re.I if case_insensitive else 0) | re.M)
    for line in lines:
        got = compiled.search(line, timeout=30.0, concurrent=True)
        want = reference.search(line)
        assert (got and got.span()) == (want and want.span()), (pattern, line)


def test_importing_the_tools_leaves_regex_unloaded() -> None:
    """regex is loaded by the first grep, not at start-up."""
    code = (
        "import sys\n"
        "from reasonix_core.tool import builtin_tools\n"
        "import reasonix_core.session.build\n"
        "builtin_tools(None)\n"
        "assert 'regex' not in sys.modules, 'regex imported at start-up'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# -- gitignore matcher ------------------------------------------------------------------------------


def _ignored(rules: str, rel: str, is_dir: bool = False) -> bool:
    base = Path("/r")
    from reasonix_core.tool.ignore import IgnoreFile

    matcher = IgnoreMatcher([IgnoreFile(base, tuple(parse_gitignore(rules)))])
    return matcher.is_ignored(base / rel, is_dir)


@pytest.mark.parametrize(
    ("rules", "rel", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/dir/a.log", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("build/", "src/build", True, True),
        ("/root.txt", "root.txt", False, True),
        ("/root.txt", "sub/root.txt", False, False),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "x/doc/a.txt", False, False),
        ("doc/*.txt", "doc/sub/a.txt", False, False),
        ("**/cache", "a/b/cache", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("logs/**", "logs/x/y", False, True),
        ("# comment\n\n", "comment", False, False),
        ("\\#hash", "#hash", False, True),
        ("\\!bang", "!bang", False, True),
        ("fo?.[ch]", "foo.c", False, True),
        ("fo?.[ch]", "foo.py", False, False),
        ("[!a]x", "bx", False, True),
        ("[!a]x", "ax", False, False),
        ("trail\\ ", "trail ", False, True),
        ("trail   ", "trail", False, True),
    ],
)
def test_gitignore_rules(rules: str, rel: str, is_dir: bool, expected: bool) -> None:
    assert _ignored(rules, rel, is_dir) is expected


def test_gitignore_nested_precedence(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("!special.tmp\n")
    (tmp_path / "sub" / "inner").mkdir()
    root = IgnoreMatcher.for_directory(tmp_path / "sub" / "inner", stop_at=tmp_path)
    assert root.is_ignored(tmp_path / "sub" / "inner" / "x.tmp", False)
    assert not root.is_ignored(tmp_path / "sub" / "inner" / "special.tmp", False)
    top = IgnoreMatcher.for_directory(tmp_path, stop_at=tmp_path)
    assert top.is_ignored(tmp_path / "special.tmp", False)
    assert not top.child(tmp_path / "sub").is_ignored(tmp_path / "sub" / "special.tmp", False)


def test_glob_pattern_helpers() -> None:
    assert expand_braces("*.{py,{ts,tsx}}") == ["*.py", "*.ts", "*.tsx"]
    assert expand_braces("{single}") == ["{single}"]
    assert expand_braces("a{b") == ["a{b"]
    p = GlobPattern("src/**/test_*.py")
    assert p.match(("src", "test_a.py"))
    assert p.match(("src", "x", "y", "test_a.py"))
    assert not p.match(("lib", "test_a.py"))
    assert p.could_descend(("src", "x"))
    assert not p.could_descend(("lib",))
    assert GlobPattern("[z-a]").match(("[z-a]",))  # malformed class is literal
