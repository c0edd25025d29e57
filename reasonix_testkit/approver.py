"""A scripted :class:`~reasonix_core.permission.approver.Approver` for tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Question,
    QuestionAnswer,
)


@dataclass
class ScriptedApprover:
    """Answers from a script, for tests; records every request it saw."""

    decisions: list[ApprovalDecision] = field(default_factory=list)
    answers: list[list[QuestionAnswer] | None] = field(default_factory=list)
    seen: list[ApprovalRequest] = field(default_factory=list)
    questions_seen: list[Sequence[Question]] = field(default_factory=list)
    interactive: bool = True

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.seen.append(request)
        if not self.decisions:
            return ApprovalDecision.DENY
        return self.decisions.pop(0)

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        self.questions_seen.append(questions)
        if not self.answers:
            return None
        return self.answers.pop(0)
