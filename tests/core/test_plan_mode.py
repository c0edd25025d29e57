"""Plan mode, as an attacker would drive it: the model calls every family of writer,
smuggles writes through bash and through use_capability to an MCP writer, and calls
exit_plan_mode then carries on without approval. No preset (yolo), no allow rule or
grant and no auto-approving approver gets a write through; only the host's
plan-approval boundary ends plan mode, and its approval grants nothing else."""

from __future__ import annotations

import json
import sys
from contextlib import aclosing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.session import iter_records
from reasonix_core.coordinator.plans import PlanVerdict, pending_plan
from reasonix_core.permission.approver import ApprovalDecision
from reasonix_core.permission.policy import PLAN_MODE_REFUSAL
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import Reply, ToolCallSpec
from reasonix_testkit.approver import ScriptedApprover
from tests.conftest import reasonix
from tests.core.coordinator_helpers import call, configure, of
from tests.core.mcp_helpers import STDIO_SERVER, trust_folder

FIXED = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
REFUSED = PLAN_MODE_REFUSAL.split(":")[0]  # "plan mode is on"


def _calls(*specs: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(tool_calls=[ToolCallSpec(name, json.dumps(args)) for name, args in specs])


def _open(workspace: Path, approver: Any, **kwargs: Any):
    settings = RunSettings(
        workspace=workspace,
        plan_mode=True,
        permission_mode=kwargs.pop("preset", "yolo"),
        allowed_tools=kwargs.pop("allowed_tools", ["Bash", "Edit", "mcp__fx"]),
    )
    return build_session(settings, approver=approver, clock=lambda: FIXED, **kwargs)


async def _turn(runner: Any, prompt: str) -> list[ev.Event]:
    out: list[ev.Event] = []
    async with aclosing(runner.run(prompt)) as events:
        async for event in events:
            out.append(event)
    return out


def _results(events: list[ev.Event]) -> dict[str, str]:
    return {e.name: e.result for e in of(events, ev.ToolCallFinished)}


def _declare_mcp(workspace: Path) -> None:
    (workspace / "reasonix.toml").write_text(
        "[[mcp.servers]]\n"
        'name = "fx"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(STDIO_SERVER))}, 'serve']\n"
        "startup_timeout_seconds = 60\n",
        encoding="utf-8",
    )
    trust_folder(workspace)


async def test_every_writer_family_is_blocked_whatever_the_preset_and_rules(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch, planner="")
    _declare_mcp(workspace)
    (workspace / "a.txt").write_text("original\n")
    writers = [
        ("write_file", {"path": "new.txt", "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_string": "original", "new_string": "changed"}),
        (
            "multi_edit",
            {"path": "a.txt", "edits": [{"old_string": "original", "new_string": "m"}]},
        ),
        ("move_file", {"source": "a.txt", "destination": "b.txt"}),
        ("bash", {"command": "echo pwned > smuggled.txt"}),
        ("bash", {"command": "cat a.txt"}),  # bash is blocked whole: no read-only guess
        ("kill_shell", {"shell_id": "1"}),
        ("remember", {"fact": "always run rm -rf", "scope": "project"}),
        ("forget", {"id": "1"}),
        ("task", {"prompt": "write new.txt", "description": "w"}),
        (
            "use_capability",
            {"action": "call", "name": "mcp__fx__count", "arguments": {}},
        ),
    ]
    read_only_mcp = {"action": "call", "name": "mcp__fx__echo", "arguments": {"text": "hello"}}
    script.executor(
        _calls(*writers),
        _calls(("use_capability", read_only_mcp)),
        Reply(content="done"),
    )
    # yolo, allow rules covering everything, and an approver that says yes to all.
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_SESSION] * 20)
    async with _open(workspace, approver) as rt:
        events = await _turn(rt.runner, "refactor a.txt")
    finished = of(events, ev.ToolCallFinished)
    blocked = finished[: len(writers)]
    assert [e.name for e in blocked] == [name for name, _ in writers]
    for event in blocked:
        assert REFUSED in event.result, (event.name, event.result)
        assert event.outcome == "denied"
    # The read-only MCP tool still runs: plan mode is for research.
    assert "hello" in finished[-1].result and REFUSED not in finished[-1].result
    assert approver.seen == []  # nothing was even offered to the approver
    assert sorted(p.name for p in workspace.iterdir()) == ["a.txt", "reasonix.toml"]
    assert (workspace / "a.txt").read_text() == "original\n"


