"""Per-request cache accounting: every request that is not an append-only
extension of its agent's previous one is a named break, priced; the fixture's
cache model decides what the provider actually served from the cache."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.cache_ledger import (
    Baseline,
    CacheLedger,
    diverge,
    escape_bytes,
    render_prefix,
)
from reasonix_core.agent.session import read_request_records, requests_path
from reasonix_core.messages import Message
from reasonix_core.metrics import MetricsSink
from reasonix_core.provider.base import Request
from reasonix_testkit import Reply, ToolCallSpec
from tests.core.agent_helpers import run_turn, runtime

pytestmark = pytest.mark.usefixtures("configured")


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def metrics_of(*runs: list[ev.Event]):
    sink = MetricsSink()
    for events in runs:
        for event in events:
            sink.record(event)
    return sink.finish("success")


async def test_a_plain_continued_session_has_no_break(workspace, server):
    (workspace / "f.txt").write_text("data\n")
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')], reasoning="r"),
        Reply(content="one"),
        Reply(content="two"),
    )
    async with runtime(workspace) as rt:
        first = await run_turn(rt, "read it")
        second = await run_turn(rt, "and again")
        path = rt.agent.session.path
    m = metrics_of(first, second)
    assert m.cache_breaks == []
    assert m.executor_requests == 3 and m.compaction_requests == 0 and m.planner_requests == 0
    assert len(m.ttft_ms) == 3 and all(t is not None and t >= 0 for t in m.ttft_ms)
    assert m.wall_ms == m.duration_ms
    records = read_request_records(path)
    assert [r["request"] for r in records] == [1, 2, 3]
    assert [e.request for e in of(first + second, ev.UsageReported)] == [1, 2, 3]
    assert all("break" not in r and r["prefix"]["bytes"] > 0 for r in records)
    # The requests grew append-only, so the provider's cache served the earlier part.
    assert records[2]["cache_hit_tokens"] > records[1]["cache_hit_tokens"] > 0


async def test_a_model_switch_is_one_break_that_rebills_the_previous_prompt(workspace, server):
    server.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    async with runtime(workspace) as rt:
        first = await run_turn(rt, "first")
        rt.agent.set_model("deepseek-v4-pro")
        second = await run_turn(rt, "second")
        third = await run_turn(rt, "third")
    m = metrics_of(first, second, third)
    assert len(m.cache_breaks) == 1
    brk = m.cache_breaks[0]
    previous = of(first, ev.UsageReported)[0].usage
    now = of(second, ev.UsageReported)[0]
    assert brk.request == 2 and brk.reason == "model" and brk.first_diff_byte == 0
    # Everything the previous request had cached is billed again ...
    assert brk.rebilled_tokens == previous.prompt_tokens
    # ... as the fixture's cache (a separate space per model) confirms.
    assert now.usage.cache_hit_tokens == 0
    # v4-pro off-peak or peak: the miss price minus the hit price, per token.
    per_token = brk.rebilled_cost / brk.rebilled_tokens * 1e6
    assert per_token == pytest.approx(0.66 - 0.022) or per_token == pytest.approx(1.32 - 0.044)
    assert of(second, ev.CacheBroken)[0].context[1] != of(second, ev.CacheBroken)[0].context[2]


async def test_an_effort_switch_is_a_named_break(workspace, server):
    server.enqueue(Reply(content="a"), Reply(content="b"))
    async with runtime(workspace) as rt:
        first = await run_turn(rt, "first")
        rt.agent.set_effort("max")
        second = await run_turn(rt, "second")
    breaks = metrics_of(first, second).cache_breaks
    assert [(b.reason, b.first_diff_byte) for b in breaks] == [("effort", 0)]


async def test_a_silent_rewrite_of_history_is_unexplained(workspace, server):
    """A bug that edits an earlier message without a PrefixChanged is caught,
    located at the first differing byte, and only the bytes after it re-bill."""
    server.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    async with runtime(workspace) as rt:
        first = await run_turn(rt, "first question, long enough to matter " * 20)
        second = await run_turn(rt, "second")
        index = next(i for i, m in enumerate(rt.agent.messages) if m.role == "assistant")
        rt.agent.messages[index] = Message(role="assistant", content="A rewritten answer")
        third = await run_turn(rt, "third")
    m = metrics_of(first, second, third)
    assert [b.reason for b in m.cache_breaks] == ["unexplained"]
    brk = of(third, ev.CacheBroken)[0]
    before = of(second, ev.UsageReported)[0].usage
    assert 0 < brk.rebilled_tokens < before.prompt_tokens
    assert brk.first_diff_byte is not None and brk.first_diff_byte > 0
    _common, was, now = brk.context
    assert was.startswith('a"') and now.startswith("A rewritten")


async def test_records_survive_a_resume_and_a_resumed_model_switch_is_named(workspace, server):
    server.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
    async with runtime(workspace, continue_last=True) as rt:
        plain = await run_turn(rt, "second")
    async with runtime(workspace, continue_last=True, model="deepseek-v4-pro") as rt:
        switched = await run_turn(rt, "third")
        path = rt.agent.session.path
    assert not of(plain, ev.CacheBroken)
    assert [(b.reason, b.request) for b in of(switched, ev.CacheBroken)] == [("model", 3)]
    records = read_request_records(path)
    assert [r["request"] for r in records] == [1, 2, 3]
    assert records[2]["break"]["reason"] == "model"
    assert records[2]["break"]["rebilled_tokens"] == records[1]["prompt_tokens"]


async def test_a_continued_session_keeps_the_model_and_effort_it_last_used(workspace, server):
    """/model and /effort after the header was written: continuing must not
    silently go back to the header's model (an unexplained break)."""
    server.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
        rt.agent.set_model("deepseek-v4-pro")
        rt.agent.set_effort("max")
        await run_turn(rt, "second")
    async with runtime(workspace, continue_last=True) as rt:
        assert (rt.agent.model, rt.agent.effort) == ("deepseek-v4-pro", "max")
        resumed = await run_turn(rt, "third")
    assert not of(resumed, ev.CacheBroken) and not of(resumed, ev.PrefixChanged)
    assert of(resumed, ev.UsageReported)[0].usage.cache_hit_tokens > 0


