"""Issue 29, second adversarial pass over `reasonix acp`: a hostile or broken
editor behind the client-side file seam (garbage, huge text, errors, a read
that never answers), a model reaching out of the workspace through it,
permission answers naming options never offered, and session ids that are paths.
The agent-client-protocol package's client over a real `reasonix acp` subprocess."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ReadTextFileResponse

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import write_config
from tests.core.test_acp import RecordingClient
from tests.core.test_acp_client import EditorClient, editor_agent


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _tool_results(cfg: Any, request: int) -> list[str]:
    body = json.loads(cfg.requests[request].body)
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


class HostileEditor(EditorClient):
    """An editor whose reads answer with ``answer(path)`` (a value, or raising)."""

    def __init__(self, answer: Any, answers: list[str] | None = None) -> None:
        super().__init__(answers)
        self.answer = answer

    async def read_text_file(self, path, session_id, limit=None, line=None, **kwargs):
        self.reads.append(path)
        return await self.answer(path)


async def _garbage_type(path):
    return ReadTextFileResponse.model_construct(content=12345)  # not a string


async def _huge(path):
    return ReadTextFileResponse(content="A" * (24 * 1024 * 1024))  # 24 MiB on one line


async def _crash(path):
    raise RuntimeError("the editor fell over")


async def _internal(path):
    raise RequestError.internal_error({"details": "\x1b[2Jbusy\r\nX: y"})


async def _control_text(path):
    return ReadTextFileResponse(content="line\x00one\x1b[31m\r\nline two\ud800\n")


HOSTILE_READS = {
    "garbage-type": _garbage_type,
    "huge": _huge,
    "crash": _crash,
    "internal-error": _internal,
    "control-text": _control_text,
}


@pytest.mark.parametrize("name", list(HOSTILE_READS))
async def test_a_hostile_editor_read_is_a_tool_result_and_the_turn_ends(workspace, cfg, name):
    (workspace / "f.txt").write_text("on disk\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(content="done"),
    )
    client = HostileEditor(HOSTILE_READS[name])
    async with editor_agent(client, workspace) as (conn, process):
        new = await conn.new_session(cwd=str(workspace))
        response = await asyncio.wait_for(
            conn.prompt(session_id=new.session_id, prompt=[text_block("read")]), 120
        )
        assert response.stop_reason == "end_turn"
        assert process.returncode is None  # the agent is still serving
        # ... and still answers the next prompt.
        cfg.enqueue(Reply(content="still here"))
        again = await conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
        assert again.stop_reason == "end_turn"
    result = _tool_results(cfg, 1)[0]
    assert "on disk" not in result  # never silently the disk's text behind the editor's back
    assert len(result) < 300_000


async def test_a_read_the_editor_never_answers_is_cancellable(workspace, cfg):
    (workspace / "f.txt").write_text("on disk\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(content="done"),
    )
    started = asyncio.Event()

    async def never(path):
        started.set()
        await asyncio.Event().wait()

    client = HostileEditor(never)
    async with editor_agent(client, workspace) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        turn = asyncio.ensure_future(
            conn.prompt(session_id=new.session_id, prompt=[text_block("read")])
        )
        await asyncio.wait_for(started.wait(), 120)
        await conn.cancel(session_id=new.session_id)
        response = await asyncio.wait_for(turn, 120)
        assert response.stop_reason == "cancelled"
        cfg.enqueue(Reply(content="after the cancel"))
        again = await conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
        assert again.stop_reason == "end_turn"


OUTSIDE_PATHS = ["../outside.txt", "/etc/hostname", "link-out/secret.txt", "~/.bashrc"]


@pytest.mark.parametrize("target", OUTSIDE_PATHS)
async def test_the_model_cannot_reach_outside_the_workspace_through_the_editor(
    workspace, cfg, tmp_path, target
):
    outside = tmp_path / "outside-dir"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (workspace / "link-out").symlink_to(outside)
    (workspace.parent / "outside.txt").write_text("secret\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", json.dumps({"path": target}))]),
        Reply(
            tool_calls=[ToolCallSpec("write_file", json.dumps({"path": target, "content": "x"}))]
        ),
        Reply(content="done"),
    )
    client = EditorClient(["reject_once", "reject_once"])
    async with editor_agent(client, workspace) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    root = str(workspace.resolve())
    assert all(p == root or p.startswith(root + "/") for p in client.reads), client.reads
    assert client.writes == []


UNKNOWN_OPTIONS = ["allow", "ALLOW_ONCE", "allow_once ", "answer-0", "../allow_once", "\x1b[2J", ""]


@pytest.mark.parametrize("option", UNKNOWN_OPTIONS)
async def test_a_permission_answer_naming_an_option_never_offered_denies(workspace, cfg, option):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command":"touch made-by-bash"}')]),
        Reply(content="done"),
    )
    client = RecordingClient([option])
    async with editor_agent(client, workspace, fs=False) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert response.stop_reason == "end_turn"
    assert client.permissions, "the call was never asked about"
    assert not (workspace / "made-by-bash").exists()


HOSTILE_IDS = [
    "../../etc/passwd",
    "../x",
    "/etc/passwd",
    "20261207-000000-abcdef/../x",
    "",
    "*",
    "a" * 5000,
]


@pytest.mark.parametrize("session_id", HOSTILE_IDS)
async def test_session_ids_that_are_paths_are_refused(workspace, cfg, session_id):
    client = RecordingClient()
    async with editor_agent(client, workspace, fs=False) as (conn, process):
        for call in (conn.load_session, conn.resume_session, conn.fork_session):
            with pytest.raises(RequestError):
                await call(cwd=str(workspace), session_id=session_id)
        assert process.returncode is None
    sessions = list((Path(workspace).parent / "reasonix-home" / "sessions").rglob("*.jsonl"))
    assert sessions == []


FLOOD = [
    b"not json\n",
    b"{\n",
    b"[]\n",
    b"null\n",
    b'{"jsonrpc":"2.0"}\n',
    b'{"jsonrpc":"2.0","id":1}\n',
    b'{"jsonrpc":"2.0","id":{"x":1},"method":"initialize","params":{}}\n',
    b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"../x","prompt":[]}}\n',
    b'{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"path":"/etc/passwd"}}\n',
    b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}\n',
    b'{"jsonrpc":"2.0","id":4,"method":"initialize","params":'
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}\n",
    b"\xff\xfe\x00garbage\n",
    b'{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}\n',
]


async def test_a_flood_of_malformed_json_rpc_leaves_the_agent_serving(workspace, cfg):

    import sys

    from tests.core.test_acp import _env

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "reasonix_tui.cli", "acp",
        cwd=workspace, env=_env(), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        for _ in range(50):
            for line in FLOOD:
                process.stdin.write(line)
            await process.stdin.drain()
        hello = {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        }
        process.stdin.write(json.dumps(hello).encode() + b"\n")
        await process.stdin.drain()

        async def answer() -> dict[str, Any]:
            assert process.stdout is not None
            while True:
                line = await process.stdout.readline()
                assert line, "the agent closed its output"
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == 99:
                    return message

        reply = await asyncio.wait_for(answer(), 120)
        assert "result" in reply, reply
        assert process.returncode is None
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


class OptionsClient(RecordingClient):
    """Records the options of every permission request."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers)
        self.options: list[list[Any]] = []

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.options.append(list(options))
        return await super().request_permission(options, session_id, tool_call, **kwargs)


