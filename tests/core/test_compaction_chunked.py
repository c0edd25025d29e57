"""The chunked fold (issue 19, item 3; seed 000 §3.6, seed 003 decision 3).

A history too large for one summary request is folded in chunks and the
chunk summaries tree-reduced - on a manual compaction (``/compact``,
``reasonix compact``) and on the overflow recovery path only. Each test
drives the real Agent over the loopback fixture server, whose
``max_context_tokens`` refuses any request (prompt + output budget) that does
not fit the window, so "each request fits" is the provider's verdict.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.agent.chunked_fold import (
    MERGE_INSTRUCTION,
    PART_LEAD,
    ChunkedFold,
    ChunkedFoldFailed,
)
from reasonix_core.agent.session import checkpoint_path
from reasonix_core.agent.tokens import TokenEstimator
from reasonix_core.messages import Message, ToolCall
from reasonix_core.metrics import MetricsSink
from reasonix_testkit import HttpError, RecordedRequest, Reply, Stall, count_tokens
from reasonix_testkit.dialects.chat import render_prompt
from reasonix_tui.cli import main
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.compaction_helpers import (
    ScriptedModel,
    is_summary_request,
    make_files,
    read,
    small_window_config,
    use_key,
)

BIG_WINDOW = 80_000  # the session is recorded with this window (trigger 64,000)...
WINDOW = 6000  # ... and compacted with this one: summary prompt budget 6000-600-300 = 5100
PROMPT_BUDGET = 5100
PART = re.compile(r"The messages above are part (\d+) of (\d+)\.")
MERGE_TAG = "<partial-summary"


@pytest.fixture(autouse=True)
def _heuristic_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REASONIX_TOKENIZER", "heuristic")


def instruction_of(record: RecordedRequest) -> str:
    body = record.json or {}
    return body["messages"][-1]["content"]


def part_of(record: RecordedRequest) -> tuple[int, int] | None:
    m = PART.search(instruction_of(record))
    return (int(m.group(1)), int(m.group(2))) if m else None


def is_merge(record: RecordedRequest) -> bool:
    return MERGE_TAG in instruction_of(record)


def prompt_tokens(record: RecordedRequest) -> int:
    assert record.json is not None
    return count_tokens(render_prompt(record.json))


def history_tokens(messages: list[dict]) -> int:
    """The fixture's count of the messages after the system prompt."""
    return count_tokens(render_prompt({"messages": messages[1:]}))


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


async def record_long_session(workspace: Path, home: Path, server, files: int) -> ScriptedModel:
    """A session read through ``files`` reads under a large window, then the
    configuration moved to the small one (a model with a smaller window)."""
    small_window_config(home, server.base_url, window=BIG_WINDOW, ratio=0.85)
    names = make_files(workspace, [1600] * files)
    model = ScriptedModel([read(n) for n in names])
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read every file")
        assert isinstance(events[-1], ev.TurnFinished)
        assert not of(events, ev.CompactionStarted)
    small_window_config(home, server.base_url, window=WINDOW)
    server.max_context_tokens = WINDOW
    return model


def second_part_empty(record: RecordedRequest) -> Reply:
    part = part_of(record)
    if part is not None and part[0] == 2:
        return Reply(content="")
    return short_summaries(record)


def short_summaries(record: RecordedRequest) -> Reply:
    part = part_of(record)
    if part is not None:
        return Reply(content=f"DIGEST OF PART {part[0]}: files read, nothing changed.")
    return Reply(content="MERGED DIGEST: every file was read; the task is done.")


# --------------------------------------------------------------------------- manual