async def test_a_recorded_model_the_config_lost_falls_back_to_the_header(workspace, server):
    server.enqueue(Reply(content="a"), Reply(content="b"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
        path = rt.agent.session.path
    with requests_path(path).open("a") as fh:  # as if the last request used a removed model
        record = read_request_records(path)[-1]
        record["prefix"]["model"] = "gone-model"
        fh.write(json.dumps(record) + "\n")
    async with runtime(workspace, continue_last=True) as rt:
        assert rt.agent.model == "deepseek-flash"
        await run_turn(rt, "second")


async def test_empty_answers_count_as_empty_final_retries(workspace, server):
    server.enqueue(Reply(content=""), Reply(content="fine"))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "hi")
    m = metrics_of(events)
    assert m.empty_final_retries == 1 and m.stream_retries == 0 and m.retries == 1
    # The empty answer was billed too: two requests, the retry replaying the same bytes.
    assert m.executor_requests == 2 and len(m.ttft_ms) == 2 and m.cache_breaks == []


def test_the_metrics_json_has_the_seed_names():
    data = MetricsSink().finish("success").to_json()
    for name in (
        "cache_breaks",
        "ttft_ms",
        "stream_retries",
        "reasoning_replays",
        "empty_final_retries",
        "executor_requests",
        "planner_requests",
        "compaction_requests",
        "wall_ms",
    ):
        assert name in data


# --------------------------------------------------------------------------- the ledger itself


def _request(*contents: str, model: str = "m") -> Request:
    msgs = [Message(role="system", content="sys")]
    msgs += [Message(role="user", content=c) for c in contents]
    return Request(model=model, messages=tuple(msgs))


def test_an_appended_message_is_no_divergence_and_an_edit_is_located():
    base = Baseline.of(render_prefix(_request("hello")), 100, "")
    assert diverge(base, render_prefix(_request("hello", "more"))) is None
    edited = render_prefix(_request("hellO"))
    found = diverge(base, edited)
    assert found is not None
    assert edited.data[: found.first_diff_byte] == base.data[: found.first_diff_byte]  # type: ignore[index]
    assert edited.data[found.first_diff_byte] == ord("O")  # type: ignore[index]
    assert 0 < found.rebilled_tokens < 100


def test_a_baseline_read_back_from_records_still_detects_breaks():
    prefix = render_prefix(_request("hello"))
    record = {"prompt_tokens": 80, "prefix": Baseline.of(prefix, 80, "").to_record()}
    base = Baseline.from_record(record)
    assert base is not None and base.data is None
    assert diverge(base, render_prefix(_request("hello", "more"))) is None
    other_model = diverge(base, render_prefix(_request("hello", model="n")))
    assert other_model is not None and other_model.first_diff_byte == 0
    assert other_model.rebilled_tokens == 80
    edited = diverge(base, render_prefix(_request("hellO")))
    assert edited is not None and edited.first_diff_byte is None and edited.rebilled_tokens == 80


@pytest.mark.parametrize(
    "record",
    [
        {"prefix": "x"},
        {"prefix": {"bytes": "many"}},
        {"prefix": {"bytes": 1, "digest": "d", "header": 5, "tools": [1, "d"]}},
        {"prefix": None},
        {},
    ],
)
def test_hostile_records_are_no_baseline(record):
    assert Baseline.from_record(record) is None


def test_a_hostile_records_file_is_skipped_line_by_line(tmp_path):
    session = tmp_path / "s.jsonl"
    requests_path(session).write_text(
        '[1,2]\n{"request": 1, "prefix": {"bytes": -1}}\nnot json\n{"request": 2}\n{"torn'
    )
    records = read_request_records(session)
    assert [r["request"] for r in records] == [1, 2]
    ledger = CacheLedger(session, records=records)
    assert ledger.requests == 2 and ledger.baseline is None


def test_context_is_escaped_for_a_terminal():
    text = escape_bytes(b"\x1b[2J\r\n\xff\xe4\xb8\xad\x07")
    assert text.isprintable()
    # Controls and an invalid byte are shown as escapes; printable text as is.
    assert text == "\\x1b[2J\\x0d\\n\\xff\u4e2d\\x07"


def test_rebilled_cost_uses_the_price_at_request_time(workspace):
    """Peak doubles DeepSeek's price: the same break costs twice as much."""
    from reasonix_core.config import Config
    from reasonix_core.session.prices import make_price_fn

    price = make_price_fn(Config())
    from reasonix_core.agent.model_call import ModelCall

    call = ModelCall.__new__(ModelCall)
    call.price = price
    peak = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)  # Tuesday 02:00 UTC
    off = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    at_peak, currency = call.rebill_cost("deepseek-flash", 1_000_000, peak)
    off_peak, _ = call.rebill_cost("deepseek-flash", 1_000_000, off)
    assert currency == "USD"
    assert off_peak == pytest.approx(0.15 - 0.003)
    assert at_peak == pytest.approx(2 * off_peak)


