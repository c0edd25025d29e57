"""Issue 29 item 14: a compaction that was blocked is not counted, and a
window smaller than the frozen prefix (system prompt + tool schemas) is said
once, clearly, with what to do about it."""

from __future__ import annotations

import json

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


def small_window(home, server, window: int) -> None:
    write_config(home, server.base_url)
    path = home / "config.toml"
    text = path.read_text().replace("context_window = 1000000", f"context_window = {window}")
    path.write_text(text)


def test_prefix_over_the_threshold_is_said_once_and_not_counted_as_compaction(
    workspace, home, server, tmp_path
):
    # ~7.7k tokens of system prompt and tool schemas (as the server counts
    # them) against a 9.5k window (threshold 7.6k): a small local model.
    small_window(home, server, 9500)
    (workspace / "a.txt").write_text("alpha\n")
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}', id="call_2")]),
        Reply(content="done"),
    )
    metrics_path = tmp_path / "m.json"
    proc = reasonix(workspace, "run", "read a.txt twice", "--metrics", str(metrics_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("done")
    metrics = json.loads(metrics_path.read_text())
    assert metrics["compactions"] == 0  # nothing was compacted
    assert metrics["steps"] == 3
    said = [line for line in proc.stderr.splitlines() if "tool schemas" in line]
    assert len(said) == 1, proc.stderr
    line = said[0]
    assert "9,500" in line and "context_window" in line and "[tools] enabled" in line
    assert "only one message to keep" not in proc.stderr


def test_window_smaller_than_the_prefix_fails_naming_the_prefix(workspace, home, server, tmp_path):
    small_window(home, server, 3000)
    metrics_path = tmp_path / "m.json"
    proc = reasonix(workspace, "run", "hi", "--metrics", str(metrics_path))
    assert proc.returncode == 1
    assert server.requests == []
    assert "system prompt and tool schemas" in proc.stderr
    assert "3,000" in proc.stderr and "[tools] enabled" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(metrics_path.read_text())["compactions"] == 0
