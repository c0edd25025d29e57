"""A strict provider that omits tool-call reasoning (seed 003: the run recovers missing
tool-call reasoning; issue 19 item 6).

Under DeepSeek's protocol with thinking on, an answer's reasoning is sent back with its
tool calls. An answer with tool calls and no reasoning is a provider fault: the frozen
request is sent once more (the same bytes), and a second such answer fails the turn with
a clear error. Nothing of a faulty answer enters the transcript, so ``""`` is never
replayed in place of reasoning that was never there.
"""

from __future__ import annotations

import json

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.transcript import FAILED_MARK
from reasonix_core.config.schema import ProviderConfig
from reasonix_core.errors import MISSING_REASONING_KIND
from reasonix_core.metrics import MetricsSink
from reasonix_core.provider.anthropic import AnthropicProvider
from reasonix_core.provider.base import Request
from reasonix_testkit import (
    AnthropicDialect,
    ChatDialect,
    FixtureServer,
    Reply,
    ResponsesDialect,
    ToolCallSpec,
)
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages
from tests.core.provider_helpers import fixture_provider
from tests.core.test_provider_anthropic import anthropic_config
from tests.core.test_provider_responses import responses_config

READ = ToolCallSpec("read_file", '{"path":"a.txt"}')
# The fixture's DeepSeek reasons before tool calls unless a reply says it left it out.
BARE = Reply(tool_calls=[READ], omit_reasoning=True)


@pytest.fixture
def a_txt(workspace):
    (workspace / "a.txt").write_text("alpha\n")
    return workspace


