"""Task budgets (seed 003, decision 4): cost, tokens and wall time as hard boundaries.

A :class:`BudgetMeter` is charged by every billed model call of the agents that
share it (the executor and its compaction requests go through one ModelCall;
a subagent or planner built with the same meter adds to the same tally). The
loop reads :meth:`BudgetMeter.exhausted` only at a step boundary, before the
next request is built, so a budget never interrupts a tool and the transcript
stays valid; the turn then fails with ``kind="max_budget"``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from reasonix_core.usage import Usage

# TurnFailed.kind of a turn stopped by a budget (the result's ``error_max_budget``).
BUDGET_EXHAUSTED_KIND = "max_budget"

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smh]?)")
_UNIT_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``1h30m`` -> seconds; ValueError otherwise."""
    flat = text.strip().lower()
    pos, total = 0, 0.0
    while pos < len(flat):
        match = _DURATION.match(flat, pos)
        if match is None:
            raise ValueError(f"not a duration: {text!r} (try 90s, 15m or 1h30m)")
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if not flat or total <= 0:
        raise ValueError(f"not a positive duration: {text!r} (try 90s, 15m or 1h30m)")
    return total


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """A task's limits; 0 means no limit of that kind."""

    cost: float = 0.0
    tokens: int = 0
    seconds: float = 0.0

    @property
    def any(self) -> bool:
        return bool(self.cost or self.tokens or self.seconds)


class BudgetMeter:
    """What a task has spent against its limits (every source counted)."""

    def __init__(self, limits: BudgetLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self.cost = 0.0
        self.tokens = 0
        self._started = clock()

    def restart(self) -> None:
        """A new task (a turn of the top-level agent): a fresh budget."""
        self.cost, self.tokens, self._started = 0.0, 0, self._clock()

    def charge(self, usage: Usage, cost: float) -> None:
        self.cost += cost
        self.tokens += usage.total_tokens

    @property
    def elapsed(self) -> float:
        return self._clock() - self._started

    def exhausted(self) -> str | None:
        """Which budget is used up, in words; None while every one has room."""
        lim = self.limits
        if lim.cost and self.cost >= lim.cost:
            return f"cost budget reached: {self.cost:.4f} spent of {lim.cost:g} (--max-cost)"
        if lim.tokens and self.tokens >= lim.tokens:
            return f"token budget reached: {self.tokens} used of {lim.tokens} (--max-tokens)"
        if lim.seconds and self.elapsed >= lim.seconds:
            return f"time budget reached: {self.elapsed:.0f}s of {lim.seconds:g}s (--max-time)"
        return None

    def left(self) -> str:
        """What remains, for a status bar: ``$0.42 · 12k tok · 3m left``."""
        parts: list[str] = []
        lim = self.limits
        if lim.cost:
            parts.append(f"${max(lim.cost - self.cost, 0):.2f}")
        if lim.tokens:
            parts.append(f"{max(lim.tokens - self.tokens, 0) // 1000}k tok")
        if lim.seconds:
            parts.append(f"{max(lim.seconds - self.elapsed, 0) / 60:.0f}m")
        return " · ".join(parts) + " left" if parts else ""
