"""Host-adjudicated completion (seed 000 §3.11).

A writer child ends with ``complete_subtask``: a status, a summary, the
acceptance criteria with evidence, and what is unresolved. The status is a
claim, not a verdict: the host checks every criterion against its receipts
(:mod:`reasonix_core.subagent.receipts`) before the parent sees it.

- ``verification`` must name a command the host recorded as run, and it must
  have exited 0;
- ``diff`` / ``files`` must name paths the host saw written in this run;
- ``manual`` never proves itself.

An item the receipts cannot back becomes ``unsatisfied`` (with the reason), and
a report holding one cannot stay ``complete``: it becomes ``partial``. The
host only downgrades, never upgrades.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reasonix_core.subagent.receipts import Receipts
from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import COMPLETE_SUBTASK, SpecifiedTool
from reasonix_core.tool.sandbox import PathDenied, SandboxPolicy

# The schema's enums (specs.COMPLETION_STATUSES / EVIDENCE_KINDS) as types; a
# test holds them equal.
Status = Literal["complete", "partial", "blocked", "failed"]
Kind = Literal["verification", "diff", "files", "manual"]


class _Strict(BaseModel):
    model_config = ConfigDict(ARGS_CONFIG, str_max_length=20_000)


class Evidence(_Strict):
    kind: Kind
    command: str | None = None
    paths: list[str] = Field(default_factory=list, max_length=200)


class Criterion(_Strict):
    criterion: str
    evidence: Evidence


class CompletionReport(_Strict):
    status: Status
    summary: str
    acceptance_criteria: list[Criterion] = Field(max_length=100)
    unresolved: list[str] = Field(default_factory=list, max_length=100)


def parse_report(args: dict[str, Any]) -> CompletionReport:
    """Validate ``complete_subtask`` arguments (``ToolArgumentError`` says what is wrong)."""
    report: CompletionReport = validate_args(CompletionReport, args)
    return report


@dataclass(frozen=True, slots=True)
class Item:
    criterion: str
    kind: str
    verdict: Literal["satisfied", "unsatisfied"]
    reason: str


@dataclass(frozen=True, slots=True)
class Adjudication:
    claimed_status: str
    status: str
    summary: str
    items: tuple[Item, ...]
    unresolved: tuple[str, ...]

    @property
    def downgrades(self) -> int:
        return sum(1 for item in self.items if item.verdict == "unsatisfied")

    @property
    def false_completion(self) -> bool:
        """Claimed complete, and the host would not back it."""
        return self.claimed_status == "complete" and self.status != "complete"


def _normal(command: str) -> str:
    return " ".join(command.split())


def adjudicate(
    report: CompletionReport, receipts: Receipts, sandbox: SandboxPolicy
) -> Adjudication:
    items = tuple(_check(c, receipts, sandbox) for c in report.acceptance_criteria)
    status = report.status
    if status == "complete" and any(item.verdict == "unsatisfied" for item in items):
        status = "partial"
    return Adjudication(
        claimed_status=report.status,
        status=status,
        summary=report.summary,
        items=items,
        unresolved=tuple(report.unresolved),
    )


def _check(criterion: Criterion, receipts: Receipts, sandbox: SandboxPolicy) -> Item:
    evidence = criterion.evidence
    kind = evidence.kind

    def item(ok: bool, reason: str) -> Item:
        return Item(criterion.criterion, kind, "satisfied" if ok else "unsatisfied", reason)

    if kind == "manual":
        return item(False, "manual evidence proves nothing by itself")
    if kind == "verification":
        if not evidence.command or not evidence.command.strip():
            return item(False, "verification names no command")
        wanted = _normal(evidence.command)
        runs = [c for c in receipts.commands if _normal(c.command) == wanted]
        if not runs:
            return item(False, f"the host recorded no run of `{evidence.command.strip()}`")
        last = runs[-1]
        if not last.succeeded:
            return item(False, f"`{wanted}` ran but exited {last.exit_code}")
        return item(True, f"`{wanted}` ran, exit 0")
    # diff / files
    if not evidence.paths:
        return item(False, f"{kind} evidence names no paths")
    unseen: list[str] = []
    for text in evidence.paths:
        try:
            path = sandbox.resolve(text, follow_symlinks=False)
        except PathDenied:
            unseen.append(text)
            continue
        if path not in receipts.writes:
            unseen.append(text)
    if unseen:
        return item(False, f"not written in this run: {', '.join(unseen)}")
    return item(True, f"written: {', '.join(evidence.paths)}")


class CompleteSubtaskTool(SpecifiedTool, spec=COMPLETE_SUBTASK):
    """A writer child's report; the runner passes where it goes (its receipts)."""

    def __init__(self, on_report: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.on_report = on_report

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self.on_report is None:
            return ToolResult.error("complete_subtask: only a subagent reports to a host")
        report = parse_report(args)  # a bad report: the registry makes it an error result
        self.on_report(report.model_dump())
        return ToolResult(
            text="Report received; the host will check it against what it saw. "
            "Now answer with a short summary and make no more tool calls."
        )
