"""The goal driver: while the session's goal is active and armed, admit one
ordinary top-level turn at a time through the runner's normal entry point.

A final answer does not end the goal; only the goal's own status does
(``update_goal`` complete / blocked, or the user's pause / clear), or a bound:
``[agent] max_goal_rounds`` and ``goal_token_budget`` (unset: observed only),
counted from the moment the driver starts. Reaching a bound disarms the goal and
leaves it active, so resuming it starts a fresh allowance.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

from reasonix_core import events as ev
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.runner import Runner
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.goal.state import GoalBook, GoalStatus

#: The user turn of every round after the first (the goal itself is appended
#: to each user turn by the session's context suffix).
CONTINUE_PROMPT = "Continue working toward the active goal."


class GoalStop(enum.StrEnum):
    COMPLETE = "complete"
    BLOCKED = "blocked"
    BOUND = "bound"  # a round or token bound: the goal stays active, disarmed
    STOPPED = "stopped"  # paused, cleared or disarmed by the user
    FAILED = "failed"  # a round failed (the turn's own error says why)


@dataclass(frozen=True, slots=True)
class GoalBounds:
    max_rounds: int | None = None
    token_budget: int | None = None


@dataclass
class GoalDriver:
    book: GoalBook
    bounds: GoalBounds
    stop: GoalStop | None = None

    async def drive(self, runner: Runner, first_prompt: str = "") -> AsyncIterator[ev.Event]:
        """Run rounds until the goal settles or a bound is reached; ``stop`` says why."""
        sequence = EventSequence()
        prompt = first_prompt or CONTINUE_PROMPT
        # The objective's round is a Goal start (the Coordinator plans it first when
        # a planner is configured); every later round is host-made.
        meta = TurnMeta(goal_start=True) if first_prompt else TurnMeta(synthetic=True)
        admitted, spent = 0, 0
        while True:
            goal = self.book.active()
            if goal is None:
                current = self.book.current()
                if current is not None and current.status is GoalStatus.COMPLETE:
                    self.stop = GoalStop.COMPLETE
                elif current is not None and current.status is GoalStatus.BLOCKED:
                    self.stop = GoalStop.BLOCKED
                else:
                    self.stop = GoalStop.STOPPED
                return
            if self._bound_reached(admitted, spent):
                self.book.armed = False
                self.stop = GoalStop.BOUND
                return
            tokens, cost, failed = 0, 0.0, False
            self.book.begin_round(goal)
            try:
                async with aclosing(runner.run(prompt, meta)) as events:
                    async for event in events:
                        if isinstance(event, ev.UsageReported):
                            used = event.usage.prompt_tokens + event.usage.completion_tokens
                            tokens += used
                            cost += event.cost
                            self.book.spend(used, event.cost)
                        elif isinstance(event, ev.TurnFailed):
                            failed = True
                        yield sequence.adopt(event)
            finally:
                self.book.end_round()
            prompt, meta = CONTINUE_PROMPT, TurnMeta(synthetic=True)
            admitted, spent = admitted + 1, spent + tokens
            self.book.record_round(goal, tokens, cost)
            after = self.book.current()
            status = after.status.value if after is not None else GoalStatus.CLEARED.value
            yield sequence(
                ev.GoalRound,
                goal_id=goal.id,
                round=goal.rounds + 1,
                status=status,
                rounds=after.rounds if after is not None else goal.rounds + 1,
                tokens=after.tokens if after is not None else goal.tokens + tokens,
                cost=after.cost if after is not None else goal.cost + cost,
            )
            if failed:
                self.book.armed = False
                self.stop = GoalStop.FAILED
                return

    def _bound_reached(self, rounds: int, tokens: int) -> bool:
        b = self.bounds
        if b.max_rounds is not None and rounds >= b.max_rounds:
            return True
        return b.token_budget is not None and tokens >= b.token_budget
