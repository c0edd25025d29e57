"""The agent-loop contract of seed 003, against the loopback fixture server.

Every test drives the real Agent over real HTTP: the server is strict like
DeepSeek (it answers 400 when an earlier assistant turn lacks
``reasoning_content`` in a tool request, or a tool call goes unanswered).
"""

from __future__ import annotations

import json
from contextlib import aclosing

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.agent.transcript import UNKNOWN_OUTCOME
from reasonix_testkit import HttpError, Reply, ToolCallSpec
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages

pytestmark = pytest.mark.usefixtures("configured")


def kinds(events: list[ev.Event]) -> list[str]:
    return [e.kind for e in events]


async def test_clean_final_makes_exactly_one_request(workspace, server):
    server.enqueue(Reply(content="the answer"))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "question")
    assert len(server.requests) == 1
    assert isinstance(events[-1], ev.TurnFinished)
    assert events[-1].text == "the answer"
    assert events[-1].stop_reason == "stop"
    messages = session_messages(rt)
    assert messages[-1]["role"] == "assistant"
    assert messages[-1]["content"] == "the answer"


async def test_tool_call_advances_to_next_step_with_exactly_two_requests(workspace, server):
    (workspace / "notes.txt").write_text("hello from the file\n")
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "notes.txt"}')], reasoning="look"),
        Reply(content="all set"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read it")
    assert len(server.requests) == 2
    assert all(r.status == 200 for r in server.requests)
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert len(finished) == 1 and "hello from the file" in finished[0].result
    second = bodies(server)[1]["messages"]
    tool_msgs = [m for m in second if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and "hello from the file" in tool_msgs[0]["content"]
    # The strict server would have refused a missing key; check it is the stored text.
    assistant = [m for m in second if m["role"] == "assistant"][0]
    assert assistant["reasoning_content"] == "look"
    assert events[-1].text == "all set"


async def test_arguments_replayed_as_exact_string(workspace, server):
    (workspace / "a.txt").write_text("x\n")
    raw = '{ "path" :"a.txt"  }'
    server.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", raw)]), Reply(content="ok"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "go")
    second = bodies(server)[1]["messages"]
    call = [m for m in second if m["role"] == "assistant"][0]["tool_calls"][0]
    assert call["function"]["arguments"] == raw
    assert (
        raw.encode() in server.requests[1].body
        or json.dumps(raw)[1:-1].encode() in server.requests[1].body
    )


async def test_clean_final_adds_no_synthetic_continuation(workspace, server):
    server.enqueue(Reply(content="I will handle it next round."))
    async with runtime(workspace) as rt:
        await run_turn(rt, "do the thing")
    assert len(server.requests) == 1
    roles = [m["role"] for m in session_messages(rt)]
    assert roles == ["user", "assistant"]


async def test_retry_replays_frozen_request_byte_for_byte(workspace, server):
    server.enqueue(HttpError(503, "Server Overloaded", type="server_error"), Reply(content="fine"))
    sleeps: list[float] = []
    async with runtime(workspace, record_sleeps=sleeps) as rt:
        events = await run_turn(rt, "hi")
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body
    assert "retrying" in kinds(events)
    assert events[-1].text == "fine"
    assert len(sleeps) == 1


async def test_dropped_stream_is_retried_with_the_same_bytes(workspace, server):
    server.enqueue(Reply(content="partial answer that drops", drop_after=2), Reply(content="whole"))
    async with runtime(workspace, record_sleeps=[]) as rt:
        events = await run_turn(rt, "hi")
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body
    assert events[-1].text == "whole"
    assistant = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == ["whole"]


async def test_thinking_survives_unified_retry(workspace, server):
    server.enqueue(Reply(), Reply(reasoning="need to think", content="the answer"))
    async with runtime(workspace, record_sleeps=[], effort="high") as rt:
        events = await run_turn(rt, "q")
    assert len(server.requests) == 2
    first, second = bodies(server)
    assert first == second
    assert first["thinking"] == {"type": "enabled"} and first["reasoning_effort"] == "high"
    assert server.requests[0].body == server.requests[1].body
    assistant = session_messages(rt)[-1]
    assert assistant["reasoning_content"] == "need to think"
    assert assistant["content"] == "the answer"
    assert events[-1].text == "the answer"


async def test_retry_exhaustion_leaves_no_fallback_state(workspace, server):
    server.enqueue(Reply(), Reply(), Reply(), Reply())
    sleeps: list[float] = []
    async with runtime(workspace, record_sleeps=sleeps) as rt:
        events = await run_turn(rt, "q")
        assert isinstance(events[-1], ev.TurnFailed)
        assert events[-1].kind == "empty_response"
        assert len(server.requests) == 4
        # Nothing empty was committed: only the honest closing marker (issue 14, item 5).
        from reasonix_core.agent.transcript import FAILED_MARK

        assert [m["role"] for m in session_messages(rt)] == ["user", "assistant"]
        assert session_messages(rt)[-1]["content"] == FAILED_MARK
        assert session_messages(rt)[-1]["meta"]["failure"]  # what the user saw, kept
        server.enqueue(Reply(content="recovered"))
        events = await run_turn(rt, "again")
    assert len(server.requests) == 5
    assert events[-1].text == "recovered"
    first, last = bodies(server)[0], bodies(server)[-1]
    for key in ("model", "tools", "stream_options"):
        assert first.get(key) == last.get(key)
    assert first.get("thinking") == last.get("thinking")


async def test_reasoning_only_final_is_accepted(workspace, server):
    server.enqueue(Reply(reasoning="the whole answer is in my head"))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "q")
    assert len(server.requests) == 1
    assert isinstance(events[-1], ev.TurnFinished)
    assistant = session_messages(rt)[-1]
    assert assistant["reasoning_content"] == "the whole answer is in my head"


async def test_empty_response_is_never_committed(workspace, server):
    server.enqueue(Reply(), Reply(content="now something"))
    async with runtime(workspace, record_sleeps=[]) as rt:
        await run_turn(rt, "q")
    assistant = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == ["now something"]


async def test_429_honours_retry_after_and_5xx_back_off_exponentially(workspace, server):
    server.enqueue(
        HttpError(429, "Rate Limit Reached", type="rate_limit_error", retry_after=2),
        HttpError(500, "Server Error", type="server_error"),
        HttpError(502, "Bad Gateway", type="server_error"),
        Reply(content="finally"),
    )
    sleeps: list[float] = []
    async with runtime(workspace, record_sleeps=sleeps) as rt:
        events = await run_turn(rt, "q")
    assert events[-1].text == "finally"
    assert len(server.requests) == 4
    assert sleeps[0] == 2.0
    # base 0.01, capped at 0.05, jitter subtracts at most 25 %
    assert 0.0075 * 2 <= sleeps[1] <= 0.02 + 1e-9
    assert 0.03 <= sleeps[2] <= 0.04 + 1e-9
    assert len({r.body for r in server.requests}) == 1


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "The reasoning_content in the thinking mode must be passed back to the API."),
        (401, "Authentication Fails, Your api key: ****sbNR is invalid"),
        (402, "Insufficient Balance"),
        (422, "Failed to deserialize the JSON body into the target type: thinking"),
    ],
)
async def test_4xx_fails_at_once_with_the_providers_message(workspace, server, status, message):
    server.enqueue(HttpError(status, message))
    sleeps: list[float] = []
    async with runtime(workspace, record_sleeps=sleeps) as rt:
        events = await run_turn(rt, "q")
    assert len(server.requests) == 1
    assert sleeps == []
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed)
    assert failed.status == status
    assert message in failed.error


