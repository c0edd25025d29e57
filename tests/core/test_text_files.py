"""The file tools over an editor's files (``SessionEnv.text_files``), without a
surface: the same contract as on disk, the editor's text in the file's place."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from reasonix_core.tool import builtin_tools
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.text_files import TextFilesError


class Editor:
    """Open buffers over the disk; a write lands in the buffer. Each call yields to
    the loop first, so concurrent calls interleave."""

    def __init__(self, buffers: dict[Path, str] | None = None) -> None:
        self.buffers = dict(buffers or {})
        self.calls: list[tuple[str, Path]] = []
        self.refuse: str = ""

    async def read_text(self, path: Path) -> str | None:
        await anyio.lowlevel.checkpoint()
        self.calls.append(("read", path))
        if path in self.buffers:
            return self.buffers[path]
        return path.read_text() if path.exists() else None

    async def write_text(self, path: Path, text: str) -> None:
        await anyio.lowlevel.checkpoint()
        self.calls.append(("write", path))
        if self.refuse:
            raise TextFilesError(self.refuse)
        self.buffers[path] = text


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


def _ctx(ws: Path, tmp_path: Path, editor: Editor) -> ToolContext:
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    return ToolContext(env=SessionEnv(workspace=ws, temp_dir=temp, text_files=editor))


async def _call(ctx: ToolContext, name: str, **args: object) -> ToolResult:
    (tool,) = [t for t in builtin_tools() if t.name == name]
    return await tool.execute(dict(args), ctx)


async def test_read_edit_edit_and_the_other_writers_go_through_the_editor(ws, tmp_path):
    target = ws / "f.py"
    target.write_text("disk\n")
    editor = Editor({target: "a = 1\nb = 2\nc = 3\n"})
    ctx = _ctx(ws, tmp_path, editor)
    assert "a = 1" in (await _call(ctx, "read_file", path="f.py")).text
    first = await _call(ctx, "edit_file", path="f.py", old_string="a = 1", new_string="a = 10")
    assert not first.is_error, first.text
    edits = [{"old_string": "b = 2", "new_string": "b = 20"}]
    second = await _call(ctx, "multi_edit", path="f.py", edits=edits)
    assert not second.is_error, second.text
    third = await _call(ctx, "delete_range", path="f.py", start_line=3, end_line=3)
    assert not third.is_error, third.text
    assert editor.buffers[target] == "a = 10\nb = 20\n"
    assert target.read_text() == "disk\n"  # the editor saves, not us
    assert first.meta["diff"] and "+a = 10" in first.meta["diff"]


async def test_concurrent_edits_are_serialised_and_none_is_lost(ws, tmp_path):
    target = ws / "f.txt"
    editor = Editor({target: "one\ntwo\n"})
    ctx = _ctx(ws, tmp_path, editor)
    await _call(ctx, "read_file", path="f.txt")
    results: list[ToolResult] = []

    async def edit(old: str, new: str) -> None:
        results.append(await _call(ctx, "edit_file", path="f.txt", old_string=old, new_string=new))

    async with anyio.create_task_group() as tg:
        tg.start_soon(edit, "one", "ONE")
        tg.start_soon(edit, "two", "TWO")
    # The lock orders them: the second sees the first's text (its own write refreshed
    # the observation), so both land.
    assert [r.is_error for r in results] == [False, False], [r.text for r in results]
    assert editor.buffers[target] == "ONE\nTWO\n"


async def test_a_buffer_changed_under_the_model_is_stale_and_a_refusal_is_an_error(ws, tmp_path):
    target = ws / "f.txt"
    editor = Editor({target: "v1\n"})
    ctx = _ctx(ws, tmp_path, editor)
    await _call(ctx, "read_file", path="f.txt")
    editor.buffers[target] = "v1 typed\n"
    stale = await _call(ctx, "write_file", path="f.txt", content="v2\n")
    assert stale.is_error and stale.meta["code"] == "FS_STALE_VERSION"
    await _call(ctx, "read_file", path="f.txt")
    editor.refuse = "the buffer is read-only"
    refused = await _call(ctx, "write_file", path="f.txt", content="v2\n")
    assert refused.is_error and "read-only" in refused.text
    assert editor.buffers[target] == "v1 typed\n"


async def test_missing_files_a_directory_and_paths_outside_keep_their_rules(ws, tmp_path):
    editor = Editor()
    ctx = _ctx(ws, tmp_path, editor)
    missing = await _call(ctx, "edit_file", path="nope.txt", old_string="a", new_string="b")
    assert missing.is_error and missing.meta["code"] == "FS_NOT_FOUND"
    (ws / "d").mkdir()
    folder = await _call(ctx, "read_file", path="d")
    assert folder.is_error and "directory" in folder.text
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (ws / "link.txt").symlink_to(outside)
    assert "outside" in (await _call(ctx, "read_file", path="link.txt")).text
    denied = await _call(ctx, "write_file", path=str(outside), content="x")
    assert denied.is_error and outside.read_text() == "outside\n"
    assert all(path != outside for _, path in editor.calls)
