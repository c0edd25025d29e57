"""A consumer written for Claude Code (``claude -p --output-format stream-json|json``)
reads ``reasonix run``'s output with Claude Code's field names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def claude_code_consumer(stdout: str) -> dict[str, Any]:
    """What a Claude Code SDK consumer does with stream-json: only its field names."""
    seen: dict[str, Any] = {"blocks": [], "results": {}, "system": []}
    for raw in stdout.splitlines():
        msg = json.loads(raw)
        if msg["type"] == "system":
            if msg["subtype"] == "init":
                seen["init"] = msg
            else:
                seen["system"].append(msg["subtype"])
        elif msg["type"] == "assistant":
            assert msg["message"]["role"] == "assistant" and msg["parent_tool_use_id"] is None
            seen["blocks"].extend(msg["message"]["content"])
        elif msg["type"] == "user":
            for block in msg["message"]["content"]:
                if block["type"] == "tool_result":
                    seen["results"][block["tool_use_id"]] = block
        elif msg["type"] == "result":
            seen["result"] = msg
    return seen


def test_stream_json_reads_as_claude_codes(workspace, cfg) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(
        Reply(
            reasoning="read it, then write",
            tool_calls=[
                ToolCallSpec("read_file", '{"path":"a.txt"}'),
                ToolCallSpec("write_file", '{"path":"b.txt","content":"x"}'),
            ],
        ),
        Reply(content="It says alpha; writing was not allowed."),
    )
    proc = reasonix(workspace, "run", "read a.txt", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    seen = claude_code_consumer(proc.stdout)

    init = seen["init"]
    assert init["session_id"] and init["model"] == "deepseek-flash"
    assert "read_file" in init["tools"] and init["cwd"] == str(workspace)
    assert init["permissionMode"] == "default" and init["schema_version"] == 2

    kinds = [block["type"] for block in seen["blocks"]]
    assert kinds == ["thinking", "tool_use", "tool_use", "text"]
    thinking, read, write, text = seen["blocks"]
    assert thinking["thinking"] == "read it, then write"
    assert read["name"] == "read_file" and read["input"] == {"path": "a.txt"}
    assert write["name"] == "write_file" and write["input"] == {"path": "b.txt", "content": "x"}
    assert text["text"] == "It says alpha; writing was not allowed."
    assert "alpha" in seen["results"][read["id"]]["content"]
    assert seen["results"][read["id"]]["is_error"] is False
    assert seen["results"][write["id"]]["is_error"] is True
    # Reasonix's own events stay available as system lines.
    assert {"reasoning_delta", "usage", "tool_call_started", "turn_finished"} <= set(seen["system"])

    result = seen["result"]
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["session_id"] == init["session_id"]
    assert result["result"] == "It says alpha; writing was not allowed."
    assert result["num_turns"] == 2
    assert result["total_cost_usd"] > 0 and isinstance(result["duration_api_ms"], int)
    assert result["permission_denials"] == [
        {"tool_name": "write_file", "tool_use_id": write["id"], "tool_input": write["input"]}
    ]
    usage, metrics = result["usage"], result["metrics"]
    # A Claude Code consumer adds the cached part to input_tokens: no double count.
    prompt = usage["input_tokens"] + usage["cache_read_input_tokens"]
    assert prompt == metrics["prompt_tokens"]
    assert usage["cache_miss_input_tokens"] == usage["input_tokens"]
    assert usage["output_tokens"] == metrics["completion_tokens"]


def test_json_is_the_result_line_alone(workspace, cfg) -> None:
    cfg.enqueue(Reply(content="plain"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["result"] == "plain"
    assert result["permission_denials"] == [] and result["schema_version"] == 2
    assert result["total_cost_usd"] == result["total_cost"] and result["currency"] == "USD"


def test_a_subagents_events_stay_system_lines() -> None:
    from reasonix_core import events as ev
    from reasonix_core.claude_stream import ClaudeShape

    shape = ClaudeShape(session_id="s", model="m")
    child = ("explore",)
    lines = [
        *shape.lines(ev.StepStarted(step=1, model="m")),
        *shape.lines(ev.TextDelta(text="child words", agent_path=child)),
        *shape.lines(ev.StepStarted(step=1, model="m", agent_path=child)),
        *shape.lines(ev.TextDelta(text="parent words")),
        *shape.lines(ev.TurnFinished(stop_reason="stop", text="parent words", steps=1)),
    ]
    assistant = [line for line in lines if line["type"] == "assistant"]
    assert [a["message"]["content"] for a in assistant] == [
        [{"type": "text", "text": "parent words"}]
    ]
    assert [line["agent_path"] for line in lines if line.get("subtype") == "text_delta"] == [
        ["explore"],
        [],
    ]