async def test_insufficient_system_resource_is_retried(workspace, server):
    server.enqueue(
        Reply(content="cut", finish_reason="insufficient_system_resource"), Reply(content="ok")
    )
    async with runtime(workspace, record_sleeps=[]) as rt:
        events = await run_turn(rt, "q")
    assert len(server.requests) == 2
    assert events[-1].text == "ok"


async def test_cancel_mid_stream_leaves_a_valid_transcript(workspace, server):
    server.enqueue(Reply(content="a long answer " * 40, chunk_size=4, delay=0.02))
    async with runtime(workspace) as rt:
        seen: list[ev.Event] = []
        with anyio.move_on_after(60):  # a hang guard: the cancel comes from the events
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    async with aclosing(rt.agent.run("talk")) as events:
                        async for event in events:
                            seen.append(event)
                            if isinstance(event, ev.TextDelta) and len(seen) > 5:
                                tg.cancel_scope.cancel()

                tg.start_soon(consume)
        assert any(isinstance(e, ev.TextDelta) for e in seen)
        assert not any(isinstance(e, ev.TurnFinished) for e in seen)
        last = session_messages(rt)[-1]
        assert last["role"] == "assistant" and "interrupted" in last["content"]
        server.enqueue(Reply(content="still here"))
        events = await run_turn(rt, "continue")
    assert server.requests[-1].status == 200
    assert events[-1].text == "still here"