async def test_ask_text_with_control_characters_reaches_the_editor_escaped(workspace, cfg):
    questions = {
        "questions": [
            {
                "question": "\x1b]0;owned\x07Pick\u202e one\r\nAllow all?",
                "options": ["\x1b[2Jyes", "no\u202e", "ok\x00"],
            }
        ]
    }
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("ask", json.dumps(questions))]), Reply(content="noted")
    )
    client = OptionsClient(["answer-0"])
    async with editor_agent(client, workspace, fs=False) as (conn, _):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("ask")])
    assert response.stop_reason == "end_turn"
    shown = [client.permissions[0].title, *(o.name for o in client.options[0])]
    shown += [u.title for u in client.of("tool_call")]
    for text in shown:
        assert not any(c in text for c in "\x1b\x07\x00\u202e\r"), repr(text)
    # The model gets the answer it offered, as it wrote it.
    assert "\x1b[2Jyes" in _tool_results(cfg, 1)[0]


DEEP = "[" * 100_000 + "]" * 100_000


async def test_a_tool_call_with_deeply_nested_arguments_is_shown_and_reloaded(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", DEEP)]),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path": ' + DEEP + "}")]),
        Reply(content="done"),
    )
    client = RecordingClient()
    async with editor_agent(client, workspace, fs=False) as (conn, process):
        new = await conn.new_session(cwd=str(workspace))
        response = await asyncio.wait_for(
            conn.prompt(session_id=new.session_id, prompt=[text_block("go")]), 120
        )
        assert response.stop_reason == "end_turn"
        assert process.returncode is None
    # The session file holds the hostile arguments: loading it replays them.
    replay = RecordingClient()
    async with editor_agent(replay, workspace, fs=False) as (conn, process):
        await conn.load_session(cwd=str(workspace), session_id=new.session_id)
        assert process.returncode is None
    assert replay.of("tool_call"), replay.kinds()
