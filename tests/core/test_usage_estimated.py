"""Issue 29 item 13: a stream without usage data (llama.cpp's server, some
gateways) is estimated locally, marked as estimated, and counted by the budgets;
steps and time to first token are counted whatever the usage."""

from __future__ import annotations

import json

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config
from tests.core.test_budgets import PRICED


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    text = (home / "config.toml").read_text()
    head, sep, tail = text.partition("\n[agent]")
    (home / "config.toml").write_text(head + PRICED + sep + tail)
    return server


def test_usage_missing_from_the_stream_is_estimated_and_marked(workspace, cfg, tmp_path):
    cfg.enqueue(Reply(content="a reply without any usage numbers", usage={}))
    metrics_path = tmp_path / "m.json"
    proc = reasonix(
        workspace, "run", "hi", "--output-format", "json", "--metrics", str(metrics_path)
    )
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads(metrics_path.read_text())
    assert metrics["steps"] == 1
    assert metrics["estimated_usage_requests"] == 1
    assert metrics["prompt_tokens"] > 1000  # system prompt and tool schemas, estimated
    assert metrics["completion_tokens"] > 0
    assert metrics["cost"] > 0
    assert len(metrics["ttft_ms"]) == 1 and metrics["ttft_ms"][0] is not None
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["usage"]["input_tokens"] > 0


def test_text_output_says_once_that_usage_is_estimated(workspace, cfg):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')], usage={}),
        Reply(content="done", usage={}),
    )
    proc = reasonix(workspace, "run", "read it")
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "estimated locally" in line]
    assert len(said) == 1, proc.stderr


def test_usage_reported_by_the_provider_is_not_marked(workspace, cfg, tmp_path):
    cfg.enqueue(Reply(content="counted by the server"))
    metrics_path = tmp_path / "m.json"
    proc = reasonix(workspace, "run", "hi", "--metrics", str(metrics_path))
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads(metrics_path.read_text())
    assert metrics["estimated_usage_requests"] == 0
    assert "estimated" not in proc.stderr


@pytest.mark.parametrize(
    ("flags", "word"),
    [(("--max-tokens", "100"), "token budget"), (("--max-cost", "0.000001"), "cost budget")],
)
def test_budgets_count_estimated_usage(workspace, cfg, tmp_path, flags, word):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')], usage={}),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')], usage={}),
        Reply(content="done", usage={}),
    )
    proc = reasonix(workspace, "run", "loop", *flags, "--output-format", "json")
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["subtype"] == "error_max_budget"
    assert word in result["result"]
    assert len(cfg.requests) == 1
