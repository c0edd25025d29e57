"""A DeepSeek model behind a host without "deepseek" in its name (a gateway, a local
proxy): the loopback fixture speaks DeepSeek on 127.0.0.1, and the provider is
declared without ``reasoning_protocol``."""

from __future__ import annotations

import json

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import TEST_KEY_ENV, reasonix

READ = ToolCallSpec("read_file", '{"path":"a.txt"}')


def gateway_config(home, base_url: str, model: str, protocol: str | None = None) -> None:
    line = f'reasoning_protocol = "{protocol}"\n' if protocol else ""
    (home / "config.toml").write_text(
        f"""
[[providers]]
name = "gateway"
kind = "openai"
base_url = "{base_url}"
models = ["{model}"]
default = "{model}"
api_key_env = "{TEST_KEY_ENV}"
context_window = 1000000
{line}
[agent]
retry_base_delay = 0.01
retry_max_delay = 0.05

[sandbox]
bash = "off"
""",
        encoding="utf-8",
    )


@pytest.fixture
def gateway(home, server, workspace):
    server.models = None  # a gateway's own model names
    (workspace / "a.txt").write_text("alpha\n")
    return server


def _assistants(request) -> list[dict]:
    return [m for m in json.loads(request.body)["messages"] if m["role"] == "assistant"]


def test_a_reasoning_delta_makes_later_requests_replay_it(workspace, home, gateway):
    gateway_config(home, gateway.base_url, "coder")
    gateway.enqueue(Reply(reasoning="let me read it", tool_calls=[READ]), Reply(content="alpha"))
    proc = reasonix(workspace, "run", "read a.txt", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert len(gateway.requests) == 2  # no 400, no retry
    (assistant,) = _assistants(gateway.requests[1])
    assert assistant["reasoning_content"] == "let me read it"


def test_deepseeks_400_switches_and_retries_once_with_a_notice(workspace, home, gateway):
    gateway_config(home, gateway.base_url, "coder")
    # No reasoning in the stream to learn from (the fixture's DeepSeek reasons before
    # tool calls unless told not to): the second request meets the 400.
    gateway.enqueue(Reply(tool_calls=[READ], omit_reasoning=True), Reply(content="alpha"))
    proc = reasonix(workspace, "run", "read a.txt", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    assert len(gateway.requests) == 3
    assert gateway.requests[1].status == 400
    assert "reasoning_content" not in _assistants(gateway.requests[1])[0]
    assert _assistants(gateway.requests[2])[0]["reasoning_content"] == ""
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    notices = [line["text"] for line in lines if line.get("subtype") == "notice"]
    assert any("retrying with it" in text for text in notices)
    (changed,) = [line for line in lines if line.get("subtype") == "prefix_changed"]
    assert changed["reason"] == "reasoning_replay"
    metrics = lines[-1]["metrics"]
    assert metrics["reasoning_replays"] == 1
    assert metrics["cache_breaks"] == []  # the retried request extends the first one


def test_the_model_name_says_deepseek(workspace, home, gateway):
    gateway_config(home, gateway.base_url, "deepseek-v4-pro")
    # A gateway's answer without reasoning: its DeepSeek model is only guessed from the
    # name, not known to think (it may be a non-thinking one), so no missing-reasoning
    # retry (that is for DeepSeek's protocol with thinking on): the key replays empty.
    gateway.enqueue(Reply(tool_calls=[READ], omit_reasoning=True), Reply(content="alpha"))
    proc = reasonix(workspace, "run", "read a.txt")
    assert proc.returncode == 0, proc.stderr
    assert len(gateway.requests) == 2
    assert _assistants(gateway.requests[1])[0]["reasoning_content"] == ""


def test_an_explicit_protocol_is_the_override(workspace, home, gateway):
    # reasoning_protocol = "openai" said so: no detection, DeepSeek's 400 is final.
    gateway_config(home, gateway.base_url, "coder", protocol="openai")
    gateway.enqueue(Reply(reasoning="hmm", tool_calls=[READ]), Reply(content="alpha"))
    proc = reasonix(workspace, "run", "read a.txt")
    assert proc.returncode == 1
    assert "reasoning_content" in proc.stderr
    assert len(gateway.requests) == 2


def test_a_continued_session_replays_from_its_first_request(workspace, home, gateway):
    gateway_config(home, gateway.base_url, "coder")
    gateway.enqueue(Reply(reasoning="let me read it", tool_calls=[READ]), Reply(content="alpha"))
    assert reasonix(workspace, "run", "read a.txt").returncode == 0
    # A new process: nothing learned in memory, the session's history knows.
    gateway.enqueue(Reply(content="again"))
    proc = reasonix(workspace, "run", "-c", "and again?")
    assert proc.returncode == 0, proc.stderr
    assert [r.status for r in gateway.requests] == [200, 200, 200]  # no 400, no retry
    (assistant, _) = _assistants(gateway.requests[2])
    assert assistant["reasoning_content"] == "let me read it"
