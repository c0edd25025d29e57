"""The single ordered event stream between the core and every surface.

Each event is a frozen, slotted dataclass. ``seq`` increases monotonically per
runner and ``agent_path`` is empty for the main agent, so subagent events can
be merged into one stream. The TUI, ``reasonix run --output-format
stream-json`` and the metrics sink all consume exactly this stream.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from reasonix_core.usage import Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event: its place in the stream and the agent that emitted it."""

    seq: int = 0
    agent_path: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return _KIND_BY_CLASS[type(self)]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["agent_path"] = list(self.agent_path)
        return {"type": self.kind, **data}


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(Event):
    """A turn began with this user prompt."""

    session_id: str
    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStarted(Event):
    """A request was built and frozen; ``step`` counts from 1 within the turn."""

    step: int
    model: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(Event):
    """A piece of the answer's text as it streams."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta(Event):
    """A piece of the model's reasoning as it streams."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta(Event):
    """A fragment of a tool call still streaming, for live display only."""

    index: int
    call_id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted(Event):
    """A whole tool call, about to go through the permission gate and run."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished(Event):
    """A tool call's result, exactly one per call."""

    call_id: str
    name: str
    result: str
    is_error: bool = False
    # "ok", "error", "denied", "cancelled" or "unknown" (started, no reliable result)
    outcome: str = "ok"
    # A unified diff of what a file tool wrote, for display only.
    diff: str = ""
    # For people only (reasonix_core.tool.base.SUMMARY / FOR_MODEL): a short account
    # of the call shown in place of ``result``, and whether ``result`` is addressed to
    # the model alone (then people see the summary, never the text).
    summary: str = ""
    for_model: bool = False
    # The result as people read it when it differs from ``result`` (the kept whole of a
    # result the model got bounded with a marker telling it how to page the rest; the
    # text without the host's reminder to the model); "": ``result``. Display only:
    # left out of to_json (``result`` is what the model read).
    full_result: str = ""

    def to_json(self) -> dict[str, Any]:
        data = Event.to_json(self)
        data.pop("full_result", None)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearched(Event):
    """The provider ran a web search server-side (``web_search = true``): shown like
    a tool call, though nothing ran here and no permission was asked."""

    call_id: str
    query: str
    # None: the provider does not say how many (the Responses kind).
    results: int | None
    # The provider's error code when the search failed ("" when it did not).
    error: str = ""

    @property
    def title(self) -> str:
        """The one line every surface shows for it."""
        return f"Searched the web: {self.query}" if self.query else "Searched the web"

    @property
    def outcome(self) -> str:
        if self.error:
            return f"search failed: {self.error}"
        if self.results is None:
            return "done"
        return f"{self.results} result{'' if self.results == 1 else 's'}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress(Event):
    """Progress reported by a running tool (e.g. MCP ``notifications/progress``).

    ``call_id`` is the model's tool-call id when known, else "". ``total`` is
    None when the tool does not know how much work there is.
    """

    call_id: str = ""
    name: str
    progress: float
    total: float | None = None
    message: str = ""
    # The last lines of a running command's output (bash), for display only.
    output: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageReported(Event):
    """One billed model call. ``source`` buckets it (executor, planner, compaction...)."""

    usage: Usage
    model: str
    source: str = "executor"
    cost: float = 0.0
    currency: str = "USD"
    # The request's number in its session (the request records' ``request``).
    request: int = 0
    # Time to the first streamed output of the answered attempt; None without output.
    ttft_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Retrying(Event):
    """A request failed in a retryable way and is sent again after ``delay``."""

    attempt: int
    delay: float
    reason: str
    # The failed attempt's ProviderError.kind ("empty_response", "http", "stream"...).
    error_kind: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixChanged(Event):
    """An earlier part of the request changed; the reason explains the cache miss."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheBroken(Event):
    """A billed request was not an append-only extension of its agent's previous one.

    ``reason``: the PrefixChanged reason that announced it, or ``unexplained``.
    ``rebilled_tokens``: the previous request's tokens after ``first_diff_byte``
    (None: the position is unknown, the whole previous prompt is counted), now
    billed at the cache-miss price instead of the hit price (``rebilled_cost``)."""

    request: int
    reason: str
    first_diff_byte: int | None
    rebilled_tokens: int
    rebilled_cost: float = 0.0
    currency: str = "USD"
    # The bytes around the first difference, escaped: (common part, was, now).
    context: tuple[str, str, str] = ("", "", "")


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice(Event):
    """Something the user should know that is not part of the answer."""

    level: Literal["info", "warning", "error"] = "info"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HookRan(Event):
    """A configured hook ran (docs/HOOKS.md): which, from which file, and how it ended."""

    hook_event: str  # "PreToolUse", "Stop", ...
    command: str  # shortened for display
    source: str  # the settings file it came from
    outcome: Literal["ok", "blocked", "error", "timeout"] = "ok"
    exit_code: int | None = None
    # What the user is told about it ("" when it went on quietly).
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionStarted(Event):
    """A maintenance transaction on the context began."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionFinished(Event):
    """A maintenance transaction on the context ended (``ok``: under the threshold)."""

    reason: str
    ok: bool = True
    tokens_after: int | None = None  # the estimated size after it (None: the view did not change)
    failure: str = ""  # why a paid summary gave no digest (the history stays as it was)


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStarted(Event):
    """A child run began. Emitted in the spawner's stream (``agent_path`` is the
    spawner's); the child's own events follow tagged with ``child_path``, so its
    steps, tools and usage are read from them, never copied here."""

    name: str  # the profile, or "task" / "read_only_task"
    child_path: tuple[str, ...] = ()
    tool_call_id: str = ""  # the spawner's tool call (task, read_only_task, fleet)
    fleet_item: str = ""  # the fleet item id this child runs; "" outside a fleet
    read_only: bool = False
    prompt: str = ""
    # The child's ContextCapsule (its transcript sidecar), by hash.
    capsule_hash: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentFinished(Event):
    """A subagent ended."""

    name: str
    ok: bool = True
    child_path: tuple[str, ...] = ()
    tool_call_id: str = ""
    # The host-adjudicated status of a writer's report ("complete", "partial",
    # "blocked", ...), "unreported" (a writer that ended in prose), else "done",
    # "failed" or "cancelled".
    status: str = ""
    read_only: bool = False
    # The host's record, which the metrics read: how a writer ended ("report",
    # "prose", or "" for read-only and failed runs), the status it claimed, how
    # many criteria the host downgraded, the paths it wrote (workspace-relative)
    # and those outside its claim.
    completion: str = ""
    claimed_status: str = ""
    downgrades: int = 0
    mutations: tuple[str, ...] = ()
    violations: tuple[str, ...] = ()


