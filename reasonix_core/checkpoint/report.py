"""The words of ``reasonix rewind``: turn lists and rewind outcomes as text,
or as JSON for scripts (``--json``)."""

from __future__ import annotations

from typing import Any

from reasonix_core.checkpoint.restore import CREATE, REMOVE, CodePlan
from reasonix_core.checkpoint.rewind import RewindOutcome, TurnSummary
from reasonix_core.checkpoint.store import Change

_MARK = {REMOVE: "-", CREATE: "+"}


def _kind(change: Change) -> str:
    return "A" if change.before is None else "D" if change.after is None else "M"


def change_line(change: Change) -> str:
    """``M path +3 -1`` (``A`` added, ``D`` deleted, ``M`` changed; bin for binary)."""
    kind = _kind(change)
    if change.added is None or change.deleted is None:
        counts = "binary" if change.before and change.after else ""
    else:
        counts = f"+{change.added} -{change.deleted}"
    if change.before and change.after and change.before.oid == change.after.oid:
        counts = f"mode {change.before.mode} -> {change.after.mode}"
    return f"{kind} {change.path} {counts}".rstrip()


def format_turns(turns: list[TurnSummary]) -> str:
    if not turns:
        return "this session has no turns yet\n"
    lines: list[str] = []
    for turn in turns:
        when = turn.time.replace("T", " ")[:19] if turn.time else "-"
        lines.append(f"turn {turn.number}  {when}  {turn.head}")
        lines += [f"    {change_line(c)}" for c in turn.changes]
        if not turn.covers_bash:
            lines.append("    (no git on this host: changes made by bash are not covered)")
        lines += [f"    not kept: {p} ({why})" for p, why in sorted(turn.not_kept.items())]
    return "\n".join(lines) + "\n"


def format_plan(plan: CodePlan) -> list[str]:
    lines = [f"  {_MARK.get(a.kind, '~')} {a.path} ({a.kind})" for a in plan.actions]
    lines += [
        f"  ! {p}: changed outside Reasonix since the last checkpoint" for p in plan.conflicts
    ]
    lines += [f"  ? {p}: not kept by a checkpoint ({why}); left as is" for p, why in sorted(plan.not_kept.items())]  # fmt: skip
    return lines


def format_outcome(outcome: RewindOutcome) -> str:
    verb = "would rewind" if outcome.dry_run else "rewound"
    lines: list[str] = []
    if outcome.scope in ("code", "both"):
        if outcome.plan is None or not outcome.plan.actions:
            lines.append(f"code: nothing to rewind ({outcome.note or 'no file differs'})")
        else:
            count = len(outcome.plan.actions)
            lines.append(f"code: {verb} {count} path{'s' * (count != 1)} to the start of turn {outcome.turn}")  # fmt: skip
        if outcome.plan is not None:
            lines += format_plan(outcome.plan)
    if outcome.scope in ("chat", "both"):
        if outcome.dry_run:
            lines.append(f"chat: would continue from just before turn {outcome.turn}")
        else:
            lines.append(f"chat: the next -c continues from just before turn {outcome.turn}")
    return "\n".join(lines) + "\n"


def turns_json(turns: list[TurnSummary]) -> dict[str, Any]:
    return {
        "turns": [
            {
                "turn": t.number,
                "time": t.time,
                "prompt": t.head,
                "bash_covered": t.covers_bash,
                "files": [
                    {
                        "path": c.path,
                        "change": _kind(c),
                        "added": c.added,
                        "deleted": c.deleted,
                        "mode_before": c.before.mode if c.before else None,
                        "mode_after": c.after.mode if c.after else None,
                    }
                    for c in t.changes
                ],
                "not_kept": t.not_kept,
            }
            for t in turns
        ]
    }


def outcome_json(outcome: RewindOutcome) -> dict[str, Any]:
    plan = outcome.plan
    return {
        "turn": outcome.turn,
        "scope": outcome.scope,
        "dry_run": outcome.dry_run,
        "code": None
        if plan is None
        else {
            "actions": [{"path": a.path, "action": a.kind} for a in plan.actions],
            "conflicts": list(plan.conflicts),
            "not_kept": plan.not_kept,
            "changed": list(outcome.changed),
        },
        "chat_branched": outcome.branched,
        "note": outcome.note,
    }
