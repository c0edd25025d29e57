"""Plans the host keeps for a later turn, and the user's verdict on one.

A plan-for-approval that no one can approve now (headless) and a plan-only
plan are saved in the executor's session as ``plan`` records; a ``plan_verdict``
record settles one. Both are append-only records beside the messages (the
transcript reader skips them), so saving a plan never touches the prompt.
``reasonix run -c --approve-plan`` executes the newest plan still pending.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from reasonix_core.agent.session import SessionStore, iter_records

PLAN_RECORD = "plan"
#: The route a plan-mode plan is saved under (plan records name their origin).
PLAN_MODE_ROUTE = "plan_mode"
#: The executor's request when a saved plan-mode plan is approved later: the
#: conversation that produced the plan is already in the session.
APPROVED_REQUEST = "The user approved the plan you wrote in plan mode."
VERDICT_RECORD = "plan_verdict"


class PlanVerdict(enum.StrEnum):
    """What the user answers in the plan-approval dialog."""

    APPROVE = "approve"  # approve and execute
    KEEP = "keep"  # keep planning: the plan stays pending, nothing executes
    REJECT = "reject"  # discard the plan


@dataclass(frozen=True, slots=True)
class SavedPlan:
    id: str
    route: str
    plan: str
    # The user's request the plan answers (the executor receives it with the plan).
    request: str


def save_plan(store: SessionStore, saved: SavedPlan) -> None:
    store.append_event(
        PLAN_RECORD, id=saved.id, route=saved.route, plan=saved.plan, request=saved.request
    )


def settle_plan(store: SessionStore, plan_id: str, verdict: PlanVerdict) -> None:
    store.append_event(VERDICT_RECORD, id=plan_id, verdict=verdict.value)


def pending_plan(session_path: Path) -> SavedPlan | None:
    """The newest saved plan no verdict has settled (approve or reject), or None."""
    plans: dict[str, SavedPlan] = {}
    for _, record in iter_records(session_path):
        kind = record.get("type")
        plan_id = record.get("id")
        if not isinstance(plan_id, str):
            continue
        if kind == PLAN_RECORD:
            plan, route, request = record.get("plan"), record.get("route"), record.get("request")
            if isinstance(plan, str) and isinstance(route, str) and isinstance(request, str):
                plans.pop(plan_id, None)
                plans[plan_id] = SavedPlan(plan_id, route, plan, request)
        elif kind == VERDICT_RECORD and record.get("verdict") != PlanVerdict.KEEP:
            plans.pop(plan_id, None)
    return next(reversed(plans.values()), None)


def handoff_text(request: str, plan: str) -> str:
    """The executor's user turn: the request, then the plan it executes (both in
    the user turn, so the executor's prefix only grows)."""
    return (
        f"{request}\n\n<plan>\n{plan}\n</plan>\n\n"
        "Execute this plan; verify its candidate touch points before relying on them."
    )