FleetItemState = Literal["waiting", "running", "done", "failed", "skipped", "cancelled"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetItemChanged(Event):
    """One item of a fleet changed state. Every item is reported ``waiting`` after
    preflight and before any item starts, so the first events are the plan."""

    tool_call_id: str
    item_id: str
    state: FleetItemState
    depends_on: tuple[str, ...] = ()
    reason: str = ""  # why it was skipped or failed


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalRound(Event):
    """Goal mode: one admitted round ended (docs/MODES.md#goal-mode). ``status`` is the
    goal's after the round; the totals are the goal's, over every round so far."""

    goal_id: str
    round: int
    status: str
    rounds: int
    tokens: int
    cost: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteDecided(Event):
    """The coordinator chose who takes the turn (docs/MODES.md). ``reason`` names
    the directive or metadata, never the user's text."""

    route: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanReady(Event):
    """The planner submitted a plan; ``disposition``: what the host does with it
    ("execute", "await_approval", "saved", "approved", "kept", "rejected")."""

    plan_id: str
    plan: str
    route: str
    disposition: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished(Event):
    """The turn ended with an answer (or stopped at a limit: ``stop_reason``)."""

    # "stop", "length", "content_filter", "cancelled", "max_steps"; a coordinator
    # turn that ends with a plan: "plan_saved", "plan_pending", "plan_rejected"
    stop_reason: str
    text: str = ""
    steps: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFailed(Event):
    """The turn ended without an answer: a request or the run failed."""

    error: str
    # The failure's kind shadows Event.kind, so to_json()'s "type" is this kind
    # ("error", "budget"...), not "turn_failed"; kept as the stream-json output has it.
    kind: str = "error"  # pyright: ignore[reportIncompatibleMethodOverride]
    status: int | None = None
    steps: int = 0
    details: dict[str, Any] = field(default_factory=dict)


_KIND_BY_CLASS: dict[type[Event], str] = {
    TurnStarted: "turn_started",
    HookRan: "hook_ran",
    StepStarted: "step_started",
    TextDelta: "text_delta",
    ReasoningDelta: "reasoning_delta",
    ToolCallDelta: "tool_call_delta",
    ToolCallStarted: "tool_call_started",
    ToolCallFinished: "tool_call_finished",
    ToolProgress: "tool_progress",
    WebSearched: "web_search",
    UsageReported: "usage",
    Retrying: "retrying",
    PrefixChanged: "prefix_changed",
    CacheBroken: "cache_broken",
    Notice: "notice",
    CompactionStarted: "compaction_started",
    CompactionFinished: "compaction_finished",
    SubagentStarted: "subagent_started",
    SubagentFinished: "subagent_finished",
    FleetItemChanged: "fleet_item_changed",
    TurnFinished: "turn_finished",
    TurnFailed: "turn_failed",
    RouteDecided: "route_decided",
    PlanReady: "plan_ready",
    GoalRound: "goal_round",
}
