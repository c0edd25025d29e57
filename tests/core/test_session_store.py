"""Session transcripts: append-only JSONL, newest-first listing, torn tails."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reasonix_core.agent.session import (
    SessionStore,
    list_sessions,
    new_session_id,
    open_session,
    read_session,
    workspace_key,
)
from reasonix_core.agent.transcript import UNKNOWN_OUTCOME, repair_messages
from reasonix_core.errors import SessionError
from reasonix_core.messages import Message, ToolCall
from tests.core.agent_helpers import session_header


def test_append_read_round_trip(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SessionStore.create(tmp_path / "sessions", ws, session_header("s1"))
    msgs = [
        Message(role="user", content="hi ✓"),
        Message(
            role="assistant",
            reasoning_content="r",
            tool_calls=(ToolCall(id="c1", name="ls", arguments='{ "path" : "." }'),),
        ),
        Message(role="tool", tool_call_id="c1", content="a\nb", meta={"outcome": "ok"}),
    ]
    for m in msgs:
        store.append(m)
    store.close()
    hdr, loaded = read_session(store.path)
    assert hdr.system_prompt == "sys"
    assert loaded == msgs
    assert loaded[1].tool_calls[0].arguments == '{ "path" : "." }'


def test_listing_is_newest_first_and_per_workspace(tmp_path: Path):
    ws, other = tmp_path / "a", tmp_path / "b"
    ws.mkdir()
    other.mkdir()
    root = tmp_path / "sessions"
    first = SessionStore.create(root, ws, session_header("20260101-000000-aaaaaa"))
    first.append(Message(role="user", content="first task"))
    second = SessionStore.create(root, ws, session_header("20260102-000000-bbbbbb"))
    second.append(Message(role="user", content="second task\n<workspace-context>x"))
    SessionStore.create(root, other, session_header("20260103-000000-cccccc"))
    import os

    os.utime(first.path, (1, 1))
    listed = list_sessions(root, ws)
    assert [s.id for s in listed] == ["20260102-000000-bbbbbb", "20260101-000000-aaaaaa"]
    assert listed[0].title == "second task"
    assert open_session(root, ws, None).header.id == "20260102-000000-bbbbbb"
    assert open_session(root, ws, "20260103-000000-cccccc").header.id == "20260103-000000-cccccc"
    with pytest.raises(SessionError):
        open_session(root, ws, "missing")


def test_torn_tail_is_ignored_then_cut_before_next_append(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SessionStore.create(tmp_path / "s", ws, session_header("s1"))
    store.append(Message(role="user", content="kept"))
    store.close()
    with store.path.open("a") as fh:
        fh.write('{"type":"message","mess')
    _, loaded = read_session(store.path)
    assert [m.content for m in loaded] == ["kept"]
    reopened = open_session(tmp_path / "s", ws, "s1").store
    reopened.append(Message(role="assistant", content="next"))
    reopened.close()
    lines = store.path.read_text().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["session", "message", "message"]


def test_corrupt_middle_line_is_an_error(tmp_path: Path):
    path = tmp_path / "x.jsonl"
    path.write_text(
        '{"type":"session","id":"x"}\nnot json\n{"type":"message","message":{"role":"user","content":"a"}}\n'
    )
    with pytest.raises(SessionError, match=":2:"):
        read_session(path)


def test_repair_answers_orphaned_calls_and_dangling_user_turns():
    calls = (
        ToolCall(id="a", name="ls", arguments="{}"),
        ToolCall(id="b", name="ls", arguments="{}"),
    )
    msgs = [
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=calls),
        Message(role="tool", tool_call_id="a", content="ok"),
    ]
    repairs = repair_messages(msgs)
    assert [(m.role, m.tool_call_id, m.content) for m in repairs] == [
        ("tool", "b", UNKNOWN_OUTCOME)
    ]
    dangling = repair_messages([Message(role="user", content="q")])
    assert dangling[0].role == "assistant"
    assert (
        repair_messages([Message(role="user", content="q"), Message(role="assistant", content="a")])
        == []
    )


def test_ids_and_keys_are_stable():
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert new_session_id(now).startswith("20261129-120000-")
    assert workspace_key(Path("/tmp/x")) == workspace_key(Path("/tmp/x"))
    assert workspace_key(Path("/tmp/x")) != workspace_key(Path("/tmp/y"))


def test_a_listed_session_counts_prompts_not_messages(tmp_path: Path):
    """Issue 30 item 7: /resume's "N turns" are the user's prompts; a turn's tool
    steps, the host's goal rounds and compaction summaries are not prompts."""
    from reasonix_core.messages import HOST_TURN

    ws = tmp_path / "ws"
    ws.mkdir()
    store = SessionStore.create(tmp_path / "sessions", ws, session_header("s2"))
    call = ToolCall(id="c1", name="ls", arguments="{}")
    for m in [
        Message(role="user", content="first"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id="c1", content="a", meta={"outcome": "ok"}),
        Message(role="assistant", content="done"),
        Message(role="user", content="Continue working", meta={HOST_TURN: True}),
        Message(role="assistant", content="more"),
        Message(role="user", content="summary", meta={"compaction": "summary"}),
        Message(role="user", content="second"),
        Message(role="assistant", content="ok"),
    ]:
        store.append(m)
    store.close()
    (listed,) = list_sessions(tmp_path / "sessions", ws)
    assert listed.messages == 9 and listed.prompts == 2
