"""Provider-side web search (issue 32 item 7): the Anthropic kind's server tool.

``web_search = true`` sends ``web_search_20250305`` after the function tools, the
same bytes on every request; the ``server_tool_use`` / ``web_search_tool_result``
blocks are kept as received and replayed unchanged, never run as our tool calls;
the searches are counted in usage, metrics and cost.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from reasonix_core import events as ev
from reasonix_core.config.loader import load_config
from reasonix_core.config.prices import Price
from reasonix_core.config.retired import retired_notices
from reasonix_core.config.schema import ProviderConfig
from reasonix_core.provider.anthropic import CONTENT_META, AnthropicProvider, parse_usage
from reasonix_core.provider.base import StreamEnd, ToolCallFragment
from reasonix_testkit import AnthropicDialect, FixtureServer, Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages
from tests.core.test_provider_anthropic import _sse, _start, _stop, collect, request

SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def _config(home: Path, base_url: str, *, search: str) -> None:
    (home / "config.toml").write_text(
        f"""
[[providers]]
name = "ds"
kind = "anthropic"
base_url = "{base_url}"
models = ["deepseek-flash"]
api_key_env = "{TEST_KEY_ENV}"
context_window = 200000
reasoning_protocol = "deepseek"
{search}

[agent]
retry_base_delay = 0.01
retry_max_delay = 0.05

