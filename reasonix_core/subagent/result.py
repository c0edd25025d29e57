"""What a child gives back: :class:`SubagentResult` and the text the parent reads.

The parent's transcript receives :meth:`SubagentResult.render` and nothing else
of the child: for a writer the adjudicated status and criteria, then the
child's own prose, then the host's receipt (seed 000 §3.11); for a read-only
child its answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonix_core.subagent.capsule import ContextCapsule
from reasonix_core.subagent.completion import Adjudication


@dataclass(frozen=True, slots=True)
class SubagentResult:
    """What the parent gets back; :meth:`render` is its tool result."""

    label: str
    agent_path: tuple[str, ...]
    session_id: str
    read_only: bool
    ok: bool
    # read-only: "done" / "failed"; writers: the adjudicated status,
    # "unreported" (prose only) or "failed" (the run itself failed).
    status: str
    answer: str
    capsule: ContextCapsule
    error: str | None = None
    adjudication: Adjudication | None = None
    writes: tuple[str, ...] = ()
    commands: tuple[tuple[str, int], ...] = ()
    violations: tuple[str, ...] = ()
    # bash ran in a claim too large to snapshot: its changes are not itemised.
    unaccounted: bool = False

    @property
    def completion(self) -> str:
        """How a writer ended: "report" (complete_subtask), "prose", or "" (read-only / failed)."""
        if self.read_only or self.error is not None:
            return ""
        return "report" if self.adjudication is not None else "prose"

    @property
    def brief(self) -> str:
        """What it came back with, for people: the failure, the report's summary or the
        answer's first line."""
        if self.error is not None:
            return self.error
        if self.adjudication is not None and self.adjudication.summary.strip():
            return self.adjudication.summary
        return next((line for line in self.answer.splitlines() if line.strip()), "")

    def render(self) -> str:
        parts: list[str] = []
        if self.error is not None:
            parts.append(f"[subagent failed: {self.error}]")
        adj = self.adjudication
        if adj is not None:
            head = f"[subagent status: {adj.status}"
            if adj.status != adj.claimed_status:
                head += f" (claimed {adj.claimed_status}; downgraded by the host)"
            parts.append(head + "]")
            parts.append(f"Summary: {adj.summary}")
            if adj.items:
                lines = ["Acceptance criteria (checked by the host):"]
                lines += [
                    f"- [{i.verdict}] {i.criterion} ({i.kind}: {i.reason})" for i in adj.items
                ]
                parts.append("\n".join(lines))
            if adj.unresolved:
                parts.append("\n".join(["Unresolved:", *(f"- {u}" for u in adj.unresolved)]))
        elif not self.read_only and self.error is None:
            parts.append("[subagent status: unreported (it ended without complete_subtask)]")
        if self.answer:
            parts.append(self.answer)
        if not self.read_only:
            lines = ["Host receipt:"]
            lines.append(f"- wrote: {', '.join(self.writes) if self.writes else 'nothing'}")
            if self.commands:
                lines += [f"- ran: {c} (exit {code})" for c, code in self.commands]
            else:
                lines.append("- ran: no commands")
            if self.unaccounted:
                lines.append("- bash changes: not itemised (too many files in the claim)")
            if self.violations:
                lines.append(f"- WRITES OUTSIDE THE CLAIM: {', '.join(self.violations)}")
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    def render_resumable(self) -> str:
        """:meth:`render` and the line that names the child's transcript, for the tools
        that can go on in it (``continue_from`` / ``fork_from``)."""
        return (
            f"{self.render()}\n\n[subagent session: {self.session_id} - give it as "
            "continue_from to go on in this context, or fork_from to branch a copy]"
        )
