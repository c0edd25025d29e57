"""delete_range, delete_symbol and notebook_edit: real files in a temp workspace, the
observation contract (not observed, stale), ranges, symlinks leading out, ambiguous
symbols, and notebooks that stay valid nbformat 4."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.base import ToolResult
from reasonix_core.tool.builtin.notebook_edit import check_notebook
from reasonix_core.tool.env import SessionEnv

TOOLS = ["read_file", "delete_range", "delete_symbol", "notebook_edit"]

SOURCE = """\
import functools


def helper(x):
    return x + 1


@functools.cache
@staticmethod
def cached(y):
    return y


class Shape:
    def area(self):
        return 0

    def helper(self):
        return 1


class Circle:
    def area(self):
        return 3


class Only:
    def lonely(self):
        return 2
"""


@dataclass
class Env:
    ws: Path
    outside: Path
    ctx: ToolContext
    registry: ToolRegistry

    async def call(self, name: str, **args: Any) -> ToolResult:
        return await self.registry.call(name, json.dumps(args), self.ctx)

    async def read(self, path: str) -> None:
        result = await self.call("read_file", path=path)
        assert not result.is_error, result.text


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    ws, tmp, outside = tmp_path / "ws", tmp_path / "tmp", tmp_path / "outside"
    for d in (ws, tmp, outside):
        d.mkdir()
    yield Env(
        ws,
        outside,
        ToolContext(env=SessionEnv(workspace=ws, temp_dir=tmp)),
        ToolRegistry(builtin_tools(TOOLS)),
    )


def _error(result: ToolResult, fragment: str) -> None:
    assert result.is_error, result.text
    assert fragment in result.text, result.text


async def test_delete_range_contract(env: Env) -> None:
    f = env.ws / "a.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\nfour")
    _error(
        await env.call("delete_range", path="a.txt", start_line=2, end_line=3), "FS_NOT_OBSERVED"
    )
    await env.read("a.txt")
    _error(await env.call("delete_range", path="a.txt", start_line=3, end_line=9), "out of range")
    _error(await env.call("delete_range", path="a.txt", start_line=3, end_line=2), "before")
    done = await env.call("delete_range", path="a.txt", start_line=2, end_line=3)
    assert not done.is_error, done.text
    assert f.read_bytes() == b"one\r\nfour"  # CRLF and the missing final newline kept
    # The write counts as a read; an outside change makes it stale.
    f.write_bytes(b"one\r\nFOUR")
    _error(
        await env.call("delete_range", path="a.txt", start_line=1, end_line=1), "FS_STALE_VERSION"
    )
    assert f.read_bytes() == b"one\r\nFOUR"


async def test_delete_range_refuses_a_symlink_leading_out(env: Env) -> None:
    secret = env.outside / "secret.txt"
    secret.write_text("keep\nme\n")
    (env.ws / "link.txt").symlink_to(secret)
    (env.ws / "dir").symlink_to(env.outside, target_is_directory=True)
    for path in ("link.txt", "dir/secret.txt", str(secret), "../outside/secret.txt"):
        result = await env.call("delete_range", path=path, start_line=1, end_line=1)
        assert result.is_error, (path, result.text)
    assert secret.read_text() == "keep\nme\n"


async def test_delete_symbol_spans_decorators_and_methods(env: Env) -> None:
    f = env.ws / "m.py"
    f.write_text(SOURCE)
    _error(await env.call("delete_symbol", path="m.py", symbol="cached"), "FS_NOT_OBSERVED")
    await env.read("m.py")
    ambiguous = await env.call("delete_symbol", path="m.py", symbol="area")
    _error(ambiguous, "ambiguous")
    assert "Shape.area (lines 15-16)" in ambiguous.text
    assert "Circle.area (lines 23-24)" in ambiguous.text
    _error(await env.call("delete_symbol", path="m.py", symbol="nothing"), "no function or class")
    done = await env.call("delete_symbol", path="m.py", symbol="cached")
    assert not done.is_error, done.text
    assert "deleted function cached (lines 8-11)" in done.text
    text = f.read_text()
    assert "functools.cache" not in text and "staticmethod" not in text and "def cached" not in text
    method = await env.call("delete_symbol", path="m.py", symbol="Shape.helper")
    assert not method.is_error, method.text
    assert "return 1" not in f.read_text() and "def area" in f.read_text()
    # The only method of a class: deleting it would leave an empty body.
    _error(await env.call("delete_symbol", path="m.py", symbol="Only.lonely"), "invalid")
    assert "def lonely" in f.read_text()
    # A bare name that is also a dotted path (top level) names that definition.
    top = await env.call("delete_symbol", path="m.py", symbol="helper")
    assert not top.is_error and "def helper(x)" not in f.read_text(), top.text
    f.write_text(f.read_text() + "\n")
    _error(await env.call("delete_symbol", path="m.py", symbol="Circle.area"), "FS_STALE_VERSION")


async def test_delete_symbol_refuses_other_languages_and_broken_python(env: Env) -> None:
    (env.ws / "a.js").write_text("function f() {}\n")
    await env.read("a.js")
    _error(await env.call("delete_symbol", path="a.js", symbol="f"), "only Python files")
    assert (env.ws / "a.js").read_text() == "function f() {}\n"
    (env.ws / "b.py").write_text("def f(:\n")
    await env.read("b.py")
    _error(await env.call("delete_symbol", path="b.py", symbol="f"), "does not parse")


def _notebook(minor: int = 5) -> dict[str, Any]:
    cells = [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n"]},
        {
            "cell_type": "code",
            "id": "calc",
            "metadata": {"tags": ["x"]},
            "execution_count": 3,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["4\n"]}],
            "source": ["print(2 + 2)\n"],
        },
    ]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


async def test_notebook_edit_replace_insert_delete(env: Env) -> None:
    nb_path = env.ws / "n.ipynb"
    nb_path.write_text(json.dumps(_notebook()))
    args = {"path": "n.ipynb", "operation": "replace", "cell_id": "calc", "source": "x = 1\ny = 2"}
    _error(await env.call("notebook_edit", **args), "FS_NOT_OBSERVED")
    await env.read("n.ipynb")
    assert not (result := await env.call("notebook_edit", **args)).is_error, result.text
    nb = json.loads(nb_path.read_text())
    calc = nb["cells"][1]
    assert calc["source"] == ["x = 1\n", "y = 2"] and calc["outputs"] == []
    assert calc["execution_count"] is None and calc["id"] == "calc"
    assert calc["metadata"] == {"tags": ["x"]}
    inserted = await env.call(
        "notebook_edit",
        path="n.ipynb",
        operation="insert",
        index=2,
        source="Done",
        cell_type="markdown",
    )
    assert not inserted.is_error, inserted.text
    deleted = await env.call("notebook_edit", path="n.ipynb", operation="delete", index=0)
    assert not deleted.is_error, deleted.text
    nb = json.loads(nb_path.read_text())
    assert [c["cell_type"] for c in nb["cells"]] == ["code", "markdown"]
    assert len({c["id"] for c in nb["cells"]}) == 2
    check_notebook(nb, "n.ipynb")  # still valid nbformat 4


async def test_notebook_edit_contract_cases(env: Env) -> None:
    nb_path = env.ws / "n.ipynb"
    nb_path.write_text(json.dumps(_notebook()))
    await env.read("n.ipynb")
    before = nb_path.read_bytes()
    out = await env.call("notebook_edit", path="n.ipynb", operation="delete", index=2)
    _error(out, "out of range")
    _error(
        await env.call("notebook_edit", path="n.ipynb", operation="delete", cell_id="zz"), "no cell"
    )
    both = await env.call(
        "notebook_edit", path="n.ipynb", operation="delete", index=0, cell_id="calc"
    )
    _error(both, "exactly one")
    _error(await env.call("notebook_edit", path="n.ipynb", operation="insert", index=0), "source")
    assert nb_path.read_bytes() == before
    # A file that is not nbformat 4 is refused, not rewritten.
    bad = env.ws / "bad.ipynb"
    bad.write_text(
        json.dumps(
            {"cells": [{"cell_type": "weird"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        )
    )
    await env.read("bad.ipynb")
    _error(
        await env.call("notebook_edit", path="bad.ipynb", operation="delete", index=0),
        "not a valid nbformat 4",
    )
    # Stale: changed on disk after the read.
    nb_path.write_text(json.dumps(_notebook(4)))
    _error(
        await env.call("notebook_edit", path="n.ipynb", operation="delete", index=0),
        "FS_STALE_VERSION",
    )
    # A symlink leading out of the workspace.
    target = env.outside / "o.ipynb"
    target.write_text(json.dumps(_notebook()))
    os.symlink(target, env.ws / "o.ipynb")
    assert (await env.call("notebook_edit", path="o.ipynb", operation="delete", index=0)).is_error
    assert json.loads(target.read_text()) == _notebook()