def test_metrics_json_round_trips():
    sink = MetricsSink()
    sink.record(
        ev.CacheBroken(
            request=3, reason="model", first_diff_byte=0, rebilled_tokens=10, rebilled_cost=1e-5
        )
    )
    data = json.loads(json.dumps(sink.finish("success").to_json()))
    assert data["cache_breaks"] == [
        {
            "request": 3,
            "reason": "model",
            "first_diff_byte": 0,
            "rebilled_tokens": 10,
            "rebilled_cost": 1e-5,
        }
    ]


def test_the_renderer_keeps_messages_but_never_a_stale_rendering():
    from reasonix_core.agent.cache_ledger import PrefixRenderer

    render = PrefixRenderer()
    first = _request("hello", "world")
    assert render(first) == render_prefix(first)
    # The same message objects, one appended: identical bytes to a fresh rendering.
    grown = Request(model="m", messages=(*first.messages, Message(role="user", content="more")))
    assert render(grown) == render_prefix(grown)
    # A different object in the same place (same id is impossible while memoised).
    edited = Request(model="m", messages=(first.messages[0], Message(role="user", content="x")))
    assert render(edited) == render_prefix(edited)


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        (datetime(2026, 12, 1, 2, 30, tzinfo=UTC), datetime(2026, 12, 1, 4, 0, tzinfo=UTC)),
        (datetime(2026, 12, 1, 9, 59, tzinfo=UTC), datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
        (datetime(2026, 12, 1, 4, 0, tzinfo=UTC), None),  # windows are open at the end
        (datetime(2026, 12, 5, 2, 30, tzinfo=UTC), None),  # Saturday
    ],
)
def test_next_off_peak(when, expected):
    from reasonix_core.config.prices import next_off_peak

    assert next_off_peak(when) == expected


def test_a_report_never_sums_costs_across_currencies():
    from reasonix_core.agent.cache_report import build_report

    report = build_report(
        "s",
        [
            {"request": 1, "cost": 1.0, "currency": "USD"},
            {"request": 2, "cost": 7.0, "currency": "CNY"},
        ],
    )
    assert report.currency == "mixed" and report.cost == 0.0
    assert [r.cost for r in report.requests] == [1.0, 7.0]
