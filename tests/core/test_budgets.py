"""Task budgets (issue 19 item 1): `reasonix run --max-cost/--max-tokens/--max-time`
and `[agent] task_*_budget` stop a multi-step run at a step boundary."""

from __future__ import annotations

import json

import pytest

from reasonix_core.agent.budget import BudgetLimits, BudgetMeter, parse_duration
from reasonix_core.usage import Usage
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config

PRICED = """
[providers.prices.deepseek-flash]
cache_hit = 1000
cache_miss = 1000
output = 1000
"""


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url, extra="")
    text = (home / "config.toml").read_text()
    # The price table belongs to the [[providers]] entry, which comes first.
    head, sep, tail = text.partition("\n[agent]")
    (home / "config.toml").write_text(head + PRICED + sep + tail)
    return server


def _three_steps(server, *, delay: float = 0.0) -> None:
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')], delay=delay),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="done"),
    )


def _session_messages(home) -> list[dict]:
    (path,) = [p for p in (home / "sessions").rglob("*.jsonl") if "planners" not in p.parts]
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r.get("message", r) for r in rows if "role" in r.get("message", r)]


@pytest.mark.parametrize(
    ("flags", "word"),
    [
        (("--max-tokens", "1"), "token budget"),
        (("--max-cost", "0.000001"), "cost budget"),
        (("--max-time", "1s"), "time budget"),
    ],
)
def test_budget_stops_the_run_at_a_step_boundary(workspace, home, cfg, tmp_path, flags, word):
    (workspace / "a.txt").write_text("a\n")
    _three_steps(cfg, delay=1.2)
    metrics_path = tmp_path / "m.json"
    proc = reasonix(
        workspace, "run", "loop", *flags, "--output-format", "json",
        "--metrics", str(metrics_path),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["subtype"] == "error_max_budget" and result["is_error"] is True
    assert word in result["result"]
    # One request, its tool answered (never cut mid-tool), then the stop.
    assert len(cfg.requests) == 1
    metrics = json.loads(metrics_path.read_text())
    assert metrics["steps"] == 1 and metrics["tool_calls"] == 1
    assert metrics["outcome"] == "error"
    roles = [m["role"] for m in _session_messages(home)]
    assert roles[-2:] == ["assistant", "tool"]


def test_continue_goes_on_with_a_new_budget(workspace, home, cfg):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]))
    first = reasonix(workspace, "run", "loop", "--max-tokens", "1")
    assert first.returncode == 1 and "token budget" in first.stderr
    cfg.enqueue(Reply(content="finished"))
    again = reasonix(workspace, "run", "-c", "go on", "--max-tokens", "1000000")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "finished"


def test_config_budget_applies_and_the_flag_wins(workspace, home, cfg):
    (workspace / "a.txt").write_text("a\n")
    config = home / "config.toml"
    config.write_text(config.read_text().replace("[agent]\n", "[agent]\ntask_token_budget = 1\n"))
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]))
    proc = reasonix(workspace, "run", "loop", "--output-format", "json")
    assert json.loads(proc.stdout.strip().splitlines()[-1])["subtype"] == "error_max_budget"
    _three_steps(cfg)
    proc = reasonix(workspace, "run", "-c", "loop", "--max-tokens", "10000000")
    assert proc.returncode == 0, proc.stderr


def test_bad_budget_flags_are_usage_errors(workspace, cfg):
    for flags in (("--max-time", "soon"), ("--max-cost", "0"), ("--max-tokens", "0")):
        proc = reasonix(workspace, "run", "hi", *flags)
        assert proc.returncode == 2 and proc.stderr.startswith("reasonix: error:")
    assert cfg.requests == []


def test_meter_counts_every_source_and_parses_durations():
    meter = BudgetMeter(BudgetLimits(tokens=100))
    meter.charge(Usage(prompt_tokens=40, completion_tokens=10), 0.0)  # executor
    assert meter.exhausted() is None
    meter.charge(Usage(prompt_tokens=50), 0.0)  # a compaction or subagent call
    assert "token budget" in (meter.exhausted() or "")
    assert parse_duration("1h30m") == 5400 and parse_duration("90") == 90
    with pytest.raises(ValueError):
        parse_duration("-5m")
