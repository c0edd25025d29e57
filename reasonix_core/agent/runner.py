"""The Runner protocol: what every surface (CLI, TUI, tests) drives.

``Agent`` (single model) and, later, ``Coordinator`` (planner + executor) both
satisfy it, so callers never care which one they hold.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from reasonix_core.events import Event


@dataclass(frozen=True, slots=True)
class TurnMeta:
    """What the host (never the model or the user's wording) knows about a turn.

    Declared with the Runner it is passed to (the Coordinator routes on it), so the
    agent layer needs nothing from the coordinator above it."""

    # The turn starts a Goal (``/goal``, ``reasonix run --goal``).
    goal_start: bool = False
    # A host-made turn (a goal round, a continuation): always the executor's.
    synthetic: bool = False


class Runner(Protocol):
    @property
    def session_id(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def effort(self) -> str: ...

    def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncIterator[Event]:
        """Run one user turn. Cancelling the consuming task cancels the turn and
        leaves the transcript valid; the stream always ends with TurnFinished or
        TurnFailed unless cancelled. ``meta`` is what the host knows about the turn
        (a goal start, a host-made round): the Coordinator routes on it."""
        ...