async def test_manual_compaction_folds_a_history_three_times_the_summary_window(
    workspace, home, server, monkeypatch
):
    use_key(monkeypatch)
    model = await record_long_session(workspace, home, server, files=40)
    session_prefix = json.loads(server.requests[-1].body)  # the last request of the session
    assert history_tokens(session_prefix["messages"]) >= 3 * PROMPT_BUDGET

    model.summary = short_summaries
    sink = MetricsSink()
    before = len(server.requests)
    async with runtime(workspace, continue_last=True) as rt:
        events = [e async for e in rt.agent.compact()]
        for event in events:
            sink.record(event)
        view = rt.agent.context.view(rt.agent.messages)
        cm = rt.agent.context
        assert cm.checkpoint is not None and cm.checkpoint.kind == "summary"
        assert cm.estimate(rt.agent.messages, rt.agent.tools.fingerprint) < cm.trigger
    fold = server.requests[before:]
    assert all(r.status == 200 for r in fold)  # the provider accepted every request
    assert all(is_summary_request(r) for r in fold)
    parts = [part_of(r) for r in fold if part_of(r) is not None]
    merges = [r for r in fold if is_merge(r)]
    chunks = len(parts)
    # N chunk requests (in order, each naming N) + the reduce requests, nothing else.
    assert chunks >= 3
    assert parts == [(i, chunks) for i in range(1, chunks + 1)]
    assert len(merges) == 1 and fold[-1] is merges[0]
    assert len(fold) == chunks + len(merges)
    for record in fold:
        body = record.json
        assert body is not None
        assert body["max_tokens"] == 600  # the summary cap of the 6000 window
        assert prompt_tokens(record) + body["max_tokens"] <= WINDOW
        assert body["tools"] == session_prefix["tools"]  # every request shares the tools
        assert body["messages"][0] == session_prefix["messages"][0]  # and the system prompt
        # A chunk never splits a tool call from its results.
        messages = body["messages"]
        calls = {c["id"] for m in messages for c in m.get("tool_calls") or []}
        results = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
        assert calls == results

    # Chunk 1 is the conversation's true prefix, byte for byte: the cache serves it.
    first = fold[0].json
    assert first is not None
    cut = len(first["messages"]) - 1
    assert first["messages"][:cut] == session_prefix["messages"][:cut]
    prefix = json.dumps(first["messages"][:cut], ensure_ascii=False, separators=(",", ":"))[:-1]
    assert prefix.encode() in fold[0].body and prefix.encode() in server.requests[before - 1].body
    usages = [e.usage for e in of(events, ev.UsageReported) if e.source == "compaction"]
    assert len(usages) == len(fold)
    covered = count_tokens(render_prompt({**first, "messages": first["messages"][:cut]}))
    assert usages[0].cache_hit_tokens >= covered - 1
    # Later chunks start with the lead note; they share the system prompt + tools prefix.
    for record in fold[1:chunks]:
        assert record.json is not None and record.json["messages"][1]["content"] == PART_LEAD
    # DeepSeek stores a prefix shared by two requests as a unit of its own once a
    # second request diverges after it: part 2 makes the system + tools prefix a
    # unit, every later request of the fold is served it from the cache.
    tools_only = count_tokens(render_prompt({**first, "messages": first["messages"][:1]}))
    assert all(u.cache_hit_tokens >= tools_only - 1 for u in usages[2:])
    # The merge request holds every part's summary, oldest first.
    merge_text = instruction_of(merges[0])
    assert merge_text.index("DIGEST OF PART 1") < merge_text.index(f"DIGEST OF PART {chunks}")
    assert MERGE_INSTRUCTION in merge_text

    # The final summary replaces the history exactly as a single summary does.
    assert view[0].role == "system"
    assert view[1].role == "user" and "MERGED DIGEST" in (view[1].content or "")
    assert view[1].meta.get("compaction") == "summary"
    assert [e.reason for e in of(events, ev.CompactionStarted)] == ["manual"]
    assert [e.reason for e in of(events, ev.PrefixChanged)] == ["compact_manual"]
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]
    notices = [e.text for e in of(events, ev.Notice)]
    assert any(f"summary folded from {chunks} parts and 1 merge" in t for t in notices)
    metrics = sink.metrics
    assert metrics.compactions == 1
    assert metrics.usage_by_source["compaction"].calls == chunks + 1
    # The transcript itself is untouched: every read is still there.
    assert len([m for m in session_messages(rt) if m["role"] == "tool"]) == 40