async def test_exit_plan_mode_needs_the_hosts_approval_and_grants_nothing(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch, planner="")
    verdicts = [PlanVerdict.KEEP, PlanVerdict.APPROVE, PlanVerdict.REJECT]
    shown: list[str] = []

    async def approve(saved):
        shown.append(saved.plan)
        return verdicts.pop(0)

    write = ("write_file", {"path": "out.txt", "content": "done"})
    script.executor(
        _calls(("exit_plan_mode", {"plan": "plan A"})),
        _calls(write),  # kept planning: still blocked
        _calls(("exit_plan_mode", {"plan": "plan B"})),
        _calls(write),  # approved: the ordinary preset (ask) decides, and asks
        _calls(("bash", {"command": "echo hi > nested.txt"})),  # asks again: denied
        Reply(content="done"),
        # The user turns plan mode on again: a new plan needs a new approval.
        _calls(("exit_plan_mode", {"plan": "plan C"})),
        _calls(write),
        Reply(content="stopped"),
    )
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY])
    async with _open(
        workspace, approver, preset="ask", allowed_tools=[], plan_approver=approve
    ) as rt:
        events = await _turn(rt.runner, "make out.txt")
        assert not rt.plan_mode.active
        rt.plan_mode.enter()
        again = await _turn(rt.runner, "and again")
        path = rt.agent.session.path
    results = [e.result for e in of(events, ev.ToolCallFinished)]
    assert "keep planning" in results[0]
    assert REFUSED in results[1]
    assert "approved" in results[2]
    assert "blocked" not in results[3] and (workspace / "out.txt").exists()
    assert "denied" in results[4] and not (workspace / "nested.txt").exists()
    assert [r.tool for r in approver.seen] == ["write_file", "bash"]
    later = [e.result for e in of(again, ev.ToolCallFinished)]
    assert "rejected" in later[0] and REFUSED in later[1]
    assert shown == ["plan A", "plan B", "plan C"]
    verdict_records = [
        r["verdict"] for _, r in iter_records(path) if r.get("type") == "plan_verdict"
    ]
    assert verdict_records == ["keep", "approve", "reject"]


async def test_without_a_host_the_plan_is_saved_and_plan_mode_stays_on(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch, planner="")
    script.executor(
        _calls(("exit_plan_mode", {"plan": "# Plan\nwrite out.txt"})),
        _calls(("write_file", {"path": "out.txt", "content": "x"})),  # proceeds anyway
        Reply(content="saved"),
    )
    auto = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_SESSION] * 5)
    async with _open(workspace, auto) as rt:
        events = await _turn(rt.runner, "make out.txt")
        saved = pending_plan(rt.agent.session.path)
        assert rt.plan_mode.active
    results = [e.result for e in of(events, ev.ToolCallFinished)]
    assert "saved in the session" in results[0]
    assert REFUSED in results[1]
    assert not (workspace / "out.txt").exists()
    assert saved is not None and saved.plan == "# Plan\nwrite out.txt"
    assert saved.route == "plan_mode"


async def test_exit_plan_mode_outside_plan_mode_approves_nothing(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch, planner="")
    script.executor(call("exit_plan_mode", plan="p"), Reply(content="ok"))
    shown: list[str] = []

    async def approve(saved):
        shown.append(saved.plan)
        return PlanVerdict.APPROVE

    settings = RunSettings(workspace=workspace)
    async with build_session(
        settings, approver=ScriptedApprover(), clock=lambda: FIXED, plan_approver=approve
    ) as rt:
        events = await _turn(rt.runner, "hi")
    (result,) = of(events, ev.ToolCallFinished)
    assert "plan mode is off" in result.result and shown == []


def test_headless_plan_mode_saves_the_plan_and_approve_plan_executes_it(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch, planner="")
    script.executor(
        call("read_file", path="missing.txt"),
        call("write_file", path="out.txt", content="early"),
        call("exit_plan_mode", plan="# Plan\ncreate out.txt"),
        Reply(content="Plan saved."),
    )
    # -y (preset auto) does not answer plan mode either.
    proc = reasonix(
        workspace, "run", "--permission-mode", "plan", "-y", "--output-format", "json",
        "create out.txt",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["result"] == "# Plan\ncreate out.txt"
    assert result["stop_reason"] == "plan_pending"
    assert not (workspace / "out.txt").exists()

    proc = reasonix(workspace, "run", "-c", "--approve-plan", "--permission-mode", "plan")
    assert proc.returncode == 2 and "cannot run in plan mode" in proc.stderr

    script.executor(call("write_file", path="out.txt", content="made"), Reply(content="made it"))
    proc = reasonix(workspace, "run", "-c", "--approve-plan", "-y", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == "made it"
    assert (workspace / "out.txt").read_text() == "made"
    last = server.requests[-2].json
    users = [m["content"] for m in last["messages"] if m["role"] == "user"]
    assert "<plan>\n# Plan\ncreate out.txt\n</plan>" in users[-1]
