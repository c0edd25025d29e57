"""The Approver protocol: how the core asks a human (or a script) for consent.

Approvals never travel through the event stream. The TUI implements this with
a modal screen, headless runs use :class:`FailClosedApprover`, tests the test
kit's ``ScriptedApprover`` (``reasonix_testkit``, not shipped).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from reasonix_core.tool.questions import Question as Question
from reasonix_core.tool.questions import QuestionAnswer as QuestionAnswer


class ApprovalDecision(enum.Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A denial in the approver's own words, which the model is given (a program's
    ``can_use_tool`` answer through claude-agent-sdk carries one)."""

    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Requester:
    """Which subagent a request comes from, so the user never approves a child's
    call believing it is the main agent's."""

    # The child's agent path (its spawner's labels, then its own).
    agent_path: tuple[str, ...]
    # Its profile, or the kind of task ("task", "read_only_task").
    name: str
    # The first line of its task, shortened.
    task: str
    # Who it is in people's words, outermost first: each subagent on the way by its
    # fleet item and profile or kind ("backend · task", "explore"); the agent path is
    # made of tool call ids, which say nothing to a person.
    lineage: tuple[str, ...] = ()


#: The subagent whose calls are being decided in this task (None: the session's
#: own agent). The subagent runner sets it around a child's run; tasks the
#: child starts inherit it, so every gate check inside the child sees it.
current_requester: ContextVar[Requester | None] = ContextVar(
    "reasonix_approval_requester", default=None
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """A tool call the policy says to ask about, as the approver shows it."""

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
    # A write-scope request (``bash`` with ``additional_write_dirs``): the physical
    # folders to make writable for the call, and the model's reason. Empty for an
    # ordinary call. "Allow for this session" then grants these folders.
    write_dirs: tuple[str, ...] = ()
    justification: str = ""
    # The subagent asking (None: the session's own agent).
    requester: Requester | None = None


class Approver(Protocol):
    interactive: bool

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision | Refusal: ...

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
