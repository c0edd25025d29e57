"""The TUI side of the core's Approver protocol.

``decide`` posts :class:`ApprovalNeeded` carrying a Future to the session
screen and awaits it; the screen shows one modal at a time and resolves the
Future. Cancelling the awaiting core task cancels the Future, which closes the
dialog. Works from any task on the app's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.message_pump import MessagePump

from reasonix_tui.messages import ApprovalNeeded, PlanApprovalNeeded, QuestionsNeeded

if TYPE_CHECKING:
    from reasonix_core.coordinator.plans import PlanVerdict, SavedPlan
    from reasonix_core.permission.approver import (
        ApprovalDecision,
        ApprovalRequest,
        Question,
        QuestionAnswer,
    )


class TuiApprover:
    interactive = True

    def __init__(self, target: MessagePump) -> None:
        self._target = target

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._target.post_message(ApprovalNeeded(request, future))
        return await future

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        future: asyncio.Future[list[QuestionAnswer] | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._target.post_message(QuestionsNeeded(questions, future))
        return await future

    async def approve_plan(self, saved: SavedPlan) -> PlanVerdict:
        """The Coordinator's plan-approval boundary: the session screen's dialog."""
        future: asyncio.Future[PlanVerdict] = asyncio.get_running_loop().create_future()
        self._target.post_message(PlanApprovalNeeded(saved.plan, future))
        return await future
