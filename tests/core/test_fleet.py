"""The fleet as a small DAG (seed 000 §3.14) and the session's scheduling slots.

Items run through a recording callable; concurrency is shown with events and
``wait_all_tasks_blocked`` (every task is parked), never with sleeps."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.errors import FleetPlanError, ToolArgumentError
from reasonix_core.subagent.fleet import (
    SLOT_WAIT,
    UPSTREAM_LIMIT,
    FleetItem,
    FleetPlan,
    FleetResult,
    ItemResult,
    preflight,
    run_fleet,
    task_text,
)
from reasonix_core.subagent.slots import Slots, WriteClaim
from reasonix_core.tool.sandbox import SandboxPolicy

GUARD = 60  # seconds: only a deadlock guard, never an assertion about speed


def box(workspace: Path) -> SandboxPolicy:
    return SandboxPolicy(workspace=workspace, temp_dir=workspace / ".tmp")


def item(item_id: str | None, *deps: str, **kw: object) -> FleetItem:
    return FleetItem(prompt=f"do {item_id}", id=item_id, depends_on=deps, **kw)  # type: ignore[arg-type]


def reader(item_id: str, *deps: str) -> FleetItem:
    return item(item_id, *deps, read_only=True)


class Recorder:
    """Runs items: records starts, prompts, upstreams; fails the ids in ``fail``;
    items in ``gates`` wait for their event before answering."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.fail = fail or set()
        self.gates: dict[str, anyio.Event] = {}
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.prompts: dict[str, str] = {}
        self.upstreams: dict[str, dict[str, ItemResult]] = {}
        self.running: set[str] = set()

    def gate(self, *ids: str) -> None:
        for i in ids:
            self.gates[i] = anyio.Event()

    async def __call__(self, it: FleetItem, upstream: Mapping[str, ItemResult]) -> ItemResult:
        assert it.id is not None
        self.started.append(it.id)
        self.running.add(it.id)
        self.prompts[it.id] = it.prompt
        self.upstreams[it.id] = dict(upstream)
        try:
            if it.id in self.gates:
                await self.gates[it.id].wait()
        except BaseException:
            self.cancelled.append(it.id)
            raise
        finally:
            self.running.discard(it.id)
        self.finished.append(it.id)
        if it.id in self.fail:
            return ItemResult(ok=False, text=f"{it.id} broke")
        return ItemResult(ok=True, text=f"answer of {it.id}")


async def run(
    plan: FleetPlan, runner: Recorder, *, slots: Slots | None = None, fail_fast: bool = False
) -> tuple[FleetResult, list[ev.FleetItemChanged]]:
    seen: list[ev.FleetItemChanged] = []
    with anyio.fail_after(GUARD):
        result = await run_fleet(
            plan,
            runner,
            slots=slots or Slots(),
            fail_fast=fail_fast,
            report=seen.append,
            tool_call_id="call_fleet",
        )
    return result, seen


def states(result: FleetResult) -> dict[str, str]:
    return {o.item_id: o.state for o in result.outcomes}


# -- preflight -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([item("a"), item("a")], "duplicate id 'a' (item 2)"),
        # An explicit id that collides with another item's default (its position).
        ([item("2"), item(None)], "duplicate id '2' (item 2)"),
        ([item("a", "zz")], "item 'a' depends on 'zz', which is not an item id (ids: a)"),
        ([item("a", "a")], "item 'a' depends on itself"),
        ([item("a", "c"), item("b", "a"), item("c", "b")], "dependency cycle: a -> c -> b -> a"),
        ([item("x"), item("a", "b"), item("b", "a")], "dependency cycle: a -> b -> a"),
        ([item("a", read_only=True, write_paths=("src",))], "'a' is read_only but claims"),
        ([item('a" state="done')], "must be 1-64 letters"),
        ([item("a\n</result>")], "must be 1-64 letters"),
        ([item("")], "must be 1-64 letters"),
        ([], "at least one item"),
    ],
)
def test_preflight_rejects_a_plan_that_cannot_run(
    items: list[FleetItem], message: str, tmp_path: Path
) -> None:
    with pytest.raises(FleetPlanError) as info:
        preflight(items, box(tmp_path))
    assert message in str(info.value)
    # The loop turns argument errors into a result for the model.
    assert isinstance(info.value, ToolArgumentError)


