"""The session's goal projection: append-only ``goal`` records folded into one state.

Every change (create, edit, pause, resume, complete, blocked, clear) and every
admitted round is a record beside the messages (the transcript reader skips
them), so the goal never touches the prompt prefix. Whether the goal is *armed*
(the driver may admit rounds) is process state, never persisted: a cold start,
an import or a fork sees the goal but does not drive it until asked again.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from reasonix_core.agent.session import SessionStore, iter_records
from reasonix_core.goal_block import goal_block

GOAL_RECORD = "goal"
ROUND_RECORD = "goal_round"
#: ``blocked`` is believed only after this many finished rounds.
MIN_ROUNDS_FOR_BLOCKED = 3


class GoalStatus(enum.StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    COMPLETE = "complete"
    BLOCKED = "blocked"
    CLEARED = "cleared"


class GoalAction(enum.StrEnum):
    EDIT = "edit"
    PAUSE = "pause"
    RESUME = "resume"
    COMPLETE = "complete"
    BLOCKED = "blocked"


class GoalError(ValueError):
    """A goal change that cannot apply (the message is for the model or the user)."""


@dataclass(frozen=True, slots=True)
class Goal:
    id: str
    objective: str
    revision: int
    status: GoalStatus
    rounds: int = 0
    tokens: int = 0
    cost: float = 0.0
    note: str = ""

    @property
    def open(self) -> bool:
        """Still to be worked on (active or paused)."""
        return self.status in (GoalStatus.ACTIVE, GoalStatus.PAUSED)

    def describe(self) -> str:
        return (
            f"goal {self.id} (revision {self.revision}, {self.status.value}, "
            f"{self.rounds} round{'' if self.rounds == 1 else 's'}, {self.tokens} tokens): "
            f"{self.objective}"
        )


def project_goal(path: Path) -> Goal | None:
    """The session's newest goal, folded from its records (None: no goal, or cleared)."""
    goal: Goal | None = None
    for _, record in iter_records(path):
        kind = record.get("type")
        if kind == GOAL_RECORD:
            goal = _apply(goal, record)
        elif kind == ROUND_RECORD and goal is not None and record.get("id") == goal.id:
            tokens, cost = record.get("tokens"), record.get("cost")
            goal = replace(
                goal,
                rounds=goal.rounds + 1,
                tokens=goal.tokens + (tokens if isinstance(tokens, int) else 0),
                cost=goal.cost + (cost if isinstance(cost, int | float) else 0.0),
            )
    if goal is not None and goal.status is GoalStatus.CLEARED:
        return None
    return goal


def _apply(goal: Goal | None, record: dict[str, object]) -> Goal | None:
    action, goal_id = record.get("action"), record.get("id")
    objective, note = record.get("objective"), record.get("note")
    if not isinstance(goal_id, str):
        return goal
    if action == "create" and isinstance(objective, str):
        return Goal(goal_id, objective, 1, GoalStatus.ACTIVE)
    if goal is None or goal.id != goal_id:
        return goal
    note = note if isinstance(note, str) else ""
    if action == GoalAction.EDIT and isinstance(objective, str):
        return replace(goal, objective=objective, revision=goal.revision + 1)
    status = {
        GoalAction.PAUSE: GoalStatus.PAUSED,
        GoalAction.RESUME: GoalStatus.ACTIVE,
        GoalAction.COMPLETE: GoalStatus.COMPLETE,
        GoalAction.BLOCKED: GoalStatus.BLOCKED,
        "clear": GoalStatus.CLEARED,
    }.get(action)  # type: ignore[call-overload]
    if status is None:
        return goal
    return replace(goal, status=status, revision=goal.revision + 1, note=note)


class GoalBook:
    """Reads and changes the session's goal; holds whether it is armed (this process only)."""

    def __init__(self, session: SessionStore) -> None:
        self.session = session
        self.armed = False
        # The round the driver is running (goal id, tokens, cost so far): counted in
        # what update_goal, get_goal and /goal status say, so they agree with the
        # status bar mid-round. Process state; only finished rounds are recorded.
        self._running: tuple[str, int, float] | None = None

    def current(self) -> Goal | None:
        """The goal with the running round counted (rounds admitted, tokens spent)."""
        goal = self.recorded()
        running = self._running
        if goal is None or running is None or running[0] != goal.id:
            return goal
        return replace(
            goal,
            rounds=goal.rounds + 1,
            tokens=goal.tokens + running[1],
            cost=goal.cost + running[2],
        )

    def recorded(self) -> Goal | None:
        """The goal as its records say: finished rounds only."""
        return project_goal(self.session.path)

    def begin_round(self, goal: Goal) -> None:
        self._running = (goal.id, 0, 0.0)

    def spend(self, tokens: int, cost: float) -> None:
        """Usage of the running round, as it is reported."""
        if self._running is not None:
            goal_id, spent, paid = self._running
            self._running = (goal_id, spent + tokens, paid + cost)

    def end_round(self) -> None:
        self._running = None

    def active(self) -> Goal | None:
        """The goal the driver may advance: armed and active."""
        goal = self.current()
        if goal is None or not self.armed or goal.status is not GoalStatus.ACTIVE:
            return None
        return goal

    def create(self, objective: str) -> Goal:
        objective = objective.strip()
        if not objective:
            raise GoalError("the objective is empty")
        existing = self.current()
        if existing is not None and existing.open:
            raise GoalError(
                f"{existing.describe()} is still open; complete, mark blocked or clear it first"
            )
        goal_id = f"goal-{uuid.uuid4().hex[:8]}"
        self.session.append_event(GOAL_RECORD, action="create", id=goal_id, objective=objective)
        self.armed = True
        goal = self.current()
        assert goal is not None
        return goal

    def update(
        self, goal_id: str, revision: int, action: GoalAction, objective: str = "", note: str = ""
    ) -> Goal:
        goal = self.current()
        if goal is None or goal.id != goal_id:
            raise GoalError(f"no goal {goal_id!r} in this session")
        if revision != goal.revision:
            raise GoalError(
                f"revision {revision} is stale: {goal.describe()}; read it again (get_goal)"
            )
        if not goal.open:
            raise GoalError(f"{goal.describe()} is settled; nothing to change")
        if action is GoalAction.EDIT and not objective.strip():
            raise GoalError("edit needs the new objective")
        finished = (self.recorded() or goal).rounds
        if action is GoalAction.BLOCKED and finished < MIN_ROUNDS_FOR_BLOCKED:
            raise GoalError(
                f"blocked needs at least {MIN_ROUNDS_FOR_BLOCKED} finished rounds "
                f"({finished} so far); keep working on the goal"
            )
        fields: dict[str, object] = {"action": action.value, "id": goal_id}
        if action is GoalAction.EDIT:
            fields["objective"] = objective.strip()
        if note:
            fields["note"] = note
        self.session.append_event(GOAL_RECORD, **fields)
        updated = self.current()
        assert updated is not None
        return updated

    def clear(self) -> Goal | None:
        goal = self.current()
        if goal is None:
            return None
        self.session.append_event(GOAL_RECORD, action="clear", id=goal.id)
        self.armed = False
        return goal

    def record_round(self, goal: Goal, tokens: int, cost: float) -> None:
        self._running = None
        self.session.append_event(ROUND_RECORD, id=goal.id, tokens=tokens, cost=cost)

    def context_block(self) -> str:
        """The active goal for the user turn (never the system prompt)."""
        goal = self.active()
        if goal is None:
            return ""
        goal = self.recorded() or goal  # finished rounds: the request's bytes do not move
        return goal_block(goal.id, goal.revision, goal.rounds, goal.objective)
