"""The Tool protocol, tool results and the per-call context.

A tool never raises out of ``execute`` for an ordinary failure: it returns a
:class:`ToolResult` with ``is_error=True`` so the model can correct itself. The
registry catches anything that escapes anyway and turns it into a result.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from reasonix_core.tool.call_gate import CallGate
from reasonix_core.tool.env import SessionEnv

if TYPE_CHECKING:  # types only: building a context imports none of these
    from datetime import datetime

    from reasonix_core.events import Event, ToolProgress
    from reasonix_core.memory.facts import FactStore
    from reasonix_core.memory.history import HistoryIndex
    from reasonix_core.memory.recall import Recaller
    from reasonix_core.messages import Message
    from reasonix_core.permission.approver import Approver
    from reasonix_core.skills import Skill, SkillCatalog
    from reasonix_core.tool.jobs import JobManager
    from reasonix_core.tool.ledger import FileLedger
    from reasonix_core.tool.sandbox import SandboxPolicy
    from reasonix_core.tool.todos import Todo


#: The model's id of the tool call being executed, for tools that report
#: progress or ask for approval on behalf of another call (the MCP proxy).
current_call_id: ContextVar[str] = ContextVar("reasonix_current_call_id", default="")

#: The transcript of the agent running the current call (set by the loop for each
#: call, so a subagent's calls see the subagent's own), for ``session:tool_result``
#: (reasonix_core.tool.kept_results). Empty outside a call.
current_transcript: ContextVar[Sequence[Message]] = ContextVar(
    "reasonix_current_transcript", default=()
)


class PlanModeHost(Protocol):
    """What ``exit_plan_mode`` needs of the session's plan mode (declared here for
    the same reason as :class:`CallGate`)."""

    async def present(self, plan: str) -> ToolResult: ...


class ToolFamily(enum.StrEnum):
    """What kind of effect a tool has; permission rules read it (the ``Read``
    and ``Edit`` aliases cover a family, network tools fall back to asking)."""

    READ = "read"  # reads files by path
    EDIT = "edit"  # writes, edits or moves files by path
    EXECUTE = "execute"  # runs or manages processes
    NETWORK = "network"  # sends data off the machine
    OTHER = "other"  # session state, questions, memory, MCP tools


#: ``ToolResult.meta`` keys for people, never sent to the model (kept in the tool
#: message's meta, so a resumed session shows what the live one did):
#: the call in people's words, shown in place of the result: a short account the card
#: folds to ("Read 42 lines"; expanding shows the result) or, with FOR_MODEL, all
#: people see of it ("You denied it.", a fleet's items, a subagent's answer without the
#: line telling the model how to go on in its transcript).
SUMMARY = "summary"
#: True when the result's text is addressed to the model (a refusal telling it what to
#: do next, a fleet's XML): people see the summary, never the text.
FOR_MODEL = "for_model"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What a tool call returns to the model (``meta`` stays local)."""

    text: str
    is_error: bool = False
    # "ok" | "error" | "denied" | "cancelled" | "unknown"
    outcome: str = "ok"
    # Local-only extras (e.g. a diff for the UI); never sent to the provider.
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, text: str, **meta: object) -> ToolResult:
        return cls(text=text, is_error=True, outcome="error", meta=dict(meta))

    @classmethod
    def denied(cls, text: str, summary: str) -> ToolResult:
        """A refused call: ``text`` tells the model what to do next, ``summary``
        tells people what happened (they never see ``text``)."""
        return cls(
            text=text, is_error=True, outcome="denied", meta={SUMMARY: summary, FOR_MODEL: True}
        )


@dataclass(kw_only=True)
class ToolContext:
    """What a tool may touch during one session. Shared by every call.

    ``env`` holds the session's facts (frozen, :mod:`reasonix_core.tool.env`);
    the rest is this agent's own state and handles. The session
    (``session/build.py``) fills every service; tests and embedders set only
    what they exercise, so each ``None`` below has a stated fallback.
    """

    env: SessionEnv
    # What the model has observed of each file (stale-edit checks). None: the
    # file tools create one on first use and keep it here.
    ledger: FileLedger | None = None
    # Background shell jobs. None: ``run_in_background`` is refused.
    jobs: JobManager | None = None
    # The top-level session's plan mode, for ``exit_plan_mode``
    # (reasonix_core.coordinator.plan_mode.PlanMode). None: a subagent, or no host,
    # so the tool refuses.
    plan_mode: PlanModeHost | None = None
    # The top-level session's goal (reasonix_core.goal.state.GoalBook), for the goal
    # tools. None: a subagent, so they refuse.
    goals: Any = None
    # Memory: facts, the session-history index, automatic recall. None: built on
    # first use (reasonix_core.memory) and kept here.
    facts: FactStore | None = None
    history: HistoryIndex | None = None
    recall: Recaller | None = None
    # The model's task list, replaced whole by ``todo_write``.
    todos: tuple[Todo, ...] = ()
    # Where a running tool reports progress (MCP ``notifications/progress``);
    # set by the agent for each batch. None: reports are dropped.
    tool_progress: Callable[[ToolProgress], None] | None = None
    # The session's skills, for ``run_skill``. None: the session has none.
    skills: SkillCatalog | None = None
    # The hook that runs a ``runAs: subagent`` skill as a child agent through the
    # subagent runner: (skill, arguments, the calling context) -> the child's result.
    # None: run_skill answers such a skill with an error result.
    run_subagent_skill: Callable[[Skill, str, ToolContext], Awaitable[ToolResult]] | None = None
    # The session's subagent runner (reasonix_core.subagent.runner.SubagentRunner),
    # for the delegation tools; typed loosely because the tool layer must not
    # import the subagent package. None: delegation is unavailable.
    subagents: object | None = None
    # Where a delegation tool forwards its children's events (tagged with their
    # agent path) into this agent's stream; set by the agent for each batch.
    child_events: Callable[[Event], Awaitable[None]] | None = None

    # The session's facts, read through (one owner: ``env``).

    @property
    def workspace(self) -> Path:
        return self.env.workspace

    @property
    def temp_dir(self) -> Path:
        return self.env.temp_dir

    @property
    def home(self) -> Path | None:
        return self.env.home

    @property
    def sandbox(self) -> SandboxPolicy | None:
        return self.env.sandbox

    @property
    def approver(self) -> Approver | None:
        return self.env.approver

    @property
    def gate(self) -> CallGate | None:
        return self.env.gate

    @property
    def read_denied(self) -> Callable[[str, Path], bool] | None:
        return self.env.read_denied

    @property
    def secret_env(self) -> frozenset[str]:
        return self.env.secret_env

    @property
    def bash_timeout_seconds(self) -> float:
        return self.env.bash_timeout_seconds

    @property
    def clock(self) -> Callable[[], datetime] | None:
        return self.env.clock

    @property
    def session_id(self) -> str:
        return self.env.session_id


class Tool(Protocol):
    """A capability the model can call.

    ``parameters`` is the JSON schema of the arguments object; the registry
    canonicalises it once so the bytes the provider sees never change within a
    session.
    """

    # Read-only: an attribute (the built-ins' from their spec) or a property (LazyTool).
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def family(self) -> ToolFamily: ...
    @property
    def parameters(self) -> dict[str, Any]: ...

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
