"""Honest prompts (issue 30 item 8): ``/compact`` asks nothing when there is
nothing to compact (the core's compaction planner decides), and a plan approval
gives one notice; the real services over the loopback fixture model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.confirm import ConfirmScreen
from reasonix_tui.screens.plan_approval import PlanApprovalScreen
from reasonix_tui.widgets.blocks import NoticeBlock
from tests.tui.tui_helpers import send, session, until

pytestmark = pytest.mark.usefixtures("configured")


def notices(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.text for n in session(pilot).query(NoticeBlock)]


async def idle(pilot, requests: int, server) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: not session(pilot).busy and len(server.requests) >= requests)
    for _ in range(4):
        await pilot.pause(0.02)


async def test_compact_with_nothing_to_compact_asks_nothing(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """A short session (its cache holds the first request) offered to break the cache
    for a compaction that then found nothing to do; now it says so in one line."""
    configured.enqueue(Reply(content="short answer"))
    app = ReasonixApp(EngineServices(workspace, home=home))
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hello")
        await idle(pilot, 1, configured)
        assert session(pilot).runner.rebill_preview("compact") is not None  # something cached
        await send(pilot, "/compact")
        line = "Nothing to compact yet: the conversation is short enough to keep whole."
        await until(pilot, lambda: line in notices(pilot))
        for _ in range(4):
            await pilot.pause(0.02)
        assert not isinstance(app.screen, ConfirmScreen)
        assert sum("compact" in t.lower() for t in notices(pilot)) == 1
    assert len(configured.requests) == 1  # no summary request


async def test_compact_in_a_fresh_session_says_it_is_empty(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    app = ReasonixApp(EngineServices(workspace, home=home))
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/compact")
        line = "Nothing to compact yet: the conversation is empty."
        await until(pilot, lambda: line in notices(pilot))
        assert not isinstance(app.screen, ConfirmScreen)
    assert configured.requests == []


PLAN = "# Plan: rename **load**\n\n1. Rename `load` to `read` in app.py\n2. Run `pytest`"


def cards(pilot) -> list[tuple[str, str, frozenset[str]]]:  # type: ignore[no-untyped-def]
    from textual.widgets import Static

    from reasonix_tui.widgets.tool_block import ToolBlock

    return [
        (str(c.query_one(".header", Static).render()), c.result, frozenset(c.classes))
        for c in session(pilot).query(ToolBlock)
        if c.query(".header")  # a card mounted this frame has no children yet
    ]


async def test_keep_planning_then_approve_with_plan_gives_one_notice(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Keep planning is the user's choice, not a denial (no warning colour, the plan's
    title as text), live and resumed; approving the kept plan with /plan says so once
    (it said "Plan approved; executing it." and "Plan approved; the executor carries
    it out.")."""
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("exit_plan_mode", json.dumps({"plan": PLAN}))]),
        Reply(content="I will wait."),
        Reply(content="Renamed."),
    )
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="plan"))
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "make a plan")
        await until(pilot, lambda: isinstance(app.screen, PlanApprovalScreen))
        await pilot.press("k")
        await idle(pilot, 2, configured)
        [(header, result, classes)] = cards(pilot)
        assert header == "exit_plan_mode  Plan: rename load  ↺ keep planning"
        assert result == "You chose to keep planning: plan mode stays on."
        assert "-kept" in classes and not classes & {"-denied", "-error"}
        await send(pilot, "/plan")
        await until(pilot, lambda: isinstance(app.screen, PlanApprovalScreen))
        await pilot.press("a")
        await idle(pilot, 3, configured)
        approved = [t for t in notices(pilot) if "approved" in t.lower()]
        assert approved == ["Plan approved; the executor carries it out."]
    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: bool(cards(pilot)))
        (header, result, classes), *_ = cards(pilot)
        assert header == "exit_plan_mode  Plan: rename load  ↺ keep planning"
        assert "-kept" in classes and not classes & {"-denied", "-error"}


async def test_approving_in_plan_mode_says_so_in_the_users_words(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """The approved exit_plan_mode card showed the model's instruction ("Execute the
    plan now (each call still follows the ordinary permissions)")."""
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("exit_plan_mode", json.dumps({"plan": PLAN}))]),
        Reply(content="Renamed."),
    )
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="plan"))
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "make a plan")
        await until(pilot, lambda: isinstance(app.screen, PlanApprovalScreen))
        await pilot.press("a")
        await idle(pilot, 2, configured)
        [(header, result, _)] = cards(pilot)
        assert header == "exit_plan_mode  Plan: rename load  ✓ ok"
        assert result == "You approved the plan: plan mode is off."
        assert [t for t in notices(pilot) if "approved" in t.lower()] == []
