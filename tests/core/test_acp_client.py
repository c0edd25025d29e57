"""`reasonix acp` with a client that offers its own capabilities: the editor's
files (``fs/read_text_file``, ``fs/write_text_file``). The agent-client-protocol
package's client over a real `reasonix acp` subprocess and the fixture model."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import write_config
from tests.core.test_acp import RecordingClient, _env


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


class EditorClient(RecordingClient):
    """An editor with open buffers: a buffer's unsaved text wins over the disk;
    a write lands in the buffer (the disk is the user's to save)."""

    def __init__(self, answers: list[str] | None = None, buffers: dict[Path, str] | None = None):
        super().__init__(answers)
        self.buffers = dict(buffers or {})
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.refuse_writes = False
        # (path, text): the user types this into the buffer when a command starts.
        self.typing: tuple[Path, str] | None = None

    async def session_update(self, session_id, update, **kwargs):
        await super().session_update(session_id, update, **kwargs)
        if self.typing and update.session_update == "tool_call" and update.kind == "execute":
            path, text = self.typing
            self.buffers[path] = text

    async def read_text_file(self, path, session_id, limit=None, line=None, **kwargs):
        self.reads.append(path)
        p = Path(path)
        if p in self.buffers:
            return ReadTextFileResponse(content=self.buffers[p])
        try:
            return ReadTextFileResponse(content=p.read_text())
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, content, path, session_id, **kwargs):
        if self.refuse_writes:
            raise RequestError.internal_error({"details": "the buffer is read-only"})
        self.writes.append((path, content))
        self.buffers[Path(path)] = content
        return WriteTextFileResponse()


@asynccontextmanager
async def editor_agent(client: RecordingClient, workspace: Path, *args: str, fs: bool = True):
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False
    )
    async with spawn_agent_process(
        client, sys.executable, "-m", "reasonix_tui.cli", "acp", *args,
        env=_env(), cwd=workspace,
    ) as (conn, process):  # fmt: skip
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        yield conn, process


def _tool_results(cfg: Any, request: int) -> list[str]:
    body = json.loads(cfg.requests[request].body)
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_reads_see_the_unsaved_buffer_and_edits_land_in_the_editor(workspace, cfg):
    target = workspace / "f.txt"
    target.write_text("on disk\n")
    buffer = "unsaved one\nunsaved two\n"
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(
            tool_calls=[
                ToolCallSpec(
                    "edit_file", '{"path":"f.txt","old_string":"unsaved two","new_string":"TWO"}'
                )
            ]
        ),
        Reply(content="done"),
    )
    client = EditorClient(["allow_once"], {target.resolve(): buffer})
    async with editor_agent(client, workspace) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
    assert response.stop_reason == "end_turn"
    # The model read the buffer, not the disk.
    assert "unsaved one" in _tool_results(cfg, 1)[0]
    assert "on disk" not in _tool_results(cfg, 1)[0]
    # The edit went to the editor's write handler; the disk is untouched.
    assert client.writes == [(str(target.resolve()), "unsaved one\nTWO\n")]
    assert target.read_text() == "on disk\n"
    assert _tool_results(cfg, 2)[-1].startswith("edited f.txt")
    # The update's diff is the editor's texts.
    edit = [u for u in client.of("tool_call") if u.kind == "edit"][0]
    done = [u for u in client.of("tool_call_update") if u.tool_call_id == edit.tool_call_id][-1]
    diff = [c for c in done.content if c.type == "diff"][0]
    assert diff.old_text == buffer and diff.new_text == "unsaved one\nTWO\n"


async def test_a_rejected_edit_never_reaches_the_editor(workspace, cfg):
    target = workspace / "f.txt"
    target.write_text("keep me\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"f.txt","content":"gone\\n"}')]),
        Reply(content="ok"),
    )
    client = EditorClient(["reject_once"])
    async with editor_agent(client, workspace) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
    assert client.writes == [] and target.read_text() == "keep me\n"
    assert client.reads == [str(target.resolve())]
    assert "denied" in _tool_results(cfg, 2)[-1]