[sandbox]
bash = "off"
""",
        encoding="utf-8",
    )


@pytest.fixture
def searching(home, monkeypatch):
    with FixtureServer(AnthropicDialect("deepseek"), api_key=TEST_KEY, seed=7) as srv:
        _config(
            home, srv.base_url + "/anthropic", search="web_search = true\nweb_search_max_uses = 3"
        )
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        yield srv


def _enc(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def test_search_blocks_replay_byte_for_byte_and_the_tool_stays_frozen(workspace, searching):
    (workspace / "a.txt").write_text("alpha\n")
    searching.enqueue(
        Reply(
            reasoning="look it up",
            web_searches=["python 3.13 release date"],
            tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')],
        ),
        Reply(reasoning="done", content="October 2024, and the file says alpha."),
        Reply(content="still yes"),
    )
    async with runtime(workspace) as rt:
        first = await run_turn(rt, "when was python 3.13 released?")
        second = await run_turn(rt, "sure?")
        stored = [m for m in session_messages(rt) if m["role"] == "assistant"]
    assert [r.status for r in searching.requests] == [200, 200, 200]
    sent = bodies(searching)
    # The server tool rides last with the function tools, byte-identical in every request.
    tools = [_enc(b["tools"]) for b in sent]
    assert len(set(tools)) == 1 and sent[0]["tools"][-1] == SEARCH_TOOL
    assert all(t.get("input_schema") for t in sent[0]["tools"][:-1])
    # Only read_file ran: the server_tool_use block is no call of ours.
    started = [e for e in first if isinstance(e, ev.ToolCallStarted)]
    assert [e.name for e in started] == ["read_file"]
    # Each request's messages start with the previous request's messages, byte for
    # byte, followed by the appended turn (the search blocks in place).
    for before, after in zip(sent, sent[1:], strict=False):
        n = len(before["messages"])
        assert _enc(after["messages"][:n]) == _enc(before["messages"])
    assistant = sent[1]["messages"][-2]
    kinds = [b["type"] for b in assistant["content"]]
    assert kinds == ["thinking", "server_tool_use", "web_search_tool_result", "tool_use"]
    server_use, result = assistant["content"][1], assistant["content"][2]
    assert server_use["input"] == {"query": "python 3.13 release date"}
    assert result["tool_use_id"] == server_use["id"] and len(result["content"]) == 2
    # The session keeps the whole content for the replay after a restart too.
    assert json.loads(stored[0]["meta"][CONTENT_META]) == assistant["content"]
    # Usage and metrics count the search.
    usage = [e.usage for e in first if isinstance(e, ev.UsageReported)]
    assert [u.web_search_requests for u in usage] == [1, 0]
    assert second[-1].text == "still yes"


async def test_continued_session_replays_the_search_blocks(workspace, searching):
    searching.enqueue(Reply(web_searches=["q one", "q two"], content="Two searches."))
    async with runtime(workspace) as rt:
        await run_turn(rt, "search twice")
    searching.enqueue(Reply(content="ok"))
    async with runtime(workspace, continue_last=True) as rt:
        events = await run_turn(rt, "and?")
    assert events[-1].text == "ok"
    first, second = bodies(searching)
    replayed = second["messages"][1]["content"]
    assert [b["type"] for b in replayed] == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert _enc(second["messages"][: len(first["messages"])]) == _enc(first["messages"])


async def test_no_search_tool_without_the_key(workspace, home, monkeypatch):
    with FixtureServer(AnthropicDialect("deepseek"), api_key=TEST_KEY, seed=8) as srv:
        _config(home, srv.base_url + "/anthropic", search="")
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        srv.enqueue(Reply(content="hi"))
        async with runtime(workspace) as rt:
            await run_turn(rt, "hello")
        tools = bodies(srv)[0]["tools"]
    assert all(t.get("type") != "web_search_20250305" for t in tools)


async def test_parser_keeps_server_blocks_and_citations_and_never_makes_calls():
    citation = {
        "type": "web_search_result_location",
        "url": "https://x.test",
        "title": "X",
        "encrypted_index": "e1",
        "cited_text": "x",
    }
    result_block = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://x.test", "title": "X"}],
    }
    payload = _sse(
        _start({"input_tokens": 10, "output_tokens": 1}),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query":'},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '"x"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result_block},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "citations_delta", "citation": citation},
        },
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "X."}},
        {"type": "content_block_stop", "index": 2},
        *_stop(
            "end_turn",
            {"output_tokens": 5, "server_tool_use": {"web_search_requests": 1}},
        ),
    )

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=payload, headers={"content-type": "text/event-stream"})

    cfg = ProviderConfig(name="raw", kind="anthropic", base_url="https://api.anthropic.com")
    provider = AnthropicProvider(cfg, "k", transport=httpx.MockTransport(handler))
    chunks = await collect(provider, request())
    assert not [c for c in chunks if isinstance(c, ToolCallFragment)]
    end = chunks[-1]
    assert isinstance(end, StreamEnd) and end.tool_calls == () and end.finish_reason == "stop"
    assert end.usage is not None and end.usage.web_search_requests == 1
    content = json.loads(dict(end.replay_meta)[CONTENT_META])
    assert content == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "x"},
        },
        result_block,
        {"type": "text", "text": "X.", "citations": [citation]},
    ]


def test_usage_counts_searches_and_prices_them():
    usage = parse_usage({"input_tokens": 5, "server_tool_use": {"web_search_requests": 4}})
    assert usage.web_search_requests == 4
    price = Price(cache_hit=0, cache_miss=0, output=0, web_search_per_1k=10.0)
    assert price.cost(
        cache_hit_tokens=0, cache_miss_tokens=0, output_tokens=0, web_search_requests=4
    ) == pytest.approx(0.04)


def test_openai_kind_web_search_is_a_start_notice(home, workspace):
    (home / "config.toml").write_text(
        """
