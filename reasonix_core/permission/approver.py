"""The Approver protocol: how the core asks a human (or a script) for consent.

Approvals never travel through the event stream. The TUI implements this with
a modal screen, headless runs use :class:`FailClosedApprover`, tests use
:class:`ScriptedApprover`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class ApprovalDecision(enum.Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    tool: str
    arguments: dict[str, Any]
    call_id: str
    read_only: bool
    # The rule a session-wide allow would add, e.g. "Bash(pytest:*)" or "Edit(src/**)".
    scope: str
    # Short human-readable summary ("Run: pytest -q", "Edit src/app.py").
    summary: str = ""
    # Optional preview (a unified diff for edits).
    preview: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    question: str
    options: tuple[str, ...]
    multi_select: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionAnswer:
    question: str
    answers: tuple[str, ...] = ()
    note: str = ""


class Approver(Protocol):
    interactive: bool

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision: ...

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        """Ask the user multiple-choice questions (an answer may be free text); None when
        nobody can answer, an empty list when the user declined."""
        ...


class FailClosedApprover:
    """Headless: nobody to ask, so every Ask is a denial and questions go unanswered."""

    interactive = False

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.DENY

    async def ask(self, questions: Sequence[Question]) -> list[QuestionAnswer] | None:
        return None


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
