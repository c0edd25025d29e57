"""Unexplained cache breaks are bugs: scripted sessions of every kind (tools,
retries, compaction of each kind, resume, MCP late start, model and effort
switches) run against the loopback fixture, and each must show exactly the
breaks its actions name, and never an ``unexplained`` one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.agent.cache_report import build_report
from reasonix_core.agent.session import read_request_records
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import HttpError, Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV
from tests.core.agent_helpers import run_turn, runtime
from tests.core.compaction_helpers import ScriptedModel, make_files, read, small_window_config
from tests.core.mcp_helpers import host, wait_until
from tests.core.mcp_helpers import server as mcp_server
from tests.core.test_mcp_runtime import gated


@pytest.fixture(autouse=True)
def _heuristic_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REASONIX_TOKENIZER", "heuristic")
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)


def breaks(events: list[ev.Event]) -> list[str]:
    return [e.reason for e in events if isinstance(e, ev.CacheBroken)]


def explained(session_path: Path) -> list[str]:
    """The session's breaks from its records; fails on an unexplained one."""
    report = build_report("s", read_request_records(session_path))
    assert report.skipped == 0
    reasons = [r.broke.reason for r in report.requests if r.broke is not None]
    assert "unexplained" not in reasons, reasons
    return reasons


@pytest.fixture
def small(home: Path, server: Any):
    def configure(window: int = 6000, extra: str = "") -> None:
        small_window_config(home, server.base_url, window=window, extra=extra)

    configure()
    return configure


async def test_tools_retries_and_resume_never_break(workspace, server, configured):
    (workspace / "f.txt").write_text("data\n")
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')], reasoning="r"),
        HttpError(503, "busy"),
        Reply(tool_calls=[ToolCallSpec("ls", "{}"), ToolCallSpec("glob", '{"pattern":"*"}')]),
        Reply(content=""),  # empty: retried with the same bytes
        Reply(content="done"),
        Reply(content="resumed"),
    )
    async with runtime(workspace) as rt:
        first = await run_turn(rt, "look around")
    async with runtime(workspace, continue_last=True) as rt:
        second = await run_turn(rt, "and now?")
        path = rt.agent.session.path
    assert breaks(first + second) == []
    assert explained(path) == []
    assert len(read_request_records(path)) == 5  # the 503 was not billed


async def test_switches_mid_session_and_across_a_resume_are_named(workspace, server, configured):
    server.enqueue(*(Reply(content=str(i)) for i in range(6)))
    async with runtime(workspace) as rt:
        await run_turn(rt, "one")
        rt.agent.set_model("deepseek-v4-pro")
        await run_turn(rt, "two")
        rt.agent.set_effort("high")
        await run_turn(rt, "three")
        await run_turn(rt, "four")
    async with runtime(workspace, continue_last=True, effort="max") as rt:
        await run_turn(rt, "five")
    async with runtime(workspace, continue_last=True, model="deepseek-flash") as rt:
        await run_turn(rt, "six")
        path = rt.agent.session.path
    assert explained(path) == ["model", "effort", "effort", "model"]


async def test_automatic_compaction_is_named(workspace, server, small):
    names = make_files(workspace, [1600] * 12)
    server.responder = ScriptedModel([read(n) for n in names])
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read every file")
        path = rt.agent.session.path
    assert breaks(events) and set(breaks(events)) == {"compact_auto"}
    assert set(explained(path)) == {"compact_auto"}
    # The summary request is a side request: recorded, never a break itself.
    records = read_request_records(path)
    assert any(r["source"] == "compaction" and "break" not in r for r in records)


async def test_manual_compaction_then_resume_is_named_once(workspace, server, small):
    names = make_files(workspace, [1600] * 5)
    server.responder = ScriptedModel([read(n) for n in names])
    async with runtime(workspace) as rt:
        await run_turn(rt, "read")
        compacted = [e async for e in rt.agent.compact()]
        assert [e.reason for e in compacted if isinstance(e, ev.PrefixChanged)] == [
            "compact_manual"
        ]
        after = await run_turn(rt, "go on")
    async with runtime(workspace, continue_last=True) as rt:
        resumed = await run_turn(rt, "and on")
        path = rt.agent.session.path
    assert breaks(after) == ["compact_manual"]
    assert breaks(resumed) == []
    assert explained(path) == ["compact_manual"]


async def test_overflow_rescue_and_truncation_are_named(workspace, server, small):
    small(window=20_000, extra="max_output_tokens = -1\n")
    server.max_context_tokens = 5000
    names = make_files(workspace, [1600] * 12)
    server.responder = ScriptedModel([read(n) for n in names])
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read")
        path = rt.agent.session.path
    assert isinstance(events[-1], ev.TurnFinished)
    assert breaks(events) and set(explained(path)) <= {"compact_auto", "truncate"}


async def test_truncation_at_the_hard_limit_is_named(workspace, server, small):
    names = make_files(workspace, [7000] * 3)
    server.responder = ScriptedModel([read(n) for n in names], summary=lambda r: Reply(content=""))
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read the three files")
        path = rt.agent.session.path
    assert breaks(events) == ["truncate"]
    assert explained(path) == ["truncate"]


async def test_an_mcp_server_starting_late_breaks_nothing(workspace, configured, tmp_path):
    call = {"action": "call", "name": "mcp__late__echo", "arguments": {"text": "hello"}}
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]),
        Reply(content="done"),
    )
    release = anyio.Event()
    h = host(tmp_path, mcp_server("late"), connectors={"late": lambda: gated(release)})
    async with h:
        settings = RunSettings(workspace=workspace, mcp_wait=False)
        async with build_session(settings, approver=FailClosedApprover(), mcp_host=h) as rt:

            async def release_after_step_one() -> None:
                await wait_until(lambda: configured.requests)
                release.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(release_after_step_one)
                events = await run_turn(rt, "say hello through the plugin")
            path = rt.agent.session.path
    assert isinstance(events[-1], ev.TurnFinished)
    assert breaks(events) == []
    assert explained(path) == []


async def test_a_changed_tool_set_across_a_resume_is_named(workspace, server, configured, home):
    server.enqueue(Reply(content="a"), Reply(content="b"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
    config = home / "config.toml"
    config.write_text(config.read_text() + '\n[tools]\nenabled = ["read_file", "ls"]\n')
    async with runtime(workspace, continue_last=True) as rt:
        events = await run_turn(rt, "second")
        path = rt.agent.session.path
    assert [e.reason for e in events if isinstance(e, ev.PrefixChanged)] == ["tools"]
    brk = next(e for e in events if isinstance(e, ev.CacheBroken))
    assert brk.reason == "tools" and brk.first_diff_byte is not None and brk.first_diff_byte > 0
    records = read_request_records(path)
    # Only the model and effort before the tools were kept: nearly all of it re-billed.
    assert 0.9 * records[0]["prompt_tokens"] < brk.rebilled_tokens <= records[0]["prompt_tokens"]
    assert explained(path) == ["tools"]


async def test_a_changed_system_prompt_is_named(workspace, server, configured):
    from reasonix_core.messages import Message

    server.enqueue(Reply(content="a"), Reply(content="b"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
        rt.agent.messages[0] = Message(role="system", content="another system prompt")
        events = await run_turn(rt, "second")
        path = rt.agent.session.path
    assert breaks(events) == ["system"]
    assert explained(path) == ["system"]