async def test_long_part_summaries_are_reduced_in_levels(workspace, home, server, monkeypatch):
    """Partial summaries too long to merge in one request are merged in a tree."""
    use_key(monkeypatch)
    model = await record_long_session(workspace, home, server, files=40)
    long_digest = "digest " * 500  # ~3500 bytes, ~875 tokens: four of them need two merges

    def summaries(record: RecordedRequest) -> Reply:
        if part_of(record) is not None:
            return Reply(content=f"PART {part_of(record)} " + long_digest)
        return Reply(content="MERGED " + "m " * 300)

    model.summary = summaries
    before = len(server.requests)
    async with runtime(workspace, continue_last=True) as rt:
        events = [e async for e in rt.agent.compact()]
    fold = server.requests[before:]
    assert all(r.status == 200 for r in fold)
    chunks = sum(1 for r in fold if part_of(r) is not None)
    merges = [r for r in fold if is_merge(r)]
    assert chunks >= 4 and len(merges) >= 2
    assert all(prompt_tokens(r) + 600 <= WINDOW for r in fold)
    # The last merge merges merged summaries (a second level of the tree).
    assert "MERGED" in instruction_of(merges[-1])
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]


def test_reasonix_compact_folds_in_chunks(workspace, home, server, monkeypatch, capsys):
    use_key(monkeypatch)
    model = anyio.run(record_long_session, workspace, home, server, 40)
    model.summary = short_summaries
    monkeypatch.chdir(workspace)
    before = len(server.requests)
    assert main(["compact"]) == 0
    out = capsys.readouterr()
    assert "compacted (about" in out.out
    assert "summary folded from" in out.err
    assert any(is_merge(r) for r in server.requests[before:])


def test_reasonix_compact_names_a_failed_chunk_in_one_error_line(
    workspace, home, server, monkeypatch, capsys
):
    use_key(monkeypatch)
    model = anyio.run(record_long_session, workspace, home, server, 40)
    model.summary = second_part_empty
    monkeypatch.chdir(workspace)
    assert main(["compact"]) == 1
    captured = capsys.readouterr()
    assert "not compacted" in captured.out
    errors = [line for line in captured.err.splitlines() if "chunked summary failed" in line]
    assert errors == [
        "reasonix: error: compaction failed: the chunked summary failed at part 2 of "
        + errors[0].split("part 2 of ")[1]
    ]
    assert errors[0].endswith("the summary request returned no text")


# --------------------------------------------------------------------------- the other paths


async def test_overflow_recovery_folds_in_chunks(workspace, home, server, monkeypatch):
    """The provider's window is far smaller than configured: the step's request
    is refused, the window learnt, and the history folded before the one retry."""
    use_key(monkeypatch)
    small_window_config(home, server.base_url, window=BIG_WINDOW, extra="max_output_tokens = -1\n")
    names = make_files(workspace, [1600] * 40)
    steps = [read(n) for n in names]
    model = ScriptedModel(steps, summary=short_summaries)
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read every file")
        # The provider turns out to accept 6000 tokens only.
        server.max_context_tokens = WINDOW
        before = len(server.requests)
        events = await run_turn(rt, "and now?")
        assert rt.agent.context.window == WINDOW
    after = server.requests[before:]
    assert after[0].status == 400  # the step's request, refused
    assert [e.reason for e in of(events, ev.CompactionStarted)] == ["overflow"]
    fold = [r for r in after if is_summary_request(r)]
    assert sum(1 for r in fold if part_of(r) is not None) >= 3
    assert any(is_merge(r) for r in fold)
    assert all(r.status == 200 for r in after[1:])
    retry = after[len(fold) + 1].json
    assert retry is not None and "MERGED DIGEST" in retry["messages"][1]["content"]
    assert isinstance(events[-1], ev.TurnFinished)


async def test_pressure_compaction_does_not_call_chunked_fold(workspace, home, server, monkeypatch):
    """Seed 003, decision 3 (TestPressureCompactionDoesNotCallChunkedFold):
    the automatic threshold keeps its single summary request, even when the
    history is three times what one request can carry."""
    use_key(monkeypatch)
    model = await record_long_session(workspace, home, server, files=40)
    model.summary = short_summaries
    before = len(server.requests)
    async with runtime(workspace, continue_last=True) as rt:
        events = await run_turn(rt, "go on")  # far over the 4800 trigger: pressure compaction
    assert [e.reason for e in of(events, ev.CompactionStarted)][0] == "auto"
    summaries = [r for r in server.requests[before:] if is_summary_request(r)]
    assert summaries  # it did summarise, with single requests...
    assert not any(part_of(r) is not None or is_merge(r) for r in summaries)  # ... never a fold
    assert all(PART_LEAD not in r.body.decode() for r in server.requests[before:])
    assert isinstance(events[-1], ev.TurnFinished)


