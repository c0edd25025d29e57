"""The delegation counters of seed 000 §3.17, from the events the runner emits."""

from __future__ import annotations

import pytest

from reasonix_core import events as ev
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn, runtime
from tests.core.subagent_helpers import calls, install, metrics_of, report

PARENT = "PARENT-TASK: two writers on one file"


@pytest.mark.usefixtures("configured")
async def test_two_children_writing_one_file_count_as_duplicate_work(workspace, server):
    script = install(server)
    script.when(
        PARENT,
        calls(
            ("task", {"prompt": "CHILD-ONE: write shared.txt"}),
            ("task", {"prompt": "CHILD-TWO: write shared.txt and own.txt"}),
        ),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-ONE",
        calls(("write_file", {"path": "shared.txt", "content": "one\n"})),
        report("complete"),
        Reply(content="one done"),
    )
    script.when(
        "CHILD-TWO",
        calls(
            ("read_file", {"path": "shared.txt"}),
            ("write_file", {"path": "shared.txt", "content": "two\n"}),
            ("write_file", {"path": "own.txt", "content": "own\n"}),
        ),
        Reply(content="two done, no report"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
    m = metrics_of(events)
    assert m.subagent_runs == 2
    assert m.subagent_mutations == 3
    assert m.duplicate_work_paths == 1
    assert m.completion_reports == 1 and m.completions_prose_only == 1
    assert m.false_completions == 0 and m.criterion_downgrades == 0
    assert m.subagent_tool_calls == 5  # 1 + report, and 3
    assert m.tool_calls == 7
    assert m.usage_by_source["subagent"].calls == 5
    assert m.to_json()["usage_by_source"]["subagent"]["calls"] == 5


def test_the_sink_counts_what_subagent_finished_reports():
    from reasonix_core.metrics import MetricsSink

    sink = MetricsSink()
    for event in (
        ev.SubagentStarted(name="a", child_path=("a",)),
        ev.SubagentStarted(name="b", agent_path=("a",), child_path=("a", "b")),
        ev.SubagentFinished(
            name="b",
            agent_path=("a",),
            child_path=("a", "b"),
            status="partial",
            claimed_status="complete",
            completion="report",
            downgrades=2,
            mutations=("x.py",),
            violations=("../escaped",),
        ),
        ev.SubagentFinished(name="a", child_path=("a",), status="done", read_only=True),
    ):
        sink.record(event)
    m = sink.finish("success")
    assert (m.subagent_runs, m.subagent_nested_runs) == (2, 1)
    assert m.false_completions == 1 and m.criterion_downgrades == 2
    assert m.write_scope_violations == 1 and m.subagent_mutations == 1
    assert m.completion_reports == 1 and m.completions_prose_only == 0
