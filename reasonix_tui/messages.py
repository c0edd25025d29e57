"""App-wide messages that carry a Future back to the core (Future-in-Message)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from reasonix_core.coordinator.plans import PlanVerdict
    from reasonix_core.permission.approver import (
        ApprovalDecision,
        ApprovalRequest,
        Question,
        QuestionAnswer,
    )


class ApprovalNeeded(Message):
    """The core waits on ``future`` for the user's decision on ``request``."""

    def __init__(self, request: ApprovalRequest, future: asyncio.Future[ApprovalDecision]) -> None:
        super().__init__()
        self.request = request
        self.future = future


class QuestionsNeeded(Message):
    def __init__(
        self,
        questions: Sequence[Question],
        future: asyncio.Future[list[QuestionAnswer] | None],
    ) -> None:
        super().__init__()
        self.questions = questions
        self.future = future


class PlanApprovalNeeded(Message):
    """The Coordinator waits on ``future`` for the user's verdict on ``plan``."""

    def __init__(self, plan: str, future: asyncio.Future[PlanVerdict]) -> None:
        super().__init__()
        self.plan = plan
        self.future = future