# --------------------------------------------------------------------------- failure, cancel


async def test_a_failed_chunk_fails_the_compaction_and_leaves_history_untouched(
    workspace, home, server, monkeypatch
):
    use_key(monkeypatch)
    model = await record_long_session(workspace, home, server, files=40)

    model.summary = second_part_empty
    sidecar = None
    async with runtime(workspace, continue_last=True) as rt:
        path = checkpoint_path(rt.agent.session.path)
        sidecar = path.read_text() if path.exists() else None
        view_before = rt.agent.context.view(rt.agent.messages)
        events = [e async for e in rt.agent.compact()]
        assert rt.agent.context.checkpoint is None
        assert rt.agent.context.view(rt.agent.messages) == view_before
    assert not of(events, ev.PrefixChanged)
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [False]
    warnings = [e.text for e in of(events, ev.Notice) if e.level == "warning"]
    assert any(
        "the chunked summary failed at part 2 of" in t and "returned no text" in t for t in warnings
    )
    after = path.read_text() if path.exists() else None
    assert after is None or json.loads(after)["checkpoint"] is None
    assert sidecar is None or json.loads(sidecar)["checkpoint"] is None


async def test_a_cancelled_fold_leaves_the_transcript_valid_and_unchanged(
    workspace, home, server, monkeypatch
):
    use_key(monkeypatch)
    model = await record_long_session(workspace, home, server, files=40)
    stalled = threading.Event()

    def stall_part_two(record: RecordedRequest):
        part = part_of(record)
        if part is not None and part[0] == 2:
            stalled.set()
            return Stall(30)
        return short_summaries(record)

    model.summary = stall_part_two
    seen: list[ev.Event] = []
    async with runtime(workspace, continue_last=True) as rt:
        messages_before = list(rt.agent.messages)
        records_before = rt.agent.session.path.read_bytes()
        async with anyio.create_task_group() as tg:

            async def compact() -> None:
                async for event in rt.agent.compact():
                    seen.append(event)
                tg.cancel_scope.cancel()  # it ended without a part 2: fail below, not hang

            async def cancel_when_part_two_is_sent() -> None:
                await anyio.to_thread.run_sync(stalled.wait, abandon_on_cancel=True)
                tg.cancel_scope.cancel()

            tg.start_soon(compact)
            tg.start_soon(cancel_when_part_two_is_sent)
        cm = rt.agent.context
        assert cm.checkpoint is None and not cm.busy
        assert rt.agent.messages == messages_before
        assert rt.agent.context.view(rt.agent.messages) == messages_before
        assert rt.agent.session.path.read_bytes() == records_before
        assert not of(seen, ev.PrefixChanged)
        # The session goes on normally from the unchanged history.
        server.max_context_tokens = None
        events = await run_turn(rt, "go on")
        assert isinstance(events[-1], ev.TurnFinished)
    assert stalled.is_set()


# --------------------------------------------------------------------------- refused


async def record_fitting_session(workspace: Path, home: Path, server) -> ScriptedModel:
    """A session whose history (~12K tokens) fits one summary request of its
    configured 20K window: only the provider's refusal shows it does not."""
    small_window_config(home, server.base_url, window=20_000, ratio=0.85)
    names = make_files(workspace, [1600] * 25)
    model = ScriptedModel([read(n) for n in names], summary=short_summaries)
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read every file")
        assert not of(events, ev.CompactionStarted)
    return model


async def test_a_summary_request_refused_as_too_long_is_folded(
    workspace, home, server, monkeypatch
):
    """The provider's window is 6000, not the configured 20K: the manual single
    summary request is refused, the window learnt, and the history folded."""
    use_key(monkeypatch)
    await record_fitting_session(workspace, home, server)
    server.max_context_tokens = WINDOW
    before = len(server.requests)
    async with runtime(workspace, continue_last=True) as rt:
        events = [e async for e in rt.agent.compact()]
        assert rt.agent.context.window == WINDOW
        assert rt.agent.context.checkpoint is not None
    asked = server.requests[before:]
    assert asked[0].status == 400 and part_of(asked[0]) is None and not is_merge(asked[0])
    fold = asked[1:]
    assert all(r.status == 200 for r in fold)
    assert sum(1 for r in fold if part_of(r) is not None) >= 2
    assert is_merge(fold[-1])
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]