async def test_the_file_contract_holds_in_the_editor(workspace, cfg):
    """Not observed, stale after the user typed, a new file created, the editor's
    refusal: the same FS_* results as on disk; nothing outside the workspace
    goes to the editor, and bash still runs on the disk."""
    target, outside = workspace / "f.txt", workspace.parent / "outside.txt"
    target.write_text("v1\n")
    outside.write_text("outside\n")
    (workspace / "link.txt").symlink_to(outside)  # inside by name, outside in fact
    edit = '{"path":"f.txt","old_string":"v1","new_string":"v2"}'
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("edit_file", edit)]),  # never read: FS_NOT_OBSERVED
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("bash", '{"command":"echo typed > /dev/null"}')]),
        Reply(tool_calls=[ToolCallSpec("edit_file", edit)]),  # the user typed: stale
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"new.txt","content":"n\\n"}')]),
        Reply(tool_calls=[ToolCallSpec("read_file", json.dumps({"path": str(outside)}))]),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"link.txt"}')]),
        Reply(content="done"),
    )
    client = EditorClient(buffers={target.resolve(): "v1\n"})
    # The user types into the buffer while bash runs (after the model's read).
    client.typing = (target.resolve(), "v1 and more\n")
    async with editor_agent(client, workspace, "--permission-mode", "yolo") as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    results = _tool_results(cfg, 7)
    assert results[0].startswith("FS_NOT_OBSERVED")
    assert results[3].startswith("FS_STALE_VERSION")
    assert results[4].startswith("created new.txt")
    assert "outside" in results[5] and "outside" in results[6]
    assert client.writes == [(str((workspace / "new.txt").resolve()), "n\n")]
    assert not (workspace / "new.txt").exists()  # in the editor's buffer only
    assert (
        client.reads == [str(target.resolve())] * 3 + [str((workspace / "new.txt").resolve())] * 2
    )


async def test_an_editor_refusal_is_the_calls_error(workspace, cfg):
    (workspace / "f.txt").write_text("x\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"f.txt","content":"y\\n"}')]),
        Reply(content="ok"),
    )
    client = EditorClient()
    client.refuse_writes = True
    async with editor_agent(client, workspace, "--permission-mode", "yolo") as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    result = _tool_results(cfg, 2)[-1]
    assert "the editor could not write f.txt" in result and "read-only" in result
    assert (workspace / "f.txt").read_text() == "x\n"


async def test_without_the_capability_files_stay_on_disk(workspace, cfg):
    (workspace / "f.txt").write_text("disk\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(content="ok"),
    )
    client = EditorClient(buffers={(workspace / "f.txt").resolve(): "buffer\n"})
    async with editor_agent(client, workspace, fs=False) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert client.reads == [] and "disk" in _tool_results(cfg, 1)[0]


_QUESTIONS = json.dumps(
    {
        "questions": [
            {"question": "Which database?", "options": ["sqlite", "postgres"]},
            {"question": "Add tests?", "options": ["yes", "no", "later"]},
        ]
    }
)


async def test_ask_questions_are_permission_requests_and_the_model_gets_the_answers(workspace, cfg):
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("ask", _QUESTIONS)]), Reply(content="noted"))
    client = RecordingClient(["answer-1", "answer-0"])
    async with editor_agent(client, workspace, fs=False) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("plan it")])
    assert response.stop_reason == "end_turn"
    first, second = client.permissions
    assert first.title == "Question (1/2): Which database?" and first.kind == "think"
    call = client.of("tool_call")[0]
    assert first.tool_call_id == second.tool_call_id == call.tool_call_id
    result = _tool_results(cfg, 1)[0]
    assert result == "Q: Which database?\nA: postgres\nQ: Add tests?\nA: yes"


@pytest.mark.parametrize("answer", ["decline", "cancelled", "answer-7"])
async def test_a_declined_question_tells_the_model(workspace, cfg, answer):
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("ask", _QUESTIONS)]), Reply(content="assuming"))
    client = RecordingClient([answer])
    async with editor_agent(client, workspace, fs=False) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("plan it")])
    assert len(client.permissions) == 1  # the second question is not asked
    assert _tool_results(cfg, 1)[0].startswith("The user declined to answer")


async def test_forbid_read_and_a_path_outside_are_never_asked_of_the_editor(workspace, cfg, home):
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace(
            "[sandbox]\n", f'[sandbox]\nforbid_read = ["{workspace}/secret"]\n'
        )
    )
    (workspace / "secret").mkdir()
    (workspace / "secret" / "key.txt").write_text("hunter2\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"secret/key.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"secret/new.txt","content":"x"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"../escape.txt","content":"x"}')]),
        Reply(content="ok"),
    )
    client = EditorClient(buffers={(workspace / "secret" / "key.txt").resolve(): "buffer secret"})
    async with editor_agent(client, workspace, "--permission-mode", "yolo") as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    results = _tool_results(cfg, 3)
    assert all("hunter2" not in r and "buffer secret" not in r for r in results)
    assert "forbid_read" in results[0] and "forbid_read" in results[1]
    assert results[2].startswith(("PATH_DENIED", "path denied"))
    assert client.reads == [] and client.writes == []
    assert not (workspace.parent / "escape.txt").exists()
