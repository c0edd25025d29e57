"""The heap policy: full GC passes freeze what survives; compaction frees frozen garbage."""

from __future__ import annotations

import gc
import time
import weakref

import pytest
from tui_helpers import send, session, settle

from reasonix_testkit.tui import text_steps
from reasonix_tui.gc_policy import HeapPolicy
from reasonix_tui.widgets.assistant_block import AssistantBlock


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def policy():
    heap = HeapPolicy()
    heap.install()
    try:
        yield heap
    finally:
        heap.uninstall()
        gc.unfreeze()  # give the test process its collector back as it was


def test_a_full_pass_freezes_its_survivors_and_compaction_frees_frozen_cycles(policy) -> None:
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector can free it
    alive = weakref.ref(a)
    before = gc.get_freeze_count()
    gc.collect()  # an automatic full pass would do the same
    assert gc.get_freeze_count() > before  # the survivors (our cycle among them) are frozen
    assert gc.is_tracked(a) and policy.growth > 0

    del a, b
    gc.collect()  # frozen: an ordinary full pass leaves the cycle alone
    assert alive() is not None

    assert policy.compact() >= 2
    assert alive() is None
    assert policy.compactions == 1 and policy.growth == 0


def test_due_only_past_the_bound(policy) -> None:
    policy.baseline = gc.get_freeze_count()
    assert not policy.due(bound=1_000)
    keep = [Node() for _ in range(5_000)]
    gc.collect()
    assert policy.due(bound=1_000)
    assert not policy.due(bound=10_000_000)
    del keep


def test_freezing_at_ready_counts_growth_from_there(policy) -> None:
    keep = [Node() for _ in range(2_000)]
    gc.collect()
    assert policy.growth >= 2_000
    policy.freeze()  # the app does this once its services are built
    assert policy.growth == 0
    del keep


class CountingHeap:
    """Stands in for HeapPolicy inside the app: what it is asked to do."""

    def __init__(self, growth: int) -> None:
        self.growth = growth
        self.compactions = 0

    def due(self) -> bool:
        return self.growth > 100

    def compact(self) -> int:
        self.compactions += 1
        self.growth = 0
        return 0


async def test_the_app_compacts_when_idle_not_while_typing_or_busy(make_app) -> None:
    app, _ = make_app([text_steps("done", chunk=4)])
    heap = CountingHeap(growth=50_000)
    app.heap = heap  # type: ignore[assignment]
    async with app.run_test() as pilot:
        await pilot.press("h")  # just typed
        app._compact_when_idle()
        assert heap.compactions == 0
        app.last_input = time.monotonic() - 10  # the user has been reading for a while
        session(pilot).busy = True
        app._compact_when_idle()
        assert heap.compactions == 0  # a turn is running
        session(pilot).busy = False
        app._compact_when_idle()
        assert heap.compactions == 1
        app.last_input = time.monotonic() - 10
        app._compact_when_idle()
        assert heap.compactions == 1  # nothing frozen since: nothing to do


async def test_a_new_model_request_compacts_once_the_bound_is_passed(make_app) -> None:
    app, _ = make_app([text_steps("done", chunk=4)])
    heap = CountingHeap(growth=1_000)
    app.heap = heap  # type: ignore[assignment]
    async with app.run_test() as pilot:
        await send(pilot, "go")
        await settle(pilot)
        assert heap.compactions >= 1


async def test_no_compaction_while_the_last_answer_is_still_being_painted(make_app) -> None:
    app, _ = make_app([text_steps("a streamed answer", chunk=4)])
    heap = CountingHeap(growth=50_000)
    app.heap = heap  # type: ignore[assignment]
    async with app.run_test() as pilot:
        await send(pilot, "go")
        await settle(pilot)
        screen = session(pilot)
        block = screen.query_one(AssistantBlock)
        block._queued.append(" and more")  # the display lags behind a fast stream
        heap.compactions, heap.growth = 0, 50_000  # (the turn's start compacted once)
        app.last_input = time.monotonic() - 10
        assert not screen.busy and screen.rendering
        app._compact_when_idle()
        assert heap.compactions == 0
        block._queued.clear()
        app._compact_when_idle()
        assert heap.compactions == 1