[[providers]]
name = "legacy"
kind = "openai"
base_url = "https://api.deepseek.com"
web_search = true
models = ["deepseek-flash"]
""",
        encoding="utf-8",
    )
    config = load_config(workspace, home=home).config
    notices = retired_notices(config, home / "config.toml")
    assert notices == [
        "[[providers]] 'legacy': web_search is ignored on kind 'openai' "
        "(the kinds with a server-side web search: anthropic, responses)"
    ]


def test_web_search_max_uses_must_be_positive():
    with pytest.raises(ValueError, match="web_search_max_uses"):
        ProviderConfig(name="x", kind="anthropic", web_search=True, web_search_max_uses=0)


async def test_the_search_is_an_event_and_an_acp_search_call(workspace, searching):
    from reasonix_core.acp.updates import TurnUpdates

    searching.enqueue(Reply(web_searches=["q one"], content="Found."))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "search")
    searched = [e for e in events if isinstance(e, ev.WebSearched)]
    assert len(searched) == 1
    assert (searched[0].query, searched[0].results, searched[0].error) == ("q one", 2, "")
    assert searched[0].call_id.startswith("srvtoolu_")
    assert searched[0].to_json()["type"] == "web_search"
    (update,) = TurnUpdates(workspace).of(searched[0])
    assert update.kind == "search" and update.status == "completed"
    assert update.title == "Searched the web: q one"
    assert update.tool_call_id == searched[0].call_id


def test_stream_json_has_the_search_line(workspace, searching):
    import os
    import subprocess
    import sys

    searching.enqueue(Reply(web_searches=["q one"], content="Found it."))
    env = dict(os.environ)
    env[TEST_KEY_ENV] = TEST_KEY
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reasonix_tui.cli",
            "run",
            "search",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    (search,) = [x for x in lines if x.get("subtype") == "web_search"]
    assert search["query"] == "q one" and search["results"] == 2
    result = lines[-1]
    assert result["type"] == "result" and result["result"] == "Found it."
    assert result["usage"]["server_tool_use"] == {"web_search_requests": 1}
    assert result["metrics"]["web_search_requests"] == 1


# --------------------------------------------------------------------------- kind = "responses"


@pytest.fixture
def rs_searching(home, monkeypatch):
    from reasonix_testkit import ResponsesDialect
    from tests.core.test_provider_responses import responses_config

    with FixtureServer(ResponsesDialect("deepseek"), api_key=TEST_KEY, seed=9) as srv:
        responses_config(home, srv.base_url)
        path = home / "config.toml"
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace('kind = "responses"', 'kind = "responses"\nweb_search = true'),
            encoding="utf-8",
        )
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        yield srv


async def test_responses_kind_sends_the_tool_and_replays_web_search_call_items(
    workspace, rs_searching
):
    (workspace / "a.txt").write_text("alpha\n")
    rs_searching.enqueue(
        Reply(
            reasoning="search first",
            web_searches=["python 3.13"],
            content="Searching done, reading.",
            tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')],
        ),
        Reply(reasoning="done", content="Done."),
        Reply(content="again"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "search and read")
        await run_turn(rt, "more?")
    assert [r.status for r in rs_searching.requests] == [200, 200, 200]
    sent = bodies(rs_searching)
    assert len({_enc(b["tools"]) for b in sent}) == 1
    assert sent[0]["tools"][-1] == {"type": "web_search"}
    for before, after in zip(sent, sent[1:], strict=False):
        n = len(before["input"])
        assert _enc(after["input"][:n]) == _enc(before["input"])
    turn = sent[1]["input"][len(sent[0]["input"]) :]
    kinds = [item.get("type") for item in turn]
    assert kinds == [
        "reasoning",
        "web_search_call",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert turn[1]["action"] == {"type": "search", "query": "python 3.13"}
    started = [e.name for e in events if isinstance(e, ev.ToolCallStarted)]
    assert started == ["read_file"]
    searched = [e for e in events if isinstance(e, ev.WebSearched)]
    assert [(e.query, e.results, e.outcome) for e in searched] == [("python 3.13", None, "done")]
    usage = [e.usage for e in events if isinstance(e, ev.UsageReported)]
    assert [u.web_search_requests for u in usage] == [1, 0]


async def test_searches_reach_the_metrics_and_a_configured_price(workspace, home, monkeypatch):
    from reasonix_core.metrics import MetricsSink

    prices = """
