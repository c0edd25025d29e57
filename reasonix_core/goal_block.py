"""The active goal's block in a user turn (goal mode, reasonix_core.goal): written by
the goal book, taken out again wherever a user message is shown as the user's
words (history, replay)."""

from __future__ import annotations

import re

INSTRUCTION = (
    "Work toward this goal. A final answer does not end it: call update_goal with "
    "action complete when it is met (or blocked, after real attempts)."
)

_BLOCK = re.compile(
    r"\n*<active-goal\b[^>]*>.*?</active-goal>\n*(?:" + re.escape(INSTRUCTION) + r")?\n*",
    re.DOTALL,
)


def goal_block(goal_id: str, revision: int, rounds: int, objective: str) -> str:
    return (
        f'<active-goal id="{goal_id}" revision="{revision}" rounds="{rounds}">\n'
        f"{objective}\n</active-goal>\n{INSTRUCTION}"
    )


def without_goal_block(text: str) -> str:
    """``text`` without the host's goal block and its instruction."""
    return _BLOCK.sub("\n", text).strip()
