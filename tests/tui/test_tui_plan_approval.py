"""The plan-approval dialog: the host's boundary between a plan and its execution."""

from __future__ import annotations

import pytest
from tui_helpers import send, session, settle, until

from reasonix_core.coordinator.plans import PlanVerdict
from reasonix_core.events import PlanReady, RouteDecided, TurnFinished
from reasonix_testkit.tui import PlanApproval, text_steps
from reasonix_tui.screens.plan_approval import PlanApprovalScreen
from reasonix_tui.widgets.blocks import NoticeBlock

PLAN = "# Plan\n\n1. Rename `load` to `read` in **app.py** (verified: app.py:3)\n2. Run `pytest`"


def plan_turn() -> list:
    ready = PlanReady(plan_id="p1", plan=PLAN, route="plan_for_approval", disposition="")
    return [
        RouteDecided(route="plan_for_approval", reason="directive:plan_for_approval"),
        PlanApproval(
            plan=PLAN,
            approved=[
                PlanReady(**{**_fields(ready), "disposition": "approved"}),
                *text_steps("renamed"),
            ],
            kept=[TurnFinished(stop_reason="plan_pending", text=PLAN)],
            rejected=[TurnFinished(stop_reason="plan_rejected", text=PLAN)],
        ),
    ]


def _fields(event: PlanReady) -> dict:
    return {"plan_id": event.plan_id, "plan": event.plan, "route": event.route}


@pytest.mark.parametrize(
    ("key", "verdict", "notice"),
    [
        ("a", PlanVerdict.APPROVE, "Plan approved"),
        ("enter", PlanVerdict.APPROVE, "Plan approved"),
        ("k", PlanVerdict.KEEP, "The plan is waiting; nothing was executed."),
        ("escape", PlanVerdict.KEEP, "The plan is waiting; nothing was executed."),
        ("r", PlanVerdict.REJECT, "Plan rejected; nothing was executed."),
    ],
)
async def test_the_dialog_answers_each_way(make_app, key, verdict, notice) -> None:
    app, services = make_app([plan_turn()])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "rename load, wait for my approval")
        await until(pilot, lambda: isinstance(pilot.app.screen, PlanApprovalScreen))
        dialog = pilot.app.screen
        assert isinstance(dialog, PlanApprovalScreen) and dialog.plan == PLAN
        await pilot.press(key)
        await settle(pilot)
        runner = services.runners[0]
        assert runner.plan_verdicts == [verdict]
        screen = session(pilot)
        texts = [n.text for n in screen.query(NoticeBlock)]
        assert any(notice in t for t in texts), texts
        assert "Planner first (plan for approval)." in texts
        assert not isinstance(pilot.app.screen, PlanApprovalScreen)
