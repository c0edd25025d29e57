"""Paging a bounded tool result (issue 19 item 2, seed 000 §3.6): a result too long
for the transcript keeps its full copy with the session, and the model reads it
page by page through ``use_capability`` (``session:tool_result``), each page a new
tool result, so the prompt prefix stays append-only. Real sessions at the loopback
fixture; a subagent pages only its own results; ``-c`` pages what the earlier run
kept."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from reasonix_core import events as ev
from reasonix_core.messages import Message
from reasonix_core.metrics import MetricsSink
from reasonix_core.tool.base import ToolContext, current_transcript
from reasonix_core.tool.capability import UseCapabilityTool
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.kept_results import (
    FULL_CONTENT,
    KEPT_LIMIT,
    PAGE_LIMIT,
    RESULT_HEAD,
    RESULT_LIMIT,
    bound_result,
    page_call,
)
from reasonix_testkit import Reply, ToolCallSpec
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages
from tests.core.subagent_helpers import install, requests_of

pytestmark = pytest.mark.usefixtures("configured")

BIG_CALL = "call_big"


def write_big(workspace: Path, name: str = "big.txt") -> None:
    """~200 KB: 2000 numbered lines, each line different, so any slip shows."""
    lines = (f"line {i:05d} " + "abcdefghij"[i % 10] * 88 + "\n" for i in range(2000))
    (workspace / name).write_text("".join(lines))


def read(path: str, call_id: str) -> Reply:
    return Reply(tool_calls=[ToolCallSpec("read_file", json.dumps({"path": path}), id=call_id)])


def page(call_id: str, offset: Any, **extra: Any) -> Reply:
    arguments = {"call_id": call_id, "offset": offset, **extra}
    body = {"action": "call", "name": "session:tool_result", "arguments": arguments}
    return Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(body))])


def capability(**body: Any) -> Reply:
    return Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(body))])


def finished(events: list[ev.Event]) -> list[ev.ToolCallFinished]:
    return [e for e in events if isinstance(e, ev.ToolCallFinished)]


def page_body(text: str) -> str:
    header, newline, body = text.partition("\n")
    assert header.startswith("[characters ") and newline, text[:200]
    return body


def kept(messages: list[dict[str, Any]], call_id: str) -> str:
    message = next(m for m in messages if m.get("tool_call_id") == call_id)
    return message["meta"][FULL_CONTENT]


def assert_append_only(requests: list[dict[str, Any]]) -> None:
    """Each request starts with every byte of the one before: same tools, and the
    earlier messages serialised identically."""
    enc = lambda ms: json.dumps(ms, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    for before, after in zip(requests, requests[1:], strict=False):
        assert after["tools"] == before["tools"]
        n = len(before["messages"])
        assert enc(after["messages"][:n]) == enc(before["messages"])


async def test_the_model_pages_a_200_kb_result_in_three_calls_and_the_prefix_stays_append_only(
    workspace, server
):
    write_big(workspace)
    second, third = RESULT_HEAD + PAGE_LIMIT, RESULT_HEAD + 2 * PAGE_LIMIT
    server.enqueue(
        read("big.txt", BIG_CALL),
        # The offsets the bounded result names: where the omitted middle starts, then on.
        page(BIG_CALL, RESULT_HEAD),
        page(BIG_CALL, second),
        page(BIG_CALL, third),
        Reply(content="read it"),
    )
    # The default mode and a fail-closed approver: a page that asked would be denied.
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read big.txt")
        full = kept(session_messages(rt), BIG_CALL)
    assert len(full) > 200_000 and "line 01999" in full
    sent = bodies(server)
    bounded = sent[1]["messages"][-1]["content"]
    # The bounded result says how to page it: the call id, the size, the exact call.
    assert f"of {len(full)} characters omitted" in bounded
    assert page_call(BIG_CALL, RESULT_HEAD) in bounded
    results = finished(events)
    assert [e.name for e in results] == ["read_file"] + ["use_capability"] * 3
    assert not any(e.is_error for e in results)
    pages = [m["content"] for m in sent[4]["messages"] if m["role"] == "tool"][1:]
    assert all(len(p) <= RESULT_LIMIT for p in pages)  # a page is never bounded again
    assert pages[0].startswith(
        f"[characters {RESULT_HEAD} to {second} of {len(full)}; next offset {second}]\n"
    )
    assert "".join(page_body(p) for p in pages) == full[RESULT_HEAD : RESULT_HEAD + 3 * PAGE_LIMIT]
    # Paging appended tool results only: no byte of any earlier request changed.
    assert_append_only(sent)
    assert not [e for e in events if isinstance(e, ev.PrefixChanged)]
    sink = MetricsSink()
    for event in events:
        sink.record(event)
    assert sink.finish("success").cache_breaks == []


async def test_the_pages_of_a_whole_result_join_back_to_exactly_the_original(workspace, server):
    write_big(workspace)
    server.enqueue(read("big.txt", BIG_CALL), Reply(content="bounded"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "read big.txt")
        full = kept(session_messages(rt), BIG_CALL)
        count = math.ceil(len(full) / PAGE_LIMIT)
        server.enqueue(
            *(page(BIG_CALL, i * PAGE_LIMIT) for i in range(count)), Reply(content="all read")
        )
        events = await run_turn(rt, "page all of it")
    pages = [e.result for e in finished(events)]
    assert len(pages) == count and not any(e.is_error for e in finished(events))
    assert "".join(page_body(p) for p in pages) == full
    assert pages[-1].splitlines()[0].endswith("; end of the result]")
    assert_append_only(bodies(server))


async def test_bad_pages_are_error_results_and_the_run_goes_on(workspace, server):
    write_big(workspace)
    (workspace / "small.txt").write_text("tiny\n")
    server.enqueue(
        read("big.txt", BIG_CALL),
        read("small.txt", "call_small"),
        page("call_nope", 0),  # no such call
        page("call_small", 0),  # a result that was not bounded
        page(BIG_CALL, 10_000_000),  # past the end
        page(BIG_CALL, -1),  # not an offset
        page(BIG_CALL, 0, limit=0),  # an empty page
        page(BIG_CALL, "x"),
        capability(action="call", name="session:tool_result", arguments={"offset": 0}),
        capability(action="call", name="session:nope", arguments={}),
        capability(action="call", name="mcp__gh__issue", arguments={}),
        page(BIG_CALL, 0, lines=10),  # not one of its arguments
        page(BIG_CALL, "100", limit=PAGE_LIMIT * 4),  # digits as text; the limit is capped
        capability(action="list"),
        capability(action="inspect", name="session:tool_result"),
        Reply(content="done"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "page badly")
        full = kept(session_messages(rt), BIG_CALL)
    results = finished(events)[2:]
    errors, capped, listing, inspected = results[:10], results[10], results[11], results[12]
    assert all(e.is_error for e in errors), [e.result for e in errors]
    texts = [e.result for e in errors]
    assert 'no tool result with call id "call_nope"' in texts[0]
    assert "was not bounded" in texts[1] and "call_small" in texts[1]
    assert "offset 10000000 is past the end" in texts[2] and str(len(full)) in texts[2]
    assert "offset must be an integer >= 0" in texts[3]
    assert "limit must be an integer >= 1" in texts[4]
    assert "offset must be an integer >= 0" in texts[5]
    assert "call_id must be" in texts[6]
    assert "no session capability 'session:nope'" in texts[7]
    assert "no MCP server is configured" in texts[8]
    assert "unknown argument 'lines'" in texts[9]
    assert not capped.is_error
    assert capped.result.startswith(f"[characters 100 to {100 + PAGE_LIMIT} of {len(full)};")
    assert page_body(capped.result) == full[100 : 100 + PAGE_LIMIT]
    assert "- session:tool_result [read-only]:" in listing.result
    assert '"call_id"' in inspected.result and str(PAGE_LIMIT) in inspected.result
    assert events[-1].text == "done"  # type: ignore[attr-defined]


async def test_a_continued_session_pages_what_the_earlier_run_kept(workspace, server):
    write_big(workspace)
    server.enqueue(read("big.txt", BIG_CALL), Reply(content="bounded"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "read big.txt")
        full = kept(session_messages(rt), BIG_CALL)
    # The file changes after the run: the page must come from the kept copy.
    (workspace / "big.txt").write_text("gone\n")
    server.enqueue(page(BIG_CALL, 50_000), Reply(content="paged"))
    async with runtime(workspace, continue_last=True) as rt:
        events = await run_turn(rt, "page it now")
    [result] = finished(events)
    assert not result.is_error
    assert page_body(result.result) == full[50_000 : 50_000 + PAGE_LIMIT]


CHILD = "CHILD-TASK: page results"


async def test_a_subagent_pages_its_own_results_never_its_parents(workspace, server):
    write_big(workspace)
    write_big(workspace, "child.txt")
    script = install(server)
    script.when(
        "PARENT-TASK",
        read("big.txt", "call_parent_big"),
        Reply(tool_calls=[ToolCallSpec("read_only_task", json.dumps({"prompt": CHILD}))]),
        Reply(content="parent done"),
    )
    script.when(
        CHILD,
        page("call_parent_big", 0),  # the parent's: not visible to the child
        read("child.txt", "call_child_big"),
        page("call_child_big", 0),
        Reply(content="child done"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "PARENT-TASK: delegate")
    assert events[-1].text == "parent done"  # type: ignore[attr-defined]
    child_results = [
        m["content"] for m in requests_of(server, CHILD)[-1].json["messages"] if m["role"] == "tool"
    ]
    assert 'no tool result with call id "call_parent_big"' in child_results[0]
    assert child_results[2].startswith("[characters 0 to ")
    assert page_body(child_results[2]).startswith("     1\tline 00000 a")


async def test_a_copy_beyond_the_kept_limit_is_cut_and_says_so(tmp_path):
    huge = "y" * (KEPT_LIMIT + 5000)
    text, meta = bound_result(huge, "call_huge")
    assert len(meta[FULL_CONTENT]) == KEPT_LIMIT and meta["full_chars"] == len(huge)
    assert f"only its first {KEPT_LIMIT} characters are kept" in text
    transcript = [Message(role="tool", tool_call_id="call_huge", content=text, meta=meta)]
    token = current_transcript.set(transcript)
    try:
        body = {"call_id": "call_huge", "offset": KEPT_LIMIT - 10}
        result = await UseCapabilityTool().execute(
            {"action": "call", "name": "session:tool_result", "arguments": body},
            ToolContext(env=SessionEnv(workspace=tmp_path, temp_dir=tmp_path)),
        )
    finally:
        current_transcript.reset(token)
    assert result.text.startswith(f"[characters {KEPT_LIMIT - 10} to {KEPT_LIMIT} of {len(huge)};")
    assert f"of {len(huge)} only the first {KEPT_LIMIT} were kept" in result.text


async def test_the_session_keeps_at_most_its_budget_of_full_copies(workspace, server):
    """Each kept copy is capped at KEPT_LIMIT, but a long session of large results
    must not grow the session file (and memory) without end: past the session's
    budget a bounded result is not kept, says so, and paging it says so too."""
    from reasonix_core.tool.kept_results import SESSION_KEPT_LIMIT

    # Long lines: read_file's result is then as large as it gets (about 256 KB).
    (workspace / "huge.txt").write_text(("z" * 499 + "\n") * 2000)
    batch, batches = 8, 10
    ids = [[f"call_huge_{b}_{i}" for i in range(batch)] for b in range(batches)]
    replies = [
        Reply(
            tool_calls=[
                ToolCallSpec("read_file", json.dumps({"path": "huge.txt", "offset": i + 1}), id=c)
                for i, c in enumerate(calls)
            ]
        )
        for calls in ids
    ]
    server.enqueue(*replies, page(ids[-1][-1], 0), Reply(content="ok"))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read it again and again")
        messages = session_messages(rt)
        size = rt.agent.session.path.stat().st_size
    kept_sizes = [len(m["meta"].get(FULL_CONTENT, "")) for m in messages if "meta" in m]
    assert sum(kept_sizes) > SESSION_KEPT_LIMIT * 3 // 4  # the budget was really reached
    assert sum(kept_sizes) <= SESSION_KEPT_LIMIT
    assert size < SESSION_KEPT_LIMIT + 8 * 1024 * 1024, size  # not a full copy per read
    last = next(m for m in messages if m.get("tool_call_id") == ids[-1][-1])
    assert FULL_CONTENT not in last["meta"]
    assert "not kept" in last["content"]
    paged = finished(events)[-1]
    assert paged.is_error and "not kept" in paged.result
    assert "already in the conversation" not in paged.result