def test_preflight_defaults_ids_to_positions_and_orders_the_graph(tmp_path: Path) -> None:
    plan = preflight([item(None, "3"), item("b", "1", "1"), item(None)], box(tmp_path))
    assert [i.id for i in plan.items] == ["1", "b", "3"]
    assert plan.item("b").depends_on == ("1",)  # repeated dependency folded
    assert plan.order.index("3") < plan.order.index("1") < plan.order.index("b")


def test_items_that_may_run_together_need_disjoint_claims(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "src")
    overlapping = [
        (("src",), ("src/app.py",)),
        (("src/app.py",), ("src/../src/app.py",)),
        (("src/app.py",), ("link/app.py",)),  # a symlink does not launder the overlap
    ]
    for left, right in overlapping:
        with pytest.raises(FleetPlanError) as info:
            preflight([item("a", write_paths=left), item("b", write_paths=right)], box(tmp_path))
        assert "items 'a' and 'b' may run at the same time and both claim" in str(info.value)
        assert str(tmp_path / "src") in str(info.value)
    # Ordered by the graph (even through a third item): they may share.
    preflight(
        [
            item("impl", write_paths=("src",)),
            item("test", "impl", read_only=True),
            item("review", "test", write_paths=("src/app.py",)),
        ],
        box(tmp_path),
    )
    # Disjoint, or without a claim (that one waits at run time instead).
    preflight(
        [item("a", write_paths=("src",)), item("b", write_paths=("docs",)), item("c")],
        box(tmp_path),
    )


def test_a_claim_outside_the_workspace_fails_the_plan_before_anything_runs(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "out").symlink_to(tmp_path)
    for bad in ("../elsewhere", "out/file.py", str(tmp_path / "x")):
        with pytest.raises(FleetPlanError) as info:
            preflight([reader("r"), item("w", write_paths=(bad,))], box(ws))
        assert str(info.value).startswith("item 'w': write_paths: ")
        assert "outside the workspace" in str(info.value)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (("src",), ("src/a.py",)),  # a directory conflicts with a claim inside it
        (("src/a.py",), ("src",)),  # and the other way round
        (("src/",), ("src/a.py",)),  # a trailing slash is the same directory
        (("src",), ("src/../src/a.py",)),  # .. is folded before comparing
        (("./src/sub/",), ("src//sub/deep/b.py",)),
        (("src",), ("inner/x.py",)),  # inner -> src/sub: a link into the claimed directory
        (("inner",), ("src/sub/y.py",)),  # the claimed directory is itself a link
        (("src/new/dir",), ("src/new",)),  # neither exists yet: still nested
        (None, ("docs/a.md",)),  # an omitted claim is the whole workspace
    ],
)
def test_directory_claims_conflict_with_every_claim_inside_them(
    tmp_path: Path, left: tuple[str, ...] | None, right: tuple[str, ...]
) -> None:
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "inner").symlink_to(tmp_path / "src" / "sub")
    a, b = WriteClaim.of(left, box(tmp_path)), WriteClaim.of(right, box(tmp_path))
    assert a.overlaps(b) and b.overlaps(a)
    if left is not None:
        with pytest.raises(FleetPlanError, match="may run at the same time and both claim"):
            preflight([item("a", write_paths=left), item("b", write_paths=right)], box(tmp_path))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (("src",), ("src2/x.py",)),  # a prefix of the string, not a parent
        (("src/a",), ("src/ab.py",)),
        (("src/a.py",), ("src/a.pyc",)),
        (("src/sub",), ("src/other",)),
        (("inner/",), ("src/subway/x",)),  # inner -> src/sub, not src/subway
    ],
)
def test_claims_that_only_share_a_string_prefix_do_not_conflict(
    tmp_path: Path, left: tuple[str, ...], right: tuple[str, ...]
) -> None:
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "inner").symlink_to(tmp_path / "src" / "sub")
    a, b = WriteClaim.of(left, box(tmp_path)), WriteClaim.of(right, box(tmp_path))
    assert not a.overlaps(b) and not b.overlaps(a)
    preflight([item("a", write_paths=left), item("b", write_paths=right)], box(tmp_path))


