"""Property tests: random and malformed arguments for every file tool.

Whatever the arguments - wrong types, missing keys, huge strings, odd Unicode,
path-traversal strings - ``ToolRegistry.call`` returns a result (never raises,
never reports an internal crash) and nothing outside the writable roots changes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.base import ToolResult
from reasonix_core.tool.builtin import glob as glob_mod
from reasonix_core.tool.builtin import grep as grep_mod
from reasonix_core.tool.builtin import ls as ls_mod
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.ledger import FileLedger
from reasonix_core.tool.sandbox import SandboxPolicy
from tests.core.tool_helpers import FILE_TOOLS

SEED_TEXT = "alpha\nbeta\ngamma\n"
SECRET = "top secret\nalpha\n"

# Placeholders {outside}, {tmp} and {ws} are filled in per workspace.
TRAVERSAL = [
    "../outside/secret.txt",
    "../outside/new.txt",
    "../outside",
    "../outside/sub/deep.txt",
    "..",
    "../",
    "../..",
    "../../etc/passwd",
    "/etc/passwd",
    "/",
    "~",
    "~/x.txt",
    "~root/x",
    "link-out",
    "link-out/secret.txt",
    "link-out/new.txt",
    "file-out",
    "dangling",
    "sub/../../outside/secret.txt",
    "./../outside//secret.txt",
    "src/./../../outside/secret.txt",
    "{outside}/secret.txt",
    "{outside}/new.txt",
    "{outside}",
    "{ws}/../outside/secret.txt",
    "{ws}",
    "{tmp}/t.txt",
    ".env",
    "./.env",
    "{ws}/.env",
    "src/../.env",
    ".",
    "a.txt",
    "src/m.py",
    "src",
    "new/deep/f.txt",
    "",
    " ",
    "a\x00b",
    "\x00",
    "\ud800.txt",
    "\udcff",
    "🙂/…/名前.txt",
    "con",
    "x" * 300,
    "a/" * 200 + "f.txt",
    "*",
    "**/*",
    "**/../../outside/*",
    "[",
    "{a,b",
    "\\",
    "\n",
]

paths = st.one_of(
    st.sampled_from(TRAVERSAL),
    st.text(max_size=24),
    st.lists(
        st.sampled_from(["..", ".", "outside", "src", "link-out", "*", "**", "a", "", "~"]),
        max_size=6,
    ).map("/".join),
)
weird_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "alpha",
            "beta\ngamma",
            "top secret",
            "\ud800",
            "\r\n",
            "\x00",
            "﻿",
            "é" * 3,
            "(",
            "[a-",
            "(a+)+$",
            "\\",
        ]
    ),
    st.just("y" * 100_000),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    weird_text,
    paths,
)
any_value = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


escapes = st.sampled_from(
    [p for p in TRAVERSAL if "outside" in p or p.startswith(("/", "~")) or ".env" in p]
)
hidden_patterns = st.sampled_from(["KEY", "hidden", ".env", "**/.env", ".e*", "*", "**/*"])
path_values = st.one_of(escapes, escapes, escapes, paths, paths)
likely_text = st.sampled_from(["alpha", "beta\ngamma", "top secret\n", "zeta"])
text_values = st.one_of(likely_text, likely_text, likely_text, weird_text)


def typed_value(key: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if kind == "string":
        if "path" in key:
            return path_values
        if key in ("pattern", "glob"):
            return st.one_of(hidden_patterns, hidden_patterns, path_values, weird_text)
        return text_values
    if kind == "integer":
        return st.integers(min_value=-5, max_value=10**12)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        item = schema["items"]
        props = item["properties"]
        return st.lists(
            st.fixed_dictionaries(
                {k: typed_value(k, v) for k, v in props.items() if k in item["required"]},
                optional={
                    k: typed_value(k, v) for k, v in props.items() if k not in item["required"]
                },
            ),
            max_size=4,
        )
    return any_value


@st.composite
def arguments(draw: st.DrawFn, schema: dict[str, Any]) -> str:
    """A raw argument string: usually a JSON object near the schema, sometimes junk."""
    mode = draw(st.integers(min_value=0, max_value=14))
    if mode == 0:
        return draw(st.sampled_from(["", "null", "[]", "{", "42", '"x"', "{}", "{]", "\x00"]))
    args: dict[str, Any] = {}
    for key, sub in schema["properties"].items():
        presence = draw(st.integers(min_value=0, max_value=9))
        if presence == 0:
            continue  # missing (maybe required) key
        if presence == 1:
            args[key] = draw(any_value)  # wrong type, probably
        else:
            args[key] = draw(typed_value(key, sub))
    if draw(st.integers(min_value=0, max_value=6)) == 0:
        args[draw(st.text(max_size=10))] = draw(any_value)
    return json.dumps(args)


def fill(raw: str, ws: Path, outside: Path, tmp: Path) -> str:
    # Substitute placeholders inside the JSON text (paths contain no quotes).
    return (
        raw.replace("{outside}", str(outside)).replace("{ws}", str(ws)).replace("{tmp}", str(tmp))
    )


def snapshot(root: Path, exclude: set[Path]) -> dict[str, tuple[Any, ...]]:
    """Everything below ``root`` except ``exclude``: type, mode, size, content hash."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in exclude]
        for name in dirnames + filenames:
            p = here / name
            st_ = os.lstat(p)
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st_.st_mode))
            else:
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
                out[rel] = ("file", stat.S_IMODE(st_.st_mode), st_.st_size, digest)
    return out


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.tmp = root / "session-tmp"
        self.outside = root / "outside"
        for d in (self.ws, self.tmp, self.outside, self.ws / "src", self.outside / "sub"):
            d.mkdir(parents=True, exist_ok=True)
        (self.ws / "a.txt").write_text(SEED_TEXT)
        (self.ws / "src" / "m.py").write_text(SEED_TEXT)
        (self.ws / ".env").write_text("KEY=hidden\n")
        (self.outside / "secret.txt").write_text(SECRET)
        (self.outside / "sub" / "deep.txt").write_text(SECRET)
        (self.ws / "link-out").symlink_to(self.outside, target_is_directory=True)
        (self.ws / "file-out").symlink_to(self.outside / "secret.txt")
        (self.ws / "dangling").symlink_to(self.outside / "not-yet.txt")
        self.registry = ToolRegistry(builtin_tools(FILE_TOOLS))
        self.exclude = {self.ws, self.tmp}
        self.before = snapshot(self.root, self.exclude)

    def context(self) -> ToolContext:
        ctx = ToolContext(env=SessionEnv(workspace=self.ws, temp_dir=self.tmp))
        ctx.env = dataclasses.replace(
            ctx.env,
            sandbox=SandboxPolicy(
                workspace=self.ws, temp_dir=self.tmp, forbid_read=(self.ws / ".env",)
            ),
        )
        ledger = FileLedger()
        # Pretend everything was read, so only the sandbox stands between a
        # write and the files outside.
        for f in (
            self.outside / "secret.txt",
            self.outside / "sub" / "deep.txt",
            self.ws / "a.txt",
            self.ws / "src" / "m.py",
        ):
            ledger.observe(f)
        ctx.ledger = ledger
        return ctx

    def run(self, name: str, raw: str) -> ToolResult:
        raw = fill(raw, self.ws, self.outside, self.tmp)
        ctx = self.context()

        async def main() -> ToolResult:
            with anyio.fail_after(60):
                return await self.registry.call(name, raw, ctx)

        return anyio.run(main)

    def check(self, name: str, result: ToolResult) -> None:
        assert isinstance(result, ToolResult)
        assert isinstance(result.text, str) and result.text
        # A tool answers hostile arguments itself; the registry's catch-all is for bugs.
        assert not result.text.startswith(f"internal error in {name}:"), result.text
        assert snapshot(self.root, self.exclude) == self.before, "something outside changed"
        # forbid_read: neither the content nor the name of .env is ever listed.
        assert "KEY=hidden" not in result.text
        if not result.is_error:
            for line in result.text.splitlines():
                assert not (line == ".env" or line.startswith((".env:", ".env "))), result.text


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    # Keep walks of large trees (e.g. a pattern rooted at "/") short.
    monkeypatch.setattr(glob_mod, "TIME_BUDGET_SECONDS", 0.3)
    monkeypatch.setattr(grep_mod, "TIME_BUDGET_SECONDS", 0.3)
    monkeypatch.setattr(ls_mod, "TIME_BUDGET_SECONDS", 0.3)
    return World(tmp_path / "prop")


SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)

SCHEMAS = {tool.name: tool.parameters for tool in builtin_tools(FILE_TOOLS)}


@pytest.mark.parametrize("name", FILE_TOOLS)
@SETTINGS
@given(data=st.data())
def test_random_arguments_never_raise_or_escape(
    world: World, name: str, data: st.DataObject
) -> None:
    raw = data.draw(arguments(SCHEMAS[name]), label="arguments")
    result = world.run(name, raw)
    world.check(name, result)


@SETTINGS
@given(
    path=st.sampled_from([p for p in TRAVERSAL if "outside" in p or p.startswith(("/", "~"))]),
    content=weird_text,
)
def test_traversal_writes_are_refused(world: World, path: str, content: str) -> None:
    for name, args in (
        ("write_file", {"path": path, "content": content}),
        ("edit_file", {"path": path, "old_string": "alpha", "new_string": content or "z"}),
        (
            "multi_edit",
            {"path": path, "edits": [{"old_string": "alpha", "new_string": content or "z"}]},
        ),
        ("move_file", {"source_path": "a.txt", "destination_path": path}),
        ("move_file", {"source_path": path, "destination_path": "moved.txt"}),
    ):
        result = world.run(name, json.dumps(args))
        world.check(name, result)
        assert result.is_error, (name, args, result.text)


@SETTINGS
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["write_file", "edit_file", "move_file", "read_file"]),
            st.sampled_from(["a.txt", "src/m.py", "b.txt", "src/new.py", "link-out/x"]),
            st.sampled_from(["alpha", "beta", "gamma\n", "delta"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_operation_sequences_stay_inside(world: World, ops: list[tuple[str, str, str]]) -> None:
    for name, path, text in ops:
        if name == "write_file":
            args: dict[str, Any] = {"path": path, "content": text}
        elif name == "edit_file":
            args = {"path": path, "old_string": text, "new_string": text.upper()}
        elif name == "move_file":
            args = {"source_path": path, "destination_path": f"moved/{text.strip()}"}
        else:
            args = {"path": path}
        world.check(name, world.run(name, json.dumps(args)))
