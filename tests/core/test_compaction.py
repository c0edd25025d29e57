"""Cache-first compaction (seed 000 §3.6) against the loopback fixture server.

Each test drives the real Agent over real HTTP with a small context window.
The fixture server counts one token per 4 UTF-8 bytes of the rendered prompt
and simulates DeepSeek's prefix cache, so cache hits are measured, not assumed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.context import (
    BLANK_MARKER,
    PRUNE_HEAD,
    PRUNE_MARKER,
    PRUNE_TAIL,
    ContextManager,
    is_context_overflow,
    parse_overflow,
    prune_text,
)
from reasonix_core.agent.session import checkpoint_path
from reasonix_core.errors import ProviderError
from reasonix_core.metrics import MetricsSink
from reasonix_testkit import HttpError, Reply, count_tokens
from reasonix_testkit.dialects.chat import render_prompt
from tests.core.agent_helpers import run_turn, runtime, session_messages, session_records
from tests.core.compaction_helpers import (
    INSTRUCTION_TAG,
    ScriptedModel,
    is_summary_request,
    make_files,
    messages_prefix_bytes,
    read,
    small_window_config,
    use_key,
)

WINDOW = 6000  # trigger 4800, keep 960, headroom 300, hard limit 5700


@pytest.fixture(autouse=True)
def _heuristic_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    # Deterministic estimates; the tokenizer backend has its own tests below.
    monkeypatch.setenv("REASONIX_TOKENIZER", "heuristic")


@pytest.fixture
def setup(home: Path, server, monkeypatch: pytest.MonkeyPatch):
    def configure(window: int = WINDOW, ratio: float | None = None, extra: str = "") -> None:
        small_window_config(home, server.base_url, window=window, ratio=ratio, extra=extra)

    use_key(monkeypatch)
    configure()
    return configure


def normal_bodies(server) -> list[dict]:
    return [
        json.loads(r.body) for r in server.requests if r.status == 200 and not is_summary_request(r)
    ]


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def position(server, record) -> int:
    """Index of a responder-seen record in ``server.requests`` (status is filled in later)."""
    return next(i for i, r in enumerate(server.requests) if r.body is record.body)


# --------------------------------------------------------------------------- pure helpers


def test_prune_text_shape():
    text = "".join(chr(0x4E00 + i % 500) for i in range(9000))  # code points, not bytes
    pruned = prune_text(text)
    assert pruned == text[:PRUNE_HEAD] + PRUNE_MARKER + text[-PRUNE_TAIL:]
    assert prune_text(text[:8192]) == text[:8192]


def test_overflow_detection_and_parse():
    msg = (
        "This model's maximum context length is 131072 tokens. However, you requested "
        "140000 tokens (139000 in the messages, 1000 in the completion). Please reduce the "
        "length of the messages or completion."
    )
    assert is_context_overflow(ProviderError(msg, status=400))
    assert parse_overflow(msg) == (131072, 139000)
    assert not is_context_overflow(ProviderError("Model Not Exist", status=400))
    assert not is_context_overflow(ProviderError("context length", status=503, retryable=True))
    assert is_context_overflow(ProviderError("prompt is too long: 210000 tokens", status=400))


def test_thresholds():
    cm = ContextManager(window=100_000, ratio=0.8)
    assert cm.trigger == 80_000
    assert cm.keep_budget == 16_000
    assert cm.headroom == 5_000
    assert cm.summary_cap == 8192
    small = ContextManager(window=4000, ratio=0.3)
    assert small.trigger == 1200 and small.headroom == 256


# --------------------------------------------------------------------------- below the trigger


async def test_no_rewrite_below_the_trigger(workspace, server, setup):
    names = make_files(workspace, [1600] * 6)
    server.responder = ScriptedModel([read(n) for n in names])
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read the files")
        assert rt.agent.context.generation == 0
    assert not of(events, ev.CompactionStarted) and not of(events, ev.PrefixChanged)
    raw = [r.body for r in server.requests]
    assert len(raw) == 7
    for before, after in zip(raw, raw[1:], strict=False):
        # Request n is a byte-exact extension of request n-1's messages.
        assert after.startswith(messages_prefix_bytes(before))
    usage = [e.usage for e in of(events, ev.UsageReported)]
    for prev, u in zip(usage, usage[1:], strict=False):
        # The whole previous request (and its answer) is a cached prefix unit.
        assert u.cache_hit_tokens >= prev.prompt_tokens + prev.completion_tokens - 1
    assert not checkpoint_path(rt.agent.session.path).exists()


# --------------------------------------------------------------------------- prune


async def test_prune_only_relief_needs_no_summary(workspace, server, setup):
    (workspace / "big.txt").write_text("".join(f"line {i:05d} of a long log\n" for i in range(800)))
    model = ScriptedModel([read("big.txt")])
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read the log")
    assert model.summary_requests == []
    assert [e.reason for e in of(events, ev.CompactionStarted)] == ["auto"]
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]
    assert [e.reason for e in of(events, ev.PrefixChanged)] == ["compact_auto"]
    last = normal_bodies(server)[-1]["messages"]
    tool = [m for m in last if m["role"] == "tool"][0]
    assert PRUNE_MARKER in tool["content"]
    assert len(tool["content"]) == PRUNE_HEAD + len(PRUNE_MARKER) + PRUNE_TAIL
    # The canonical transcript keeps the bounded original.
    stored = [m for m in session_messages(rt) if m["role"] == "tool"][0]
    assert PRUNE_MARKER not in stored["content"] and len(stored["content"]) > 8192
    sidecar = json.loads(checkpoint_path(rt.agent.session.path).read_text())
    assert sidecar["checkpoint"]["kind"] == "prune"


# --------------------------------------------------------------------------- summary


async def test_summary_shares_the_prefix_and_keeps_the_tail(workspace, server, setup):
    names = make_files(workspace, [1600] * 12)
    model = ScriptedModel([read(n) for n in names])
    server.responder = model
    sink = MetricsSink()
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read every file")
        for event in events:
            sink.record(event)
        cm = rt.agent.context
    assert len(model.summary_requests) == 1
    summary_req = model.summary_requests[0]
    index = position(server, summary_req)
    previous = server.requests[index - 1]
    body = summary_req.json
    prev = previous.json
    assert body is not None and prev is not None
    cut = len(body["messages"]) - 1
    # Same system prompt, same message bytes, same tools, one final instruction.
    assert body["tools"] == prev["tools"]
    assert body["messages"][:cut] == prev["messages"][:cut]
    assert INSTRUCTION_TAG in body["messages"][-1]["content"]
    assert body["messages"][-1]["role"] == "user"
    prefix = json.dumps(prev["messages"][:cut], ensure_ascii=False, separators=(",", ":"))[:-1]
    assert prefix.encode() in summary_req.body and prefix.encode() in previous.body
    assert body.get("reasoning_effort") == prev.get("reasoning_effort")
    assert body["max_tokens"] == 600  # min(8192, window / 10)
    # ... so the provider's prefix cache covers the whole selected prefix.
    usage = [e for e in of(events, ev.UsageReported) if e.source == "compaction"][0].usage
    covered = count_tokens(render_prompt({**prev, "messages": prev["messages"][:cut]}))
    assert usage.cache_hit_tokens >= covered - 1
    assert usage.cache_hit_tokens / usage.prompt_tokens > 0.9

    # The next request: system, the summary as a user message, then the verbatim tail.
    after = server.requests[index + 1].json
    assert after is not None
    msgs = after["messages"]
    assert msgs[0] == prev["messages"][0]
    assert msgs[1]["role"] == "user" and "SUMMARY: the user asked for reads." in msgs[1]["content"]
    tail = msgs[2:]
    assert tail[0]["role"] == "assistant"  # a tool group starts the tail, unsplit
    assert tail == prev["messages"][cut:] + tail[len(prev["messages"]) - cut :]
    kept = tail
    kept_tokens = count_tokens(render_prompt({**after, "messages": kept})) - count_tokens(
        render_prompt({**after, "messages": []})
    )
    assert kept_tokens <= 0.16 * WINDOW
    for i, m in enumerate(msgs):
        if m["role"] == "tool":
            owner = next(x for x in reversed(msgs[:i]) if x["role"] != "tool")
            assert owner["role"] == "assistant" and any(
                c["id"] == m["tool_call_id"] for c in owner["tool_calls"]
            )
        if m["role"] == "assistant":
            assert "reasoning_content" in m  # tools are sent: DeepSeek needs the key
    assert cm.generation == 1 and cm.checkpoint is not None and cm.checkpoint.kind == "summary"

    metrics = sink.metrics
    assert metrics.compactions == 1
    assert metrics.usage_by_source["compaction"].calls == 1
    assert metrics.prefix_change_reason_counts == {"compact_auto": 1}
    # The transcript was never rewritten: every read is still there in full.
    stored = [m for m in session_messages(rt) if m["role"] == "tool"]
    assert len(stored) == 12
    assert any(r["type"] == "checkpoint" for r in session_records(rt))


async def test_later_threshold_merges_previous_summary(workspace, server, setup):
    names = make_files(workspace, [1600] * 20)
    summaries = iter(["FIRST DIGEST of reads", "SECOND DIGEST merging FIRST and newer reads"])
    model = ScriptedModel(
        [read(n) for n in names],
        summary=lambda record: Reply(content=next(summaries)),
    )
    server.responder = model
    async with runtime(workspace) as rt:
        await run_turn(rt, "read the first files")
        await run_turn(rt, "and the rest")
        assert rt.agent.context.generation == 2
    assert len(model.summary_requests) == 2
    second = model.summary_requests[1].json
    assert second is not None
    # The second summary request starts with the first digest...
    assert "FIRST DIGEST" in second["messages"][1]["content"]
    # ... and afterwards there is exactly one digest in the view.
    last = normal_bodies(server)[-1]["messages"]
    digests = [m for m in last if "<context-summary" in (m.get("content") or "")]
    assert len(digests) == 1 and "SECOND DIGEST" in digests[0]["content"]


async def test_at_most_two_summaries_per_turn(workspace, server, setup):
    names = make_files(workspace, [1600] * 40)
    model = ScriptedModel([read(n) for n in names])
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read everything")
    # Pressure compaction happens again and again, but only twice in this turn;
    # later the view runs up to the hard limit and is truncated instead.
    assert len(model.summary_requests) == 2
    reasons = [e.reason for e in of(events, ev.PrefixChanged)]
    assert reasons[:2] == ["compact_auto", "compact_auto"]
    assert "truncate" in reasons
    assert isinstance(events[-1], ev.TurnFinished)


# --------------------------------------------------------------------------- estimator


async def test_estimator_calibration_from_summary_count(workspace, server, setup):
    names = make_files(workspace, [1600] * 10)
    seen: dict[str, float] = {}

    def doubled(record):
        real = count_tokens(render_prompt(record.json))
        seen["real"] = real
        return Reply(
            content="short digest",
            usage={
                "prompt_tokens": real * 2,
                "completion_tokens": 3,
                "total_tokens": real * 2 + 3,
                "prompt_cache_hit_tokens": 0,
                "prompt_cache_miss_tokens": real * 2,
            },
        )

    model = ScriptedModel([read(n) for n in names[:9]], summary=doubled)
    server.responder = model
    async with runtime(workspace) as rt:
        estimator = rt.agent.context.estimator
        ratios: list[float] = []
        original = estimator.calibrate

        def spy(raw, real):
            original(raw, real)
            ratios.append(estimator.ratio)

        estimator.calibrate = spy  # type: ignore[method-assign]
        events = await run_turn(rt, "read")
    assert model.summary_requests and "real" in seen
    # Normal requests keep the ratio near 1 (the heuristic matches the fixture);
    # the summary's doubled count doubles it.
    assert 0.9 < ratios[0] < 1.1
    assert max(ratios) == pytest.approx(2 * ratios[0], rel=0.1)
    assert isinstance(events[-1], ev.TurnFinished)


# --------------------------------------------------------------------------- overflow


async def test_overflow_of_the_completion_budget_learns_the_window(workspace, server, setup):
    setup(window=20_000)  # the configured window is wrong: the provider takes 5000
    server.max_context_tokens = 5000
    server.responder = ScriptedModel([])
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "hello")
        assert rt.agent.context.window == 5000
    # prompt + max_tokens (sized for 20000) overflowed; nothing to fold, one retry.
    assert [r.status for r in server.requests] == [400, 200]
    assert json.loads(server.requests[1].body)["max_tokens"] <= 5000 - 540
    assert not of(events, ev.CompactionStarted)
    assert isinstance(events[-1], ev.TurnFinished)


async def test_overflow_one_summary_then_one_retry(workspace, server, setup):
    # The configured window is wrong (the provider takes 5000) and no output
    # cap is sent, so the prompt itself overflows once it passes 5000.
    setup(window=20_000, extra="max_output_tokens = -1\n")
    server.max_context_tokens = 5000
    names = make_files(workspace, [1600] * 12)
    model = ScriptedModel([read(n) for n in names])
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read")
        cm = rt.agent.context
        assert cm.window == 5000  # the output budget is sized against it too
    rejected = [r for r in server.requests if r.status == 400]
    assert len(rejected) == 1
    assert [e.reason for e in of(events, ev.CompactionStarted)][0] == "overflow"
    assert len(model.summary_requests) >= 1
    # The rescue's summary requests (a chunked fold: the history is larger than
    # the learnt window) follow the refused request one after another...
    summaries = [position(server, r) for r in model.summary_requests]
    first_summary, last_summary = summaries[0], summaries[-1]
    assert summaries == list(range(first_summary, last_summary + 1))
    assert server.requests[first_summary - 1].status == 400
    # ... then the retry of the original request (rebuilt from the new view) succeeded.
    assert server.requests[last_summary + 1].status == 200
    assert not is_summary_request(server.requests[last_summary + 1])
    for record in model.summary_requests:
        body = record.json
        assert body is not None
        assert count_tokens(render_prompt(body)) + body["max_tokens"] <= 5000
    assert isinstance(events[-1], ev.TurnFinished)
    notices = [e.text for e in of(events, ev.Notice)]
    assert any("5,000 tokens" in t for t in notices)


async def test_overflow_without_summary_truncates_then_retries(workspace, server, setup):
    setup(window=20_000, extra="max_output_tokens = -1\n")
    server.max_context_tokens = 5000
    names = make_files(workspace, [1600] * 12)
    model = ScriptedModel(
        [read(n) for n in names], summary=lambda r: HttpError(500, "boom", type="server_error")
    )
    server.responder = model
    async with runtime(workspace) as rt:
        rt.agent.retry.attempts = 1
        events = await run_turn(rt, "read")
    assert "truncate" in [e.reason for e in of(events, ev.PrefixChanged)]
    assert isinstance(events[-1], ev.TurnFinished)
    last = normal_bodies(server)[-1]["messages"]
    assert any(BLANK_MARKER == m.get("content") for m in last if m["role"] == "tool")


async def test_second_overflow_after_the_retry_fails_the_turn(workspace, server, setup):
    # A provider that refuses everything larger than a tiny prompt, without
    # saying how large its window is: one rescue, one retry, then a clear failure.
    setup(window=20_000)
    names = make_files(workspace, [1600] * 3)
    calls = {"n": 0}

    def responder(record):
        if is_summary_request(record):
            return Reply(content="digest")
        calls["n"] += 1
        if calls["n"] <= 3:
            return read(names[calls["n"] - 1])
        return HttpError(400, "Request too large: the prompt is too long for this model")

    server.responder = responder
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read")
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed) and failed.status == 400
    assert sum(1 for r in server.requests if r.status == 400) == 2


# --------------------------------------------------------------------------- truncate / required


async def test_truncate_fallback_at_the_hard_limit(workspace, server, setup):
    names = make_files(workspace, [7000] * 3)  # ~2000 tokens each, under the prune size
    model = ScriptedModel([read(n) for n in names], summary=lambda r: Reply(content=""))
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read the three files")
        cm = rt.agent.context
        assert cm.checkpoint is not None and cm.checkpoint.kind == "truncate"
    assert len(model.summary_requests) == 1  # an empty summary is never a digest
    assert [e.reason for e in of(events, ev.PrefixChanged)] == ["truncate"]
    assert any("truncated" in e.text for e in of(events, ev.Notice))
    after = normal_bodies(server)[-1]["messages"]
    tools = [m for m in after if m["role"] == "tool"]
    assert tools[0]["content"] == BLANK_MARKER  # oldest result blanked first
    assert tools[-1]["content"] != BLANK_MARKER
    assert count_tokens(render_prompt(normal_bodies(server)[-1])) < 4800
    stored = [m for m in session_messages(rt) if m["role"] == "tool"]
    assert all(m["content"] != BLANK_MARKER for m in stored)
    assert isinstance(events[-1], ev.TurnFinished)


async def test_truncate_drops_oldest_units_with_a_marker(workspace, server, setup):
    # Many small turns: blanking tool results is not enough, whole units go.
    server.responder = ScriptedModel(
        [], summary=lambda r: Reply(content="", finish_reason="length")
    )
    async with runtime(workspace) as rt:
        for i in range(30):
            events = await run_turn(rt, f"question {i}: " + "words " * 150)
        assert rt.agent.context.checkpoint is not None
    bodies_ = normal_bodies(server)
    last = bodies_[-1]["messages"]
    assert last[1]["role"] == "user" and last[1]["content"].startswith("[context truncated:")
    assert last[2]["role"] == "assistant"  # alternation kept with an acknowledgement
    assert isinstance(events[-1], ev.TurnFinished)


async def test_compaction_required_when_nothing_can_fit(workspace, server, setup):
    server.responder = ScriptedModel([])
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "x " * 15_000)  # one user message larger than the window
    failed = events[-1]
    assert isinstance(failed, ev.TurnFailed)
    assert failed.kind == "compaction_required"
    assert "no longer fits the context window" in failed.error
    assert server.requests == []  # nothing was sent, nothing paid


# --------------------------------------------------------------------------- failures


async def test_failure_is_recorded_per_generation_and_not_retried(workspace, server, setup):
    names = make_files(workspace, [400] * 29)  # stays under the hard limit (5700)
    model = ScriptedModel([read(n) for n in names], summary=lambda r: Reply(content=""))
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read")
        cm = rt.agent.context
        failure = cm.failure
    assert failure is not None and failure.status == "failed" and failure.generation == 0
    assert cm.checkpoint is None  # an empty reply never becomes a digest
    # After a failed (paid) attempt the same generation is not retried until
    # the view has grown by 5% of the window (300 tokens, about 2 reads).
    attempts = [position(server, r) for r in model.summary_requests]
    assert len(attempts) >= 2
    grown = [json.loads(server.requests[i - 1].body) for i in attempts]
    sizes = [count_tokens(render_prompt(b)) for b in grown]
    for a, b, before, after in zip(attempts, attempts[1:], sizes, sizes[1:], strict=False):
        assert b - a >= 3  # at least two normal steps in between
        assert after - before >= 300 - 40
    assert all(e.ok is False for e in of(events, ev.CompactionFinished))
    sidecar = json.loads(checkpoint_path(rt.agent.session.path).read_text())
    assert sidecar["failure"]["status"] == "failed"
    assert sidecar["checkpoint"] is None
    assert isinstance(events[-1], ev.TurnFinished)


async def test_blocked_when_nothing_to_summarise(workspace, server, setup):
    # A long system prompt: the trigger (1800) is reached while the whole
    # history still fits the verbatim 16% tail, so there is nothing to fold.
    setup(window=6000, ratio=0.3)
    config = workspace.parent / "reasonix-home" / "config.toml"
    text = config.read_text().replace(
        "[agent]\n", '[agent]\nsystem_prompt_extra = "' + "rule " * 1000 + '"\n', 1
    )
    config.write_text(text)
    server.responder = ScriptedModel([], final="ok " * 100)
    async with runtime(workspace) as rt:
        await run_turn(rt, "a")
        events = await run_turn(rt, "b")
        cm = rt.agent.context
        assert cm.estimate(rt.agent.messages, rt.agent.tools.fingerprint) >= cm.trigger
    assert not any(is_summary_request(r) for r in server.requests)
    assert cm.failure is not None and cm.failure.status == "blocked"
    assert isinstance(events[-1], ev.TurnFinished)


async def test_manual_compaction_retries_after_a_failure(workspace, server, setup):
    names = make_files(workspace, [1600] * 9)
    state = {"manual": False}
    model = ScriptedModel(
        [read(n) for n in names],
        summary=lambda r: Reply(content="manual digest" if state["manual"] else ""),
    )
    server.responder = model
    async with runtime(workspace) as rt:
        await run_turn(rt, "read")
        assert rt.agent.context.failure is not None
        state["manual"] = True
        events = [e async for e in rt.agent.compact()]
        cm = rt.agent.context
        assert cm.checkpoint is not None and cm.checkpoint.kind == "summary"
        assert cm.failure is None
    assert [e.reason for e in of(events, ev.CompactionStarted)] == ["manual"]
    assert [e.reason for e in of(events, ev.PrefixChanged)] == ["compact_manual"]
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]


# --------------------------------------------------------------------------- restart


async def test_restart_restores_the_checkpoint(workspace, server, setup):
    names = make_files(workspace, [1600] * 12)
    model = ScriptedModel([read(n) for n in names], summary="RESTORED DIGEST")
    server.responder = model
    async with runtime(workspace) as rt:
        await run_turn(rt, "read")
        first_view = [m.content for m in rt.agent.context.view(rt.agent.messages)]
        session_id = rt.agent.session_id
    last_before = normal_bodies(server)[-1]
    summaries_before = len(model.summary_requests)
    async with runtime(workspace, continue_last=True) as rt2:
        assert rt2.agent.session_id == session_id
        assert [m.content for m in rt2.agent.context.view(rt2.agent.messages)] == first_view
        events = await run_turn(rt2, "continue")
    assert len(model.summary_requests) == summaries_before  # restored, not re-planned
    first_after = normal_bodies(server)[-1]["messages"]
    assert "RESTORED DIGEST" in first_after[1]["content"]
    # The continued request extends the last request of the previous run.
    assert first_after[: len(last_before["messages"])] == last_before["messages"]
    assert not of(events, ev.PrefixChanged)
    # The transcript itself holds everything, in order, unrewritten.
    tools = [m for m in session_messages(rt2) if m["role"] == "tool"]
    assert len(tools) == 12


async def test_restart_ignores_a_checkpoint_that_does_not_match(workspace, server, setup):
    names = make_files(workspace, [1600] * 12)
    server.responder = ScriptedModel([read(n) for n in names])
    async with runtime(workspace) as rt:
        await run_turn(rt, "read")
        path = checkpoint_path(rt.agent.session.path)
    data = json.loads(path.read_text())
    data["checkpoint"]["anchor"] = "0" * 16
    path.write_text(json.dumps(data))
    async with runtime(workspace, continue_last=True) as rt2:
        assert rt2.agent.context.checkpoint is None
        assert rt2.agent.context.view(rt2.agent.messages) == rt2.agent.messages


async def test_rejected_summary_is_replanned_then_sent_as_a_bounded_transcript(
    workspace, server, setup
):
    names = make_files(workspace, [3000] * 6)
    refused = {"n": 0}

    def summary(record):
        if refused["n"] < 3:
            # A provider whose real limit is below what it admits: it refuses the
            # summary request and states its true size.
            refused["n"] += 1
            real = count_tokens(render_prompt(record.json))
            return HttpError(
                400,
                f"This model's maximum context length is 6000 tokens. However, you requested "
                f"{real + 600} tokens ({real} in the messages, 600 in the completion). Please "
                "reduce the length of the messages or completion.",
            )
        return Reply(content="digest from the transcript")

    model = ScriptedModel([read(n) for n in names], summary=summary)
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read")
        cm = rt.agent.context
        assert cm.checkpoint is not None and cm.checkpoint.kind == "summary"
    attempts = [r.json for r in model.summary_requests]
    assert len(attempts) == 4
    # Two re-plans, each with a strictly smaller prefix (same tools: still cached)...
    sizes = [len(a["messages"]) for a in attempts[:3]]
    assert sizes[0] > sizes[1] > sizes[2]
    assert all(a["tools"] == attempts[0]["tools"] for a in attempts[:3])
    # ... then one bounded transcript: no tools, tool results cut to 2000 characters.
    bounded = attempts[3]
    assert "tools" not in bounded
    assert [m["role"] for m in bounded["messages"]] == ["system", "user"]
    text = bounded["messages"][1]["content"]
    assert text.startswith("<transcript>") and INSTRUCTION_TAG in text
    assert "[... cut ...]" in text
    assert "digest from the transcript" in normal_bodies(server)[-1]["messages"][1]["content"]
    assert isinstance(events[-1], ev.TurnFinished)


def test_summary_request_never_sends_two_user_messages_in_a_row():
    from reasonix_core.agent.context import summary_request
    from reasonix_core.messages import Message

    instruction = Message(role="user", content="summarise")
    system = Message(role="system", content="s")
    asked = Message(role="user", content="an unanswered question")
    answered = [system, asked, Message(role="assistant", content="an answer")]
    assert summary_request(answered, instruction) == [*answered, instruction]
    request = summary_request([system, asked], instruction)
    assert [m.role for m in request] == ["system", "user", "assistant", "user"]
    assert request[:2] == [system, asked]  # the cached bytes come first, unchanged


async def test_a_manual_compaction_focus_steers_the_summary(workspace, server, setup):
    """Issue 14, item 9: ``/compact keep the table`` puts its words in the summary request."""
    names = make_files(workspace, [1600] * 9)
    state = {"manual": False}
    model = ScriptedModel(
        [read(n) for n in names],
        summary=lambda r: Reply(content="manual digest" if state["manual"] else ""),
    )
    server.responder = model
    async with runtime(workspace) as rt:
        await run_turn(rt, "read")
        state["manual"] = True
        before = len(server.requests)
        events = [e async for e in rt.agent.compact("keep the table of results")]
    assert [e.ok for e in of(events, ev.CompactionFinished)] == [True]
    asked = [r for r in server.requests[before:] if is_summary_request(r)]
    assert asked and all("keep the table of results" in r.body.decode() for r in asked)
    after = of(events, ev.CompactionFinished)[0]
    assert after.tokens_after is not None and after.tokens_after > 0