[providers.prices."deepseek-flash"]
cache_hit = 0
cache_miss = 0
output = 0
web_search_per_1k = 10.0
"""
    with FixtureServer(AnthropicDialect("deepseek"), api_key=TEST_KEY, seed=10) as srv:
        _config(home, srv.base_url + "/anthropic", search="web_search = true")
        path = home / "config.toml"
        text = path.read_text(encoding="utf-8").replace("\n[agent]", prices + "\n[agent]")
        path.write_text(text, encoding="utf-8")
        monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
        srv.enqueue(Reply(web_searches=["a", "b", "c"], content="Three."))
        async with runtime(workspace) as rt:
            events = await run_turn(rt, "search")
    sink = MetricsSink()
    for event in events:
        sink.record(event)
    assert sink.metrics.web_search_requests == 3
    (usage,) = [e for e in events if isinstance(e, ev.UsageReported)]
    assert usage.usage.web_search_requests == 3
    assert usage.cost == pytest.approx(0.03) and sink.metrics.cost == pytest.approx(0.03)


async def test_hostile_server_blocks_never_become_calls_and_bad_results_are_errors():
    payload = _sse(
        _start({"input_tokens": 10, "output_tokens": 1}),
        # A server block named like one of our tools, with broken input JSON.
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "srvtoolu_x", "name": "bash"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "rm -rf /'},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_x",
                "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"},
            },
        },
        {"type": "content_block_stop", "index": 1},
        *_stop("tool_use", {"output_tokens": 5}),
    )

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=payload, headers={"content-type": "text/event-stream"})

    cfg = ProviderConfig(name="raw", kind="anthropic", base_url="https://api.anthropic.com")
    provider = AnthropicProvider(cfg, "k", transport=httpx.MockTransport(handler))
    chunks = await collect(provider, request())
    from reasonix_core.provider.base import WebSearchChunk

    (search,) = [c for c in chunks if isinstance(c, WebSearchChunk)]
    assert search.error == "unavailable" and search.results == 0 and search.query == ""
    end = chunks[-1]
    assert isinstance(end, StreamEnd) and end.tool_calls == ()
    assert not [c for c in chunks if isinstance(c, ToolCallFragment)]
    content = json.loads(dict(end.replay_meta)[CONTENT_META])
    assert content[0]["input"] == {"_raw": '{"command": "rm -rf /'}


def test_a_damaged_stored_content_falls_back_to_the_message_fields():
    from reasonix_core.messages import Message

    cfg = ProviderConfig(name="x", kind="anthropic", base_url="https://api.anthropic.com")
    provider = AnthropicProvider(cfg, "k")
    for stored in ("not json", '{"a": 1}', "[1, 2]"):
        msg = Message(role="assistant", content="hello", meta={CONTENT_META: stored})
        assert provider._assistant_blocks(msg) == [{"type": "text", "text": "hello"}]


def test_the_documented_entry_is_one_paste_to_web_search():
    """docs/CONFIG.md's ready-to-paste entry turns web search on (the built-in stays)."""
    import re
    import tomllib

    from reasonix_core.provider.base import Request

    doc = (Path(__file__).parents[2] / "docs" / "CONFIG.md").read_text(encoding="utf-8")
    section = doc.split("### The built-in DeepSeek provider", 1)[1].split("\n### ", 1)[0]
    (block,) = re.findall(r"```toml\n(.*?)```", section, flags=re.S)
    (entry,) = tomllib.loads(block)["providers"]
    cfg = ProviderConfig.model_validate(entry)
    assert (cfg.kind, cfg.web_search) == ("anthropic", True)
    assert cfg.base_url == "https://api.deepseek.com/anthropic"
    from reasonix_core.tool_schema import ToolSchema

    schema = ToolSchema(name="echo", description="d", parameters={"type": "object"})
    body = AnthropicProvider(cfg, "k").build_body(
        Request(model="deepseek-flash", messages=request().messages, tools=(schema,))
    )
    assert body["tools"][-1] == {"type": "web_search_20250305", "name": "web_search"}


def test_text_output_says_the_search_on_stderr(workspace, searching):
    import os
    import subprocess
    import sys

    searching.enqueue(Reply(web_searches=["q one"], content="Found it."))
    env = dict(os.environ)
    env[TEST_KEY_ENV] = TEST_KEY
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", "run", "search"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Found it."
    assert "● Searched the web: q one (2 results)" in proc.stderr


async def test_replayed_transcripts_show_the_past_searches(workspace, searching):
    """ACP's session/load and the TUI's resume draw the saved searches as cards."""
    from reasonix_core.acp.updates import replay_updates
    from reasonix_core.provider.searches import past_searches
    from reasonix_tui.replay import ToolEntry, replay_entries

    searching.enqueue(Reply(web_searches=["q one", "q two"], content="Two."))
    async with runtime(workspace) as rt:
        await run_turn(rt, "search twice")
        messages = list(rt.agent.messages)
    (answer,) = [m for m in messages if m.role == "assistant"]
    assert [(s.query, s.results) for s in past_searches(answer)] == [("q one", 2), ("q two", 2)]
    searches = [
        u for u in replay_updates(messages, workspace) if getattr(u, "kind", "") == "search"
    ]
    assert [u.title for u in searches] == ["Searched the web: q one", "Searched the web: q two"]
    cards = [e for e in replay_entries(messages) if isinstance(e, ToolEntry)]
    assert [(c.name, c.result) for c in cards] == [("Searched the web", "2 results")] * 2
