"""The planner + executor Coordinator (seed 000 §3.5, seed 003's pinned names).

Scripted planner and executor at the loopback fixture, told apart by model name.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from datetime import UTC, datetime

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.session import read_session
from reasonix_core.coordinator.coordinator import Coordinator
from reasonix_core.coordinator.plans import PlanVerdict, pending_plan
from reasonix_core.coordinator.routes import Route, TurnMeta, decide_route
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import HttpError, Reply, Stall
from tests.conftest import reasonix
from tests.core.coordinator_helpers import (
    EXECUTOR_MODEL,
    PLANNER_MODEL,
    call,
    configure,
    drive,
    models,
    of,
    requests_for,
    submit,
)

FIXED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _open(workspace, **kwargs):
    return build_session(
        RunSettings(workspace=workspace),
        approver=FailClosedApprover(),
        clock=lambda: FIXED,
        **kwargs,
    )


def _metrics(events):
    sink = MetricsSink()
    for event in events:
        sink.record(event)
    return sink.finish("success")


# -- routing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("fix the failing test in parser.py", Route.EXECUTOR),
        ("add a planner module to the project", Route.EXECUTOR),
        ("what is the plan for the first release?", Route.EXECUTOR),
        ("Plan first, then refactor the cache", Route.PLAN_THEN_EXECUTE),
        ("refactor the cache; plan first", Route.PLAN_THEN_EXECUTE),
        ("Plan then execute: rename the module", Route.PLAN_THEN_EXECUTE),
        (
            "rename the module, wait for my approval before changing anything",
            Route.PLAN_FOR_APPROVAL,
        ),
        ("plan first and wait for my approval", Route.PLAN_FOR_APPROVAL),
        ("plan only: how would we split loop.py?", Route.PLAN_ONLY),
        ("plan first, but plan only - wait for my approval", Route.PLAN_ONLY),
        ("先规划，再重构缓存模块", Route.PLAN_THEN_EXECUTE),
        ("重命名模块，等我批准后再改", Route.PLAN_FOR_APPROVAL),
        ("只规划，不要执行", Route.PLAN_ONLY),
        # Quoted examples do not change the route.
        ('explain what "plan first" means in the docs', Route.EXECUTOR),
        ("document the directive `plan only` in MODES.md", Route.EXECUTOR),
        ("fix this:\n```\n# plan first\n```\n", Route.EXECUTOR),
        ("> wait for my approval\nwhy does this quote parse wrong?", Route.EXECUTOR),
        ("translate “只规划” into English", Route.EXECUTOR),
        ("translate 「先规划」", Route.EXECUTOR),
        ("what does 'plan only' do?", Route.EXECUTOR),
        ("an unclosed fence\n```\nplan first", Route.EXECUTOR),
    ],
)
def test_planner_route_explicit_only(text: str, route: Route) -> None:
    decision = decide_route(text)
    assert decision.route is route
    # The reason names the directive, never the user's words.
    assert text not in decision.reason and decision.reason.split(":")[0] in (
        "directive",
        "default",
    )


@pytest.mark.parametrize(
    ("text", "route"),
    [
        # A negated directive declines the planner.
        ("don't plan first", Route.EXECUTOR),
        ("Don’t plan first, just fix it", Route.EXECUTOR),
        ("do not plan, just do it", Route.EXECUTOR),
        ("do not plan first, just do it", Route.EXECUTOR),
        ("no need to plan first", Route.EXECUTOR),
        ("there is no need to plan first; fix the parser", Route.EXECUTOR),
        ("you don't need to plan first", Route.EXECUTOR),
        ("fix the parser without planning", Route.EXECUTOR),
        ("fix it without a plan first", Route.EXECUTOR),
        ("don't just plan, implement it", Route.EXECUTOR),
        ("do not wait for my approval", Route.EXECUTOR),
        ("never wait for approval on this one", Route.EXECUTOR),
        ("不要先规划，直接改", Route.EXECUTOR),
        ("不用先规划", Route.EXECUTOR),
        ("无需先做计划，直接修复", Route.EXECUTOR),
        ("别只规划，动手改", Route.EXECUTOR),
        ("不需要等待批准", Route.EXECUTOR),
        ("我们不先规划了", Route.EXECUTOR),
        # The negation must stand right before the directive: a negation in
        # another clause, or after the directive, declines nothing.
        ("don't touch the tests; plan first", Route.PLAN_THEN_EXECUTE),
        ("don't wait for my approval, plan first", Route.PLAN_THEN_EXECUTE),
        ("plan first, don't skip the tests", Route.PLAN_THEN_EXECUTE),
        ("只规划，不要执行", Route.PLAN_ONLY),
        ("不要动测试，先规划", Route.PLAN_THEN_EXECUTE),
        ("要不先规划一下？", Route.PLAN_THEN_EXECUTE),  # 要不: "how about"
        # A negated directive does not hide an un-negated one elsewhere.
        ("don't plan first - plan only", Route.PLAN_ONLY),
    ],
)
def test_a_negated_directive_does_not_route_to_the_planner(text: str, route: Route) -> None:
    assert decide_route(text).route is route


def test_planner_route_reads_trusted_metadata_not_wording() -> None:
    assert decide_route("reach 90% coverage", TurnMeta(goal_start=True)).route is Route.GOAL
    # A host-made turn always goes to the executor, whatever it says.
    assert decide_route("plan first", TurnMeta(synthetic=True)).route is Route.EXECUTOR
    # Length and file counts mean nothing.
    long = "refactor " + " ".join(f"src/m{i}.py" for i in range(200))
    assert decide_route(long).route is Route.EXECUTOR


# -- the pinned behaviours ------------------------------------------------------


async def test_ordinary_request_does_not_call_planner(workspace, home, server, monkeypatch) -> None:
    script = configure(home, server, monkeypatch)
    script.executor(Reply(content="done"))
    async with _open(workspace) as rt:
        assert isinstance(rt.runner, Coordinator)
        events = await drive(rt.runner, "fix the failing test")
    assert models(server) == [EXECUTOR_MODEL]
    assert of(events, ev.RouteDecided)[0].route == "executor"
    assert of(events, ev.TurnFinished)[0].text == "done"
    metrics = _metrics(events)
    assert metrics.planner_requests == 0 and metrics.routes == {"executor": 1}
    with_planner = server.requests[0].body

    # The executor's request is byte-identical to an executor-only session's.
    server.requests.clear()
    script = configure(home, server, monkeypatch, planner="")
    script.executor(Reply(content="done"))
    async with _open(workspace) as rt:
        assert rt.coordinator is None
        await drive(rt.runner, "fix the failing test")
    assert server.requests[0].body == with_planner


async def test_plan_then_execute_hands_the_submitted_plan_to_the_executor(
    workspace, home, server, monkeypatch
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    script = configure(home, server, monkeypatch)
    script.planner(
        call("read_file", path="app.py"),
        submit("# Plan\n1. change app.py:1 (verified)"),
        Reply(content="submitted"),
    )
    script.executor(Reply(content="executed"))
    async with _open(workspace) as rt:
        events = await drive(rt.runner, "greet in French; plan first")
        planner_session = rt.coordinator.planner.session.path
    assert models(server) == [PLANNER_MODEL] * 3 + [EXECUTOR_MODEL]
    first = requests_for(server, PLANNER_MODEL)[0]
    names = [t["function"]["name"] for t in first["tools"]]
    assert "submit_plan" in names and "read_file" in names
    assert not {"write_file", "edit_file", "bash", "task", "fleet"} & set(names)
    assert first["messages"][1]["content"].startswith('<planner-turn route="plan_then_execute"/>')
    executor_user = requests_for(server, EXECUTOR_MODEL)[0]["messages"][1]["content"]
    assert executor_user.startswith(
        "greet in French; plan first\n\n<plan>\n# Plan\n1. change app.py:1"
    )
    assert len(of(events, ev.TurnStarted)) == 1 and len(of(events, ev.TurnFinished)) == 1
    assert of(events, ev.TurnFinished)[0].text == "executed"
    assert of(events, ev.PlanReady)[0].disposition == "execute"
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    metrics = _metrics(events)
    assert metrics.usage_by_source["planner"].calls == 3
    assert metrics.planner_requests == 3 and metrics.executor_requests == 1
    assert metrics.routes == {"plan_then_execute": 1}
    # The planner's transcript is its own file, beside the sessions' folder.
    assert "planners" in planner_session.parts


async def test_plan_and_execute_requires_submitted_plan(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch)
    # Prose is a protocol error; the summary round's prose too: fail closed.
    script.planner(Reply(content="Here is my plan: edit app.py"), Reply(content="still prose"))
    script.executor(Reply(content="must not run"))
    async with _open(workspace) as rt:
        events = await drive(rt.runner, "plan first, then edit app.py")
        planner = rt.coordinator.planner
        assert len(planner.messages) == 1  # rolled back to the system prompt
        planner_path = planner.session.path
    assert models(server) == [PLANNER_MODEL, PLANNER_MODEL]
    summary = requests_for(server, PLANNER_MODEL)[1]["messages"][-1]["content"]
    assert 'phase="final-summary"' in summary
    (failed,) = of(events, ev.TurnFailed)
    assert failed.kind == "planner_failed" and "submit_plan" in failed.error
    assert not of(events, ev.TurnFinished)
    # The rollback is a branch record: the file is append-only, a reader sees no turn.
    _, messages = read_session(planner_path)
    assert messages == []
    records = [json.loads(line) for line in planner_path.read_text().splitlines()]
    assert records[-1]["type"] == "branch" and records[-1]["keep"] == 0


@pytest.mark.parametrize(
    "prompt",
    ["plan first, then edit app.py", "edit app.py, wait for my approval", "plan only: edit app.py"],
)
async def test_fails_closed_when_planner_fails(
    workspace, home, server, monkeypatch, prompt
) -> None:
    script = configure(home, server, monkeypatch)
    script.planner(HttpError(400, "bad request"))
    script.executor(Reply(content="must not run"))
    async with _open(workspace) as rt:
        events = await drive(rt.runner, prompt)
        assert len(rt.coordinator.planner.messages) == 1
        assert pending_plan(rt.agent.session.path) is None
    assert EXECUTOR_MODEL not in models(server)
    (failed,) = of(events, ev.TurnFailed)
    assert failed.kind == "planner_failed"


async def test_a_rolled_back_turn_leaves_the_next_planning_turn_a_clean_prefix(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch)
    script.planner(Reply(content="prose"), Reply(content="prose"))
    script.planner(submit("the plan"), Reply(content="ok"))
    script.planner(submit("second plan"), Reply(content="ok"))
    script.executor(Reply(content="one"), Reply(content="two"))
    async with _open(workspace) as rt:
        await drive(rt.runner, "FIRST plan first")
        await drive(rt.runner, "SECOND plan first")
        await drive(rt.runner, "THIRD plan first")
    planner = requests_for(server, PLANNER_MODEL)
    second = planner[2]["messages"]
    assert not any("FIRST" in (m.get("content") or "") for m in second)
    # The planner's prefix only grows: the third turn's request extends the second's.
    third = planner[4]["messages"]
    assert third[: len(planner[3]["messages"])] == planner[3]["messages"]
    assert planner[2]["messages"][0] == planner[4]["messages"][0]  # one system prompt


async def test_plan_only_saves_the_plan_and_ends(workspace, home, server, monkeypatch) -> None:
    script = configure(home, server, monkeypatch)
    script.planner(submit("only the plan"), Reply(content="ok"))
    async with _open(workspace) as rt:
        events = await drive(rt.runner, "只规划：拆分 loop.py")
        saved = pending_plan(rt.agent.session.path)
    assert EXECUTOR_MODEL not in models(server)
    (finished,) = of(events, ev.TurnFinished)
    assert finished.stop_reason == "plan_saved" and finished.text == "only the plan"
    assert saved is not None and saved.plan == "only the plan" and saved.route == "plan_only"


async def test_approval_in_the_host_dialog(workspace, home, server, monkeypatch) -> None:
    verdicts = [PlanVerdict.KEEP, PlanVerdict.REJECT, PlanVerdict.APPROVE]
    shown: list[str] = []

    async def approve(saved):
        shown.append(saved.plan)
        return verdicts.pop(0)

    script = configure(home, server, monkeypatch)
    for n in (1, 2, 3):
        script.planner(submit(f"plan {n}"), Reply(content="ok"))
    script.executor(Reply(content="executed plan 3"))
    async with _open(workspace, plan_approver=approve) as rt:
        kept = await drive(rt.runner, "A: edit, wait for my approval")
        assert EXECUTOR_MODEL not in models(server)
        assert of(kept, ev.TurnFinished)[0].stop_reason == "plan_pending"
        rejected = await drive(rt.runner, "B: edit, wait for my approval")
        assert of(rejected, ev.TurnFinished)[0].stop_reason == "plan_rejected"
        assert EXECUTOR_MODEL not in models(server)
        approved = await drive(rt.runner, "C: edit, wait for my approval")
    assert shown == ["plan 1", "plan 2", "plan 3"]
    assert models(server).count(EXECUTOR_MODEL) == 1
    executor_user = requests_for(server, EXECUTOR_MODEL)[0]["messages"][1]["content"]
    assert executor_user.startswith("C: edit") and "<plan>\nplan 3\n</plan>" in executor_user
    assert of(approved, ev.TurnFinished)[0].text == "executed plan 3"


def test_build_fails_when_planner_model_is_unresolvable(workspace, home, server, monkeypatch):
    configure(home, server, monkeypatch, planner="nowhere/no-such-model")
    proc = reasonix(workspace, "run", "plan first: hello")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(
        "reasonix: error: [agent] planner_model = 'nowhere/no-such-model'"
    )
    assert "Traceback" not in proc.stderr
    assert server.requests == []  # never a silent executor-only run


def test_headless_saves_the_plan_and_approve_plan_executes_it(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch)
    script.planner(submit("# The plan\nedit x"), Reply(content="ok"))
    proc = reasonix(workspace, "run", "--output-format", "json", "edit x, wait for my approval")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["result"] == "# The plan\nedit x"
    assert result["stop_reason"] == "plan_pending"
    assert result["metrics"]["routes"] == {"plan_for_approval": 1}
    assert result["metrics"]["usage_by_source"]["planner"]["calls"] == 2
    assert EXECUTOR_MODEL not in models(server)

    # A prompt's wording approves nothing: it is a new turn with its own route.
    script.executor(Reply(content="executed"))
    proc = reasonix(workspace, "run", "-c", "--approve-plan", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["result"] == "executed"
    (executor,) = requests_for(server, EXECUTOR_MODEL)
    last_user = [m for m in executor["messages"] if m["role"] == "user"][-1]["content"]
    assert last_user.startswith(
        "edit x, wait for my approval\n\n<plan>\n# The plan\nedit x\n</plan>"
    )

    # The plan is settled: approving again is a usage error, before any request.
    before = len(server.requests)
    proc = reasonix(workspace, "run", "-c", "--approve-plan")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: --approve-plan: no plan is waiting")
    assert len(server.requests) == before


def test_approve_plan_usage(workspace, home, server, monkeypatch) -> None:
    configure(home, server, monkeypatch)
    proc = reasonix(workspace, "run", "--approve-plan")
    assert proc.returncode == 2 and "needs -c or -r" in proc.stderr
    proc = reasonix(workspace, "run", "-c", "--approve-plan", "do it")
    assert proc.returncode == 2 and "takes no prompt" in proc.stderr


async def test_cancelling_a_planning_turn_rolls_the_planner_back(
    workspace, home, server, monkeypatch
) -> None:
    import anyio

    script = configure(home, server, monkeypatch)
    script.planner(call("ls"), Stall(30))
    script.executor(Reply(content="must not run"))
    seen: list[ev.Event] = []
    async with _open(workspace) as rt:
        second_step = anyio.Event()

        async def consume() -> None:
            async with aclosing(rt.runner.run("plan first: look around")) as events:
                async for event in events:
                    seen.append(event)
                    if isinstance(event, ev.StepStarted) and event.step == 2:
                        second_step.set()  # the planner's stalled second request

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await second_step.wait()
            tg.cancel_scope.cancel()
        planner = rt.coordinator.planner
        assert len(planner.messages) == 1
        path = planner.session.path
    assert EXECUTOR_MODEL not in models(server)
    assert not of(seen, ev.TurnFinished)
    _, messages = read_session(path)
    assert messages == []


async def test_the_planner_cannot_write_even_when_it_asks(
    workspace, home, server, monkeypatch
) -> None:
    script = configure(home, server, monkeypatch)
    script.planner(
        call("write_file", path="pwned.txt", content="x"),
        call("bash", command="touch pwned2.txt"),
        submit("plan"),
        Reply(content="ok"),
    )
    script.executor(Reply(content="done"))
    async with _open(workspace) as rt:
        events = await drive(rt.runner, "plan first: anything")
    assert not (workspace / "pwned.txt").exists() and not (workspace / "pwned2.txt").exists()
    results = [e for e in of(events, ev.ToolCallFinished) if e.name in ("write_file", "bash")]
    assert len(results) == 2 and all(r.is_error for r in results)
    assert of(events, ev.TurnFinished)[0].text == "done"


def test_pending_plan_reads_only_well_formed_records(tmp_path) -> None:
    from reasonix_core.agent.session import SessionStore
    from reasonix_core.coordinator.plans import SavedPlan, save_plan, settle_plan
    from tests.core.agent_helpers import session_header

    store = SessionStore.create(tmp_path, tmp_path / "ws", session_header("s1"))
    save_plan(store, SavedPlan("p1", "plan_for_approval", "first", "req"))
    settle_plan(store, "p1", PlanVerdict.KEEP)  # keep planning: still pending
    assert pending_plan(store.path).plan == "first"
    # Hostile or broken records are skipped, never executed.
    store.append_event("plan", id="p2", route="plan_only", plan={"cmd": "rm -rf /"}, request="x")
    store.append_event("plan", id=["p3"], route="plan_only", plan="bad id", request="x")
    store.append_event("plan_verdict", id="p1", verdict="approve-ish")
    assert pending_plan(store.path) is None  # any verdict but keep settles p1
    save_plan(store, SavedPlan("p4", "plan_for_approval", "second", "req"))
    settle_plan(store, "p4", PlanVerdict.REJECT)
    assert pending_plan(store.path) is None
    store.close()


def test_a_negation_window_keeps_its_word_boundary() -> None:
    # "knot" ends 40 characters before the directive: cut out on its own, its "not"
    # would look like a negation at the window's start.
    text = "knot" + " " * 37 + "plan first, then do it"
    assert decide_route(text).route is not Route.EXECUTOR
