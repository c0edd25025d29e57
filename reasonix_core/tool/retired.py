"""Tools and endpoints seed 004 retired, answered plainly (its compatibility table).

A model trained on, or a transcript written by, an older Reasonix may still call
``complete_step`` (evidence-backed step sign-off), ``review_report`` (structured
review) or a read-policy receipt (``ReadCompletion`` / ``ReadPause``: the full-read
debt the host no longer keeps). None of them is offered, and a call gets one ordinary
``tool_retired`` result - not "unknown tool", so the model learns the mechanism is
gone rather than misspelt - and never changes anything: completion is the model's
call, a window read is enough to edit.

Recovery of calls whose outcome is unknown is retired the same way
(:mod:`reasonix_core.session.recovery`).
"""

from __future__ import annotations

from reasonix_core.tool.base import FOR_MODEL, SUMMARY, ToolResult

#: The stable code at the head of the result.
TOOL_RETIRED = "tool_retired"

#: Retired names and what replaced each.
RETIRED_TOOLS: dict[str, str] = {
    "complete_step": "finish the step and say so in your answer; completion is your call",
    "review_report": "write the review as your answer",
    "read_completion": "a read of any window is enough to edit the file; nothing to settle",
    "read_pause": "a read of any window is enough to edit the file; nothing to settle",
    "read_receipt": "a read of any window is enough to edit the file; nothing to settle",
}


def retired_result(name: str) -> ToolResult | None:
    """The one ``tool_retired`` result for a retired tool's call, else None."""
    instead = RETIRED_TOOLS.get(name)
    if instead is None:
        return None
    return ToolResult(
        text=f"{TOOL_RETIRED}: {name} is retired and did nothing; {instead}.",
        is_error=True,
        outcome="error",
        meta={"code": TOOL_RETIRED, SUMMARY: "Retired: it did nothing.", FOR_MODEL: True},
    )
