"""Plan approval over a session (docs/MODES.md#plan-mode): the plan a session's
planner or ``exit_plan_mode`` saved, approved or rejected by its user.

The approval is always an explicit call by the surface (a dialog's answer,
``--approve-plan``), never a prompt's wording.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from reasonix_core import events as ev
from reasonix_core.errors import UsageError

if TYPE_CHECKING:
    from reasonix_core.agent.loop import Agent
    from reasonix_core.coordinator.plans import SavedPlan


class NoPlanWaiting(UsageError):
    """Approving a plan when none waits in the session."""


def waiting_plan(executor: Agent) -> SavedPlan | None:
    """The newest plan waiting for the user's approval in the executor's session, or None."""
    from reasonix_core.coordinator.plans import pending_plan

    return pending_plan(executor.session.path)


def approve_plan(executor: Agent) -> AsyncGenerator[ev.Event, None]:
    """The executor's turn over the waiting plan. Raises :class:`NoPlanWaiting`
    (before anything is sent) when none waits."""
    if waiting_plan(executor) is None:
        raise NoPlanWaiting("no plan is waiting for approval in this session")
    return _approved(executor)


async def _approved(executor: Agent) -> AsyncGenerator[ev.Event, None]:
    from reasonix_core.coordinator.coordinator import run_pending_plan

    async with aclosing(run_pending_plan(executor)) as events:
        async for event in events:
            yield event


def reject_plan(executor: Agent) -> None:
    """Settle the waiting plan as rejected (nothing when none waits)."""
    from reasonix_core.coordinator.plans import PlanVerdict, settle_plan

    saved = waiting_plan(executor)
    if saved is not None:
        settle_plan(executor.session, saved.id, PlanVerdict.REJECT)
