"""`reasonix acp`: session/resume, session/fork and session/close (the SDK's
unstable protocol), over a real `reasonix acp` subprocess and the package's client."""

from __future__ import annotations

import json

import pytest
from acp import RequestError, text_block

from reasonix_core.agent.session import list_sessions
from reasonix_testkit import Reply
from tests.conftest import write_config
from tests.core.test_acp import RecordingClient, agent


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _messages(cfg, index: int = -1) -> list[dict]:
    return json.loads(cfg.requests[index].body)["messages"]


async def _first_session(cfg, workspace) -> str:
    cfg.enqueue(Reply(content="first answer"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, init):
        caps = init.agent_capabilities.session_capabilities
        assert caps.resume is not None and caps.fork is not None and caps.close is not None
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("hello")])
    return new.session_id


async def test_resume_in_a_new_process_continues_without_a_replay(workspace, cfg):
    session_id = await _first_session(cfg, workspace)
    before = _messages(cfg)
    cfg.enqueue(Reply(content="resumed answer"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        resumed = await conn.resume_session(cwd=str(workspace), session_id=session_id)
        assert resumed.modes.current_mode_id == "ask"
        replayed = [k for k in client.kinds() if k != "available_commands_update"]
        response = await conn.prompt(session_id=session_id, prompt=[text_block("again")])
    assert replayed == []  # the client kept the conversation
    assert response.stop_reason == "end_turn" and client.text() == "resumed answer"
    after = _messages(cfg)
    assert after[: len(before)] == before  # append-only: the cached prefix holds
    assert [m["role"] for m in after[len(before) :]] == ["assistant", "user"]


async def test_fork_copies_the_conversation_and_leaves_the_original(workspace, cfg, home):
    session_id = await _first_session(cfg, workspace)
    before = _messages(cfg)
    cfg.enqueue(Reply(content="in the fork"), Reply(content="in the original"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        forked = await conn.fork_session(cwd=str(workspace), session_id=session_id)
        assert forked.session_id != session_id
        await conn.prompt(session_id=forked.session_id, prompt=[text_block("fork turn")])
        fork_request = _messages(cfg)
        await conn.resume_session(cwd=str(workspace), session_id=session_id)
        await conn.prompt(session_id=session_id, prompt=[text_block("original turn")])
        original_request = _messages(cfg)
        with pytest.raises(RequestError):
            await conn.fork_session(cwd=str(workspace), session_id="20990101-000000-nope")
    # The fork's first request extends the original's conversation byte for byte.
    assert fork_request[: len(before)] == before
    assert fork_request[-1]["content"].startswith("fork turn")
    # The original did not get the fork's turn.
    assert original_request[: len(before)] == before
    assert all("fork turn" not in (m.get("content") or "") for m in original_request)
    ids = {s.id for s in list_sessions(home / "sessions", workspace.resolve())}
    assert {session_id, forked.session_id} <= ids


async def test_close_ends_the_session(workspace, cfg):
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.close_session(session_id=new.session_id)
        with pytest.raises(RequestError):
            await conn.prompt(session_id=new.session_id, prompt=[text_block("still there?")])


async def test_the_prompt_response_carries_the_turns_usage(workspace, cfg):
    from reasonix_testkit import ToolCallSpec

    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="it says alpha"),
    )
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("read")])
        status = await conn.prompt(session_id=new.session_id, prompt=[text_block("/status")])
    usage = response.usage
    updates = client.of("usage_update")
    assert len(updates) == 2  # one per request, beside the turn's total here
    meta = [u.field_meta["reasonix"] for u in updates]
    hits = sum(m["cache_hit_tokens"] for m in meta)
    misses = sum(m["cache_miss_tokens"] for m in meta)
    assert usage.input_tokens == hits + misses and usage.cached_read_tokens == hits > 0
    assert usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert status.usage is None  # /status asked no model