async def test_a_refusal_without_sizes_folds_at_half_the_refused_request(
    workspace, home, server, monkeypatch
):
    """A provider that refuses a long prompt without saying how long: the
    chunks are sized at half the refused request."""
    use_key(monkeypatch)
    model = await record_fitting_session(workspace, home, server)
    limit = 7000

    def summaries(record: RecordedRequest):
        if prompt_tokens(record) > limit:
            return HttpError(400, "Request too large: the prompt is too long for this model")
        return short_summaries(record)

    model.summary = summaries
    before = len(server.requests)
    async with runtime(workspace, continue_last=True) as rt:
        events = [e async for e in rt.agent.compact()]
        assert rt.agent.context.window == 20_000  # nothing was learnt
    asked = server.requests[before:]
    assert asked[0].status == 400 and prompt_tokens(asked[0]) > limit
    fold = asked[1:]
    assert all(r.status == 200 for r in fold)
    assert all(prompt_tokens(r) <= prompt_tokens(asked[0]) // 2 + 100 for r in fold)
    assert sum(1 for r in fold if part_of(r) is not None) >= 2
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]


# --------------------------------------------------------------------------- the plan


def _never_called(*args, **kwargs):  # the plan sends nothing
    raise AssertionError("the plan must not send a request")


def _units(sizes: list[int]) -> list[list[Message]]:
    """User / assistant-with-a-tool-call / tool result units of the given result sizes."""
    units: list[list[Message]] = [[Message(role="user", content="read them all")]]
    for i, size in enumerate(sizes):
        call = ToolCall(id=f"c{i}", name="read_file", arguments=f'{{"path": "f{i}"}}')
        units.append(
            [
                Message(role="assistant", content="", tool_calls=(call,)),
                Message(role="tool", content="x" * size, tool_call_id=f"c{i}"),
            ]
        )
    return units


def test_the_plan_packs_whole_units_under_the_budget():
    estimator = TokenEstimator("heuristic")
    fold = ChunkedFold(
        estimator=estimator, tools_raw=300, budget=2000, output_cap=200, summarize=_never_called
    )
    system = Message(role="system", content="be brief")
    units = _units([1500] * 20)
    chunks = fold.plan(system, units)
    assert len(chunks) >= 4
    assert [m for chunk in chunks for m in chunk] == [m for unit in units for m in unit]
    for chunk in chunks:
        assert chunk[0].role != "tool"  # a chunk never starts inside a unit
        calls = {c.id for m in chunk for c in m.tool_calls}
        assert calls == {m.tool_call_id for m in chunk if m.role == "tool"}
        request = [system, Message(role="user", content=PART_LEAD), *chunk]
        assert estimator.scale(estimator.messages(request) + 300) <= 2000


def test_a_unit_larger_than_one_request_fails_the_plan_clearly():
    fold = ChunkedFold(
        estimator=TokenEstimator("heuristic"),
        tools_raw=300,
        budget=2000,
        output_cap=200,
        summarize=_never_called,
    )
    system = Message(role="system", content="be brief")
    with pytest.raises(ChunkedFoldFailed, match=r"replay unit 3 of the history .*\(2,000 tokens\)"):
        fold.plan(system, _units([1500, 9000, 1500]))


async def test_tui_compact_with_focus_folds_and_every_request_keeps_the_focus(
    workspace, home, server, monkeypatch
):
    """``/compact keep the note names`` in the TUI (EngineServices.compact)."""
    from reasonix_core.agent.session import list_sessions
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_tui.engine import EngineServices

    use_key(monkeypatch)
    model = await record_long_session(workspace, home, server, files=40)
    model.summary = short_summaries
    session = list_sessions(home / "sessions", workspace)[0]
    services = EngineServices(workspace, home=home)
    before = len(server.requests)
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.resume_runner(session.id, FailClosedApprover())
        events = [e async for e in runner.compact("keep the note names")]
        tg.cancel_scope.cancel()
    fold = server.requests[before:]
    assert sum(1 for r in fold if part_of(r) is not None) >= 3 and is_merge(fold[-1])
    assert all(
        "The user asks this summary to: keep the note names" in instruction_of(r) for r in fold
    )
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]
    assert [e.reason for e in of(events, ev.PrefixChanged)] == ["compact_manual"]