def of(events: list[ev.Event], cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def metrics_of(events: list[ev.Event]):
    sink = MetricsSink()
    for event in events:
        sink.record(event)
    return sink.finish("success")


def assistant_turns(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


# --------------------------------------------------------------------------- the loop


@pytest.mark.usefixtures("configured")
async def test_missing_reasoning_gets_one_retry_of_the_frozen_request(a_txt, server):
    server.enqueue(
        BARE,
        Reply(reasoning="read the file first", tool_calls=[READ]),
        Reply(content="alpha"),
    )
    async with runtime(a_txt) as rt:
        events = await run_turn(rt, "read a.txt")
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "alpha"
    assert len(server.requests) == 3
    # The retry replays the frozen request byte for byte (no cache break).
    assert server.requests[1].body == server.requests[0].body
    (retry,) = of(events, ev.Retrying)
    assert retry.error_kind == MISSING_REASONING_KIND and retry.delay == 0
    assert "deepseek-flash" in retry.reason and "without their reasoning" in retry.reason
    # The tool ran once, for the answer that came with its reasoning.
    assert len(of(events, ev.ToolCallFinished)) == 1
    (assistant,) = assistant_turns(bodies(server)[2])
    assert assistant["reasoning_content"] == "read the file first"
    kept = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in kept] == ["read the file first", None]
    m = metrics_of(events)
    assert m.missing_reasoning_retries == 1 and m.retries == 1
    assert m.stream_retries == 0 and m.empty_final_retries == 0
    assert m.executor_requests == 3 and m.cache_breaks == []


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
async def test_every_kind_speaking_deepseeks_protocol_retries(kind, a_txt, home, monkeypatch):
    # DeepSeek's /anthropic endpoint and the Responses API replay reasoning the same way.
    dialect = AnthropicDialect("deepseek") if kind == "anthropic" else ResponsesDialect("deepseek")
    with FixtureServer(dialect, api_key=TEST_KEY) as srv:
        if kind == "anthropic":
            anthropic_config(home, srv.base_url, model="deepseek-flash", protocol="deepseek")
        else:
            responses_config(home, srv.base_url)
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        srv.enqueue(BARE, Reply(reasoning="read it", tool_calls=[READ]), Reply(content="alpha"))
        async with runtime(a_txt) as rt:
            events = await run_turn(rt, "read a.txt")
        assert [r.status for r in srv.requests] == [200, 200, 200]
        assert srv.requests[1].body == srv.requests[0].body
    (retry,) = of(events, ev.Retrying)
    assert retry.error_kind == MISSING_REASONING_KIND
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "alpha"


@pytest.mark.usefixtures("configured")
async def test_a_second_omission_fails_the_turn_and_keeps_nothing(a_txt, server):
    server.enqueue(BARE, BARE)
    async with runtime(a_txt) as rt:
        events = await run_turn(rt, "read a.txt")
        (failed,) = of(events, ev.TurnFailed)
        assert failed.kind == MISSING_REASONING_KIND
        assert "deepseek-flash" in failed.error and "no reasoning" in failed.error
        assert len(server.requests) == 2
        assert server.requests[1].body == server.requests[0].body
        assert of(events, ev.ToolCallStarted) == []  # no tool of a faulty answer ran
        messages = session_messages(rt)
        assert [m["role"] for m in messages if m["role"] != "system"] == ["user", "assistant"]
        assert messages[-1]["content"] == FAILED_MARK and not messages[-1].get("tool_calls")
        # The transcript is valid: the strict fixture accepts the next turn's request.
        server.enqueue(Reply(content="fine now"))
        again = await run_turn(rt, "try again")
    assert isinstance(again[-1], ev.TurnFinished) and again[-1].text == "fine now"
    assert server.requests[2].status == 200
    assert [a.get("tool_calls") for a in assistant_turns(bodies(server)[2])] == [None]


@pytest.mark.usefixtures("configured")
async def test_a_failure_after_a_tool_step_leaves_the_earlier_steps(a_txt, server):
    server.enqueue(Reply(reasoning="look", tool_calls=[READ]), BARE, BARE)
    async with runtime(a_txt) as rt:
        events = await run_turn(rt, "read a.txt twice")
        (failed,) = of(events, ev.TurnFailed)
        assert failed.kind == MISSING_REASONING_KIND and failed.steps == 2
        assert len(server.requests) == 3
        assert server.requests[2].body == server.requests[1].body
        roles = [m["role"] for m in session_messages(rt) if m["role"] != "system"]
        assert roles == ["user", "assistant", "tool"]  # the first step, whole; nothing after
        server.enqueue(Reply(content="done"))
        again = await run_turn(rt, "go on")
    assert isinstance(again[-1], ev.TurnFinished)
    assert server.requests[3].status == 200
    (kept,) = assistant_turns(bodies(server)[3])
    assert kept["reasoning_content"] == "look"


@pytest.mark.usefixtures("configured")
async def test_a_tool_answer_cut_at_the_output_limit_is_not_retried(a_txt, server):
    # Its calls are dropped (never replayed), so their reasoning does not matter.
    server.enqueue(Reply(tool_calls=[READ], omit_reasoning=True, finish_reason="length"))
    async with runtime(a_txt) as rt:
        events = await run_turn(rt, "read a.txt")
    assert of(events, ev.Retrying) == [] and len(server.requests) == 1
    assert isinstance(events[-1], ev.TurnFinished)


# --------------------------------------------------------------------------- unaffected


@pytest.mark.usefixtures("configured")
async def test_thinking_off_is_unaffected(a_txt, server):
    server.enqueue(Reply(tool_calls=[READ]), Reply(content="alpha"))
    async with runtime(a_txt, effort="disabled") as rt:
        events = await run_turn(rt, "read a.txt")
    assert json.loads(server.requests[0].body)["thinking"] == {"type": "disabled"}
    assert of(events, ev.Retrying) == [] and len(server.requests) == 2
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "alpha"


async def test_an_openai_protocol_provider_is_unaffected(a_txt, home, monkeypatch):
    with FixtureServer(ChatDialect("openai"), api_key=TEST_KEY) as openai:
        write_config(home, openai.base_url, protocol="openai", models=("gpt-test",))
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        openai.enqueue(Reply(tool_calls=[READ]), Reply(content="alpha"))
        async with runtime(a_txt) as rt:
            events = await run_turn(rt, "read a.txt")
        assert of(events, ev.Retrying) == [] and len(openai.requests) == 2
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "alpha"


@pytest.mark.parametrize(
    ("protocol", "effort", "needed"),
    [
        ("deepseek", "auto", True),
        ("deepseek", "high", True),
        ("deepseek", "max", True),
        ("deepseek", "disabled", False),
        ("openai", "high", False),
        ("none", "auto", False),
    ],
)
def test_which_requests_need_reasoning_with_their_calls(protocol, effort, needed):
    with FixtureServer(ChatDialect("deepseek"), api_key=TEST_KEY) as server:
        provider = fixture_provider(server, TEST_KEY, protocol)
        prepared = provider.prepare(Request(model="deepseek-flash", messages=(), effort=effort))
    assert prepared.calls_need_reasoning is needed


@pytest.mark.parametrize(
    ("base_url", "effort", "needed"),
    [
        ("https://api.deepseek.com/anthropic", "high", True),
        ("https://api.deepseek.com/anthropic", "disabled", False),
        ("https://api.anthropic.com", "high", False),  # Anthropic signs its own thinking
    ],
)
def test_the_anthropic_kind_checks_only_deepseek(base_url, effort, needed):
    config = ProviderConfig(
        name="ant", kind="anthropic", base_url=base_url, models=["m"], api_key_env="X"
    )
    prepared = AnthropicProvider(config, "k").prepare(
        Request(model="m", messages=(), effort=effort)
    )
    assert prepared.calls_need_reasoning is needed


# --------------------------------------------------------------------------- the CLI


def test_the_cli_fails_with_one_line_and_exit_1(a_txt, home, server):
    write_config(home, server.base_url)
    server.enqueue(BARE, BARE)
    proc = reasonix(a_txt, "run", "read a.txt")
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("reasonix: error:")]
    assert len(errors) == 1 and "deepseek-flash" in errors[0] and "no reasoning" in errors[0]
    assert "Traceback" not in proc.stderr
    assert len(server.requests) == 2


def test_the_json_result_names_the_fault(a_txt, home, server):
    write_config(home, server.base_url)
    server.enqueue(BARE, BARE)
    proc = reasonix(a_txt, "run", "read a.txt", "--output-format", "json")
    assert proc.returncode == 1
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert "deepseek-flash" in result["result"] and "no reasoning" in result["result"]
    assert result["metrics"]["missing_reasoning_retries"] == 1
    assert result["metrics"]["outcome"] == "error"