async def test_cancel_mid_tool_repairs_the_tool_turn(workspace, server):
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command": "sleep 20"}')]),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        started = anyio.Event()
        with anyio.move_on_after(60):  # a hang guard: the cancel comes from the events
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    async with aclosing(rt.agent.run("run it")) as events:
                        async for event in events:
                            if isinstance(event, ev.ToolCallStarted):
                                started.set()

                tg.start_soon(consume)
                await started.wait()
                await anyio.sleep(0.5)  # bash is now running `sleep 20`
                tg.cancel_scope.cancel()
        messages = session_messages(rt)
        assert messages[-1]["role"] == "tool"
        assert messages[-1]["content"] == UNKNOWN_OUTCOME
        server.enqueue(Reply(content="ok then"))
        events = await run_turn(rt, "what happened?")
    assert server.requests[-1].status == 200
    assert events[-1].text == "ok then"


async def test_malformed_tool_arguments_become_a_result_the_model_can_fix(workspace, server):
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "a.txt"')]),
        Reply(content="fixed"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "go")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)][0]
    assert finished.is_error and "not valid JSON" in finished.result
    assert events[-1].text == "fixed"


async def test_headless_ask_fails_closed_and_tells_the_model(workspace, server):
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path": "x.txt", "content": "hi"}')]),
        Reply(content="could not write"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "write it")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)][0]
    assert finished.outcome == "denied"
    assert not (workspace / "x.txt").exists()
    assert len(server.requests) == 2


async def test_a_failed_request_is_not_recorded_as_the_user_interrupting(workspace, server):
    """Issue 14, item 5: after retries give up, the next request says the request failed."""
    from reasonix_core.agent.transcript import FAILED_MARK, INTERRUPTED_MARK

    server.enqueue(HttpError(402, "Insufficient Balance"), Reply(content="back again"))
    async with runtime(workspace) as rt:
        failed = await run_turn(rt, "first")
        assert isinstance(failed[-1], ev.TurnFailed)
        events = await run_turn(rt, "second")
    assert events[-1].text == "back again"
    history = bodies(server)[1]["messages"]
    closing = [m["content"] for m in history if m["role"] == "assistant"]
    assert closing == [FAILED_MARK]
    assert not any(INTERRUPTED_MARK in (m.get("content") or "") for m in history)
    assert [m["role"] for m in history if m["role"] != "system"] == ["user", "assistant", "user"]
    # The error the user saw is kept for a resumed view, never sent (issue 30 item 7).
    assert all("meta" not in m and "Insufficient" not in str(m) for m in history)