async def test_writer_slots_exclude_a_directory_and_the_claims_inside_it(tmp_path: Path) -> None:
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "inner").symlink_to(tmp_path / "src" / "sub")
    slots = Slots(max_concurrency=6, max_writers=6)
    held = Held(slots)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(held.take, "dir", WriteClaim.of(["src/"], box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(held.take, "dotdot", WriteClaim.of(["src/../src/a.py"], box(tmp_path)))
            tg.start_soon(held.take, "via-link", WriteClaim.of(["inner/b.py"], box(tmp_path)))
            tg.start_soon(held.take, "prefix", WriteClaim.of(["src2/x.py"], box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["dir", "prefix"] and slots.waiting == 2
            held.release["dir"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["dotdot", "prefix", "via-link"]
            # A whole-workspace writer waits for all of them.
            tg.start_soon(held.take, "whole", WriteClaim.of(None, box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            assert "whole" not in held.inside
            for name in ("dotdot", "prefix", "via-link"):
                held.release[name].set()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["whole"]
            held.release["whole"].set()


def test_write_claims_resolve_and_overlap(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").symlink_to(tmp_path / "a")
    whole = WriteClaim.of(None, box(tmp_path))
    a = WriteClaim.of(["a/x.py"], box(tmp_path))
    assert whole.overlaps(a) and a.overlaps(whole)
    assert a.overlaps(WriteClaim.of(["b/x.py"], box(tmp_path)))
    assert a.overlaps(WriteClaim.of(["a"], box(tmp_path)))
    assert not a.overlaps(WriteClaim.of(["a/x.pyc", "a/y.py"], box(tmp_path)))
    assert not WriteClaim.of(["ab"], box(tmp_path)).overlaps(WriteClaim.of(["a"], box(tmp_path)))


# -- running the graph ---------------------------------------------------------


async def test_items_start_when_their_dependencies_finish(tmp_path: Path) -> None:
    # research -> backend, frontend (together) -> integration -> review
    plan = preflight(
        [
            reader("research"),
            reader("backend", "research"),
            reader("frontend", "research"),
            reader("integration", "backend", "frontend"),
            reader("review", "integration"),
        ],
        box(tmp_path),
    )
    runner = Recorder()
    runner.gate("backend", "frontend")

    async def release_when_both_run() -> None:
        await anyio.wait_all_tasks_blocked()
        # Both branches run at the same time; nothing downstream has started.
        assert runner.running == {"backend", "frontend"}
        assert runner.started == ["research", "backend", "frontend"]
        runner.gates["frontend"].set()
        await anyio.wait_all_tasks_blocked()
        assert "integration" not in runner.started  # backend still runs
        runner.gates["backend"].set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(release_when_both_run)
        result, seen = await run(plan, runner)
    assert result.ok and runner.started[-2:] == ["integration", "review"]
    # The first five reports are the plan, before anything runs.
    assert [(e.item_id, e.state) for e in seen[:5]] == [
        (i, "waiting") for i in ("research", "backend", "frontend", "integration", "review")
    ]
    assert seen[3].depends_on == ("backend", "frontend")
    assert all(e.tool_call_id == "call_fleet" for e in seen)
    # A dependent reads its direct dependencies' results, not its grandparents'.
    assert set(runner.upstreams["integration"]) == {"backend", "frontend"}
    prompt = runner.prompts["integration"]
    assert prompt.startswith("do integration\n\n<upstream-results>\n")
    assert '<result id="backend">\nanswer of backend\n</result>' in prompt
    assert "answer of research" not in prompt
    assert runner.prompts["research"] == "do research"


async def test_a_failure_skips_its_branch_and_independent_branches_go_on(
    tmp_path: Path,
) -> None:
    plan = preflight(
        [reader("a"), reader("b", "a"), reader("c", "b"), reader("x"), reader("y", "x")],
        box(tmp_path),
    )
    runner = Recorder(fail={"a"})
    result, seen = await run(plan, runner)
    assert states(result) == {
        "a": "failed",
        "b": "skipped",
        "c": "skipped",
        "x": "done",
        "y": "done",
    }
    assert sorted(runner.started) == ["a", "x", "y"]
    by_id = {o.item_id: o for o in result.outcomes}
    assert by_id["b"].reason == "skipped: depends on 'a', which failed"
    assert by_id["c"].reason == "skipped: depends on 'b', which was skipped"
    assert by_id["a"].text == "a broke"
    assert ("c", "skipped") in [(e.item_id, e.state) for e in seen]
    text = result.render()
    assert text.startswith("fleet: 5 items, 2 done, 1 failed, 2 skipped")
    assert '<item id="b" state="skipped">\nskipped: depends on \'a\'' in text


async def test_fail_fast_starts_nothing_new_and_lets_running_items_finish(
    tmp_path: Path,
) -> None:
    # One slot for two writers: "later" waits for "writer" while "a" fails.
    plan = preflight(
        [
            item("writer", write_paths=("w",)),
            reader("a"),
            item("later", write_paths=("v",)),
            reader("after", "writer"),
        ],
        box(tmp_path),
    )
    runner = Recorder(fail={"a"})
    runner.gate("writer", "a")

    async def fail_a_then_finish_writer() -> None:
        await anyio.wait_all_tasks_blocked()
        assert runner.running == {"writer", "a"}
        runner.gates["a"].set()
        await anyio.wait_all_tasks_blocked()
        assert "writer" in runner.running  # not cancelled by the failure
        runner.gates["writer"].set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(fail_a_then_finish_writer)
        result, _ = await run(plan, runner, slots=Slots(max_writers=1), fail_fast=True)
    assert states(result) == {
        "writer": "done",
        "a": "failed",
        "later": "skipped",
        "after": "skipped",
    }
    assert runner.cancelled == [] and sorted(runner.started) == ["a", "writer"]
    reasons = {o.item_id: o.reason for o in result.outcomes}
    assert reasons["later"] == "skipped: fail_fast is set and 'a' failed"


async def test_without_fail_fast_the_same_plan_runs_the_rest(tmp_path: Path) -> None:
    plan = preflight([reader("a"), reader("b"), reader("c", "b")], box(tmp_path))
    result, _ = await run(plan, Recorder(fail={"a"}), slots=Slots(max_concurrency=1))
    assert states(result) == {"a": "failed", "b": "done", "c": "done"}


async def test_an_item_that_raises_fails_alone(tmp_path: Path) -> None:
    async def boom(it: FleetItem, upstream: Mapping[str, ItemResult]) -> ItemResult:
        if it.id == "a":
            raise RuntimeError("model exploded")
        return ItemResult(ok=True, text="fine", status="complete")

    plan = preflight([reader("a"), reader("b"), reader("c", "a")], box(tmp_path))
    with anyio.fail_after(GUARD):
        result = await run_fleet(plan, boom, slots=Slots())
    assert states(result) == {"a": "failed", "b": "done", "c": "skipped"}
    assert result.outcomes[0].text == "RuntimeError: model exploded"
    assert '<item id="b" state="done" status="complete">\nfine\n</item>' in result.render()


async def test_cancelling_the_fleet_cancels_every_running_item(tmp_path: Path) -> None:
    plan = preflight([reader("a"), reader("b"), reader("c", "a")], box(tmp_path))
    runner = Recorder()
    runner.gate("a", "b")
    seen: list[ev.FleetItemChanged] = []
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:

            async def esc() -> None:
                await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()

            tg.start_soon(esc)
            await run_fleet(plan, runner, slots=(slots := Slots()), report=seen.append)
            pytest.fail("run_fleet returned after its caller was cancelled")
    assert sorted(runner.cancelled) == ["a", "b"] and runner.finished == []
    final = {e.item_id: e.state for e in seen}
    assert final == {"a": "cancelled", "b": "cancelled", "c": "cancelled"}
    assert slots.running == 0 and slots.waiting == 0


def test_upstream_results_are_bounded(tmp_path: Path) -> None:
    long = "x" * (UPSTREAM_LIMIT * 3)
    text = task_text(
        item("b", "a"), {"a": ItemResult(ok=True, text=long + "END", status="partial")}
    )
    assert '<result id="a" status="partial">' in text
    assert "characters omitted" in text and text.count("x") <= UPSTREAM_LIMIT
    assert "END" in text


# -- slots -----------------------------------------------------------------------


class Held:
    """Tasks that take a slot and keep it until released."""

    def __init__(self, slots: Slots) -> None:
        self.slots = slots
        self.inside: list[str] = []
        self.release: dict[str, anyio.Event] = {}

    async def take(self, name: str, claim: WriteClaim | None) -> None:
        self.release[name] = anyio.Event()
        async with self.slots.hold(claim):
            self.inside.append(name)
            await self.release[name].wait()
            self.inside.remove(name)


async def test_writer_limit_and_concurrency_limit(tmp_path: Path) -> None:
    slots = Slots(max_concurrency=3, max_writers=2)
    held = Held(slots)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            for n in range(4):
                tg.start_soon(held.take, f"w{n}", WriteClaim.of([f"f{n}"], box(tmp_path)))
            tg.start_soon(held.take, "r0", None)
            tg.start_soon(held.take, "r1", None)
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["r0", "w0", "w1"]  # 2 writers, 3 in all
            assert (slots.running, slots.writers, slots.waiting) == (3, 2, 3)
            assert not slots.can_start(None) and not slots.can_start(
                WriteClaim.of(["f9"], box(tmp_path))
            )
            held.release["w0"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["r0", "w1", "w2"]
            held.release["r0"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["r1", "w1", "w2"]
            held.release["r1"].set()
            await anyio.wait_all_tasks_blocked()
            # A slot is free, but not a writer slot.
            assert slots.can_start(None) and not slots.can_start(
                WriteClaim.of(["f9"], box(tmp_path))
            )
            for name in ("w1", "w2", "w3"):
                held.release[name].set()
                await anyio.wait_all_tasks_blocked()
    assert (slots.running, slots.writers, slots.waiting) == (0, 0, 0)


async def test_overlapping_writers_wait_and_readers_pass(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "src")
    slots = Slots(max_concurrency=6, max_writers=3)
    held = Held(slots)
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(held.take, "src", WriteClaim.of(["src"], box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(held.take, "whole", WriteClaim.of(None, box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(held.take, "via-link", WriteClaim.of(["alias/a.py"], box(tmp_path)))
            tg.start_soon(held.take, "docs", WriteClaim.of(["docs"], box(tmp_path)))
            tg.start_soon(held.take, "reader", None)
            await anyio.wait_all_tasks_blocked()
            # docs overlaps the waiting whole-workspace writer: it queues behind it.
            assert sorted(held.inside) == ["reader", "src"]
            held.release["src"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["reader", "whole"]
            held.release["whole"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["docs", "reader", "via-link"]
            for name in ("docs", "reader", "via-link"):
                held.release[name].set()


async def test_a_cancelled_waiter_leaves_no_trace(tmp_path: Path) -> None:
    slots = Slots(max_concurrency=6, max_writers=3)
    held = Held(slots)
    waiting = anyio.CancelScope()

    async def whole() -> None:
        with waiting:
            await held.take("whole", WriteClaim.of(None, box(tmp_path)))

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(held.take, "a", WriteClaim.of(["a"], box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(whole)
            await anyio.wait_all_tasks_blocked()
            # "b" is free, but an earlier waiting writer claims it too: it queues.
            tg.start_soon(held.take, "b", WriteClaim.of(["b"], box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["a"] and slots.waiting == 2
            waiting.cancel()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["a", "b"] and slots.waiting == 0
            held.release["a"].set()
            held.release["b"].set()
    assert slots.running == 0


async def test_a_nested_hold_runs_inside_its_parents_slot(tmp_path: Path) -> None:
    slots = Slots(max_concurrency=1, max_writers=1)
    with anyio.fail_after(GUARD):
        async with slots.hold(WriteClaim.of(None, box(tmp_path))):
            async with slots.hold(WriteClaim.of(None, box(tmp_path))):  # would deadlock otherwise
                assert slots.running == 1
    assert slots.running == 0


async def test_nested_children_take_turns_in_a_full_session_and_never_deadlock(
    tmp_path: Path,
) -> None:
    # Every slot is held by a parent waiting on its children: each lends its slot
    # to one child; a second child of the same parent waits for a slot of its own.
    slots = Slots(max_concurrency=2, max_writers=2)
    inside: list[str] = []
    peak = 0
    gates = {name: anyio.Event() for name in ("p1c1", "p1c2", "p2c1", "p2c2")}

    async def child(name: str) -> None:
        nonlocal peak
        async with slots.hold(None):
            inside.append(name)
            peak = max(peak, len(inside))
            await gates[name].wait()
            inside.remove(name)

    async def parent(name: str) -> None:
        async with slots.hold(WriteClaim.of([name], box(tmp_path))):
            async with anyio.create_task_group() as tg:
                tg.start_soon(child, f"{name}c1")
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(child, f"{name}c2")

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent, "p1")
            tg.start_soon(parent, "p2")
            await anyio.wait_all_tasks_blocked()
            assert sorted(inside) == ["p1c1", "p2c1"]
            assert (slots.running, slots.writers, slots.waiting) == (2, 2, 2)
            gates["p1c1"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(inside) == ["p1c2", "p2c1"]  # p1's slot, lent again
            for name in ("p1c2", "p2c1", "p2c2"):
                gates[name].set()
    assert peak == 2
    assert (slots.running, slots.writers, slots.waiting) == (0, 0, 0)


async def test_nested_writers_count_against_the_writer_limit(tmp_path: Path) -> None:
    slots = Slots(max_concurrency=6, max_writers=2)
    held = Held(slots)

    async def parent(name: str) -> None:
        async with slots.hold(WriteClaim.of([name], box(tmp_path))):
            async with anyio.create_task_group() as tg:
                for n in (1, 2):
                    tg.start_soon(
                        held.take, f"{name}/{n}", WriteClaim.of([f"{name}/{n}"], box(tmp_path))
                    )

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent, "a")
            tg.start_soon(parent, "b")
            await anyio.wait_all_tasks_blocked()
            # Each parent lends its writer slot to one child; no third writer slot.
            assert sorted(held.inside) == ["a/1", "b/1"] and slots.writers == 2
            held.release["a/1"].set()
            await anyio.wait_all_tasks_blocked()
            assert sorted(held.inside) == ["a/2", "b/1"]
            for name in ("a/2", "b/1", "b/2"):
                held.release[name].set()
                await anyio.wait_all_tasks_blocked()
    assert (slots.running, slots.writers, slots.waiting) == (0, 0, 0)


async def test_a_child_never_defers_to_a_writer_waiting_for_its_own_parent(
    tmp_path: Path,
) -> None:
    # W waits for src (the parent's claim). The parent's child claims src/a.py,
    # which overlaps W too: deferring to the earlier W would deadlock (W waits
    # for the parent, the parent for its child).
    (tmp_path / "src").mkdir()
    slots = Slots(max_concurrency=6, max_writers=3)
    held = Held(slots)

    spawn = anyio.Event()

    async def parent() -> None:
        async with slots.hold(WriteClaim.of(["src"], box(tmp_path))):
            await spawn.wait()
            await held.take("child", WriteClaim.of(["src/a.py"], box(tmp_path)))

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(held.take, "W", WriteClaim.of(["src/a.py"], box(tmp_path)))
            await anyio.wait_all_tasks_blocked()
            assert held.inside == [] and slots.waiting == 1  # W queued first
            spawn.set()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["child"] and slots.waiting == 1
            held.release["child"].set()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["W"]
            held.release["W"].set()


async def test_siblings_under_a_writer_are_served_in_order(tmp_path: Path) -> None:
    # A later sibling does not overtake an earlier one whose claim it overlaps
    # (the whole-parent-claim sibling is not starved by small ones).
    (tmp_path / "src").mkdir()
    slots = Slots(max_concurrency=6, max_writers=6)
    held = Held(slots)
    go = anyio.Event()

    async def parent() -> None:
        async with slots.hold(WriteClaim.of(["src"], box(tmp_path))):
            async with anyio.create_task_group() as tg:
                tg.start_soon(held.take, "a", WriteClaim.of(["src/a.py"], box(tmp_path)))
                await go.wait()
                tg.start_soon(held.take, "all", WriteClaim.of(["src"], box(tmp_path)))
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(held.take, "b", WriteClaim.of(["src/b.py"], box(tmp_path)))

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent)
            await anyio.wait_all_tasks_blocked()
            go.set()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["a"] and slots.waiting == 2  # b queues behind "all"
            held.release["a"].set()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["all"]
            held.release["all"].set()
            await anyio.wait_all_tasks_blocked()
            assert held.inside == ["b"]
            held.release["b"].set()


async def test_a_fleet_item_adopts_its_slot_and_refuses_a_claim_that_moved(
    tmp_path: Path,
) -> None:
    # The runner resolves the claim again when the item starts; a symlink
    # swapped since the preflight must not let it write outside what the
    # scheduler reserved (another writer may hold it).
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "src")
    plan = preflight([item("w", write_paths=("link/x.py",)), reader("r")], box(tmp_path))
    assert plan.claims["w"] == WriteClaim((str(tmp_path / "src" / "x.py"),))
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "docs")
    slots = Slots()
    adopted: list[int] = []

    async def as_the_runner(it: FleetItem, upstream: Mapping[str, ItemResult]) -> ItemResult:
        claim = None if it.read_only else WriteClaim.of(it.write_paths, box(tmp_path))
        async with slots.hold(claim):
            adopted.append(slots.running)
        return ItemResult(ok=True, text="ran")

    with anyio.fail_after(GUARD):
        result = await run_fleet(plan, as_the_runner, slots=slots)
    assert states(result) == {"w": "failed", "r": "done"}
    (w,) = [o for o in result.outcomes if o.item_id == "w"]
    assert "outside the slot it runs in" in w.text and str(tmp_path / "docs") in w.text
    assert adopted == [1]  # the reader's hold adopted the fleet's slot: no second one
    assert (slots.running, slots.writers, slots.waiting) == (0, 0, 0)


async def test_fleet_writers_without_claims_take_turns(tmp_path: Path) -> None:
    plan = preflight([item("a"), item("b"), reader("r")], box(tmp_path))
    runner = Recorder()
    runner.gate("a", "b")

    async def drive() -> None:
        await anyio.wait_all_tasks_blocked()
        # b claims the whole workspace too: it waits; the reader does not.
        assert runner.running == {"a"} and sorted(runner.started) == ["a", "r"]
        runner.gates["a"].set()
        await anyio.wait_all_tasks_blocked()
        assert runner.running == {"b"}
        runner.gates["b"].set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(drive)
        result, seen = await run(plan, runner)
    assert result.ok
    # b said why it waited once its dependencies (none) were done; the others never waited.
    changes = [(e.item_id, e.state, e.reason) for e in seen]
    assert [c for c in changes if c[2] == SLOT_WAIT] == [("b", "waiting", SLOT_WAIT)]
    assert changes.index(("b", "waiting", SLOT_WAIT)) < changes.index(("b", "running", ""))


def test_fleet_item_changed_on_the_wire() -> None:
    # stream-json writes Event.to_json(); the fields docs/CLI.md lists.
    import json

    event = ev.FleetItemChanged(
        seq=4,
        tool_call_id="call_f",
        item_id="review",
        state="skipped",
        depends_on=("impl",),
        reason="skipped: depends on 'impl', which failed",
    )
    assert json.loads(json.dumps(event.to_json())) == {
        "type": "fleet_item_changed",
        "seq": 4,
        "agent_path": [],
        "tool_call_id": "call_f",
        "item_id": "review",
        "state": "skipped",
        "depends_on": ["impl"],
        "reason": "skipped: depends on 'impl', which failed",
    }
