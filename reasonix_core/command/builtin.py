"""The built-in slash commands that are the session's, not a screen's: their
names, help text and argument hints, for every surface that offers them (the
terminal app's command table, an ACP client's command list).

Each acts on the session core (``Session.compact``, plan approval, the goal,
the effort, its status); how a surface shows the result is the surface's. The
terminal app's other built-ins (``/model``'s picker, ``/rewind``, ``/resume``,
``/copy``...) are screens and stay in ``reasonix_tui``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionCommand:
    name: str
    description: str
    argument_hint: str = ""


COMPACT = SessionCommand(
    name="compact", description="Fold the history now (words after it: what to keep)"
)
EFFORT = SessionCommand(
    name="effort", description="Show or set reasoning effort", argument_hint="[level]"
)
STATUS = SessionCommand(name="status", description="Model, effort, mode, usage and cost")
PLAN = SessionCommand(name="plan", description="Show the plan waiting for approval (approve it)")
GOAL = SessionCommand(
    name="goal",
    description="Start a goal the app drives in rounds; status, pause, resume, clear",
    argument_hint="<objective> | status | pause | resume | clear",
)

SESSION_COMMANDS: tuple[SessionCommand, ...] = (COMPACT, EFFORT, STATUS, PLAN, GOAL)

GOAL_USAGE = "Usage: /goal <objective> | status | pause | resume | clear"
# The /goal words that act on the goal; any other words are a new objective.
GOAL_WORDS = ("status", "pause", "resume", "clear")


def session_command(text: str) -> tuple[SessionCommand, str] | None:
    """The session command ``text`` invokes and its arguments, else None."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, *rest = stripped[1:].split(maxsplit=1) or [""]
    for command in SESSION_COMMANDS:
        if command.name == name:
            return command, rest[0].strip() if rest else ""
    return None
