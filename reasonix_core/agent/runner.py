"""The Runner protocol: what every surface (CLI, TUI, tests) drives.

``Agent`` (single model) and, later, ``Coordinator`` (planner + executor) both
satisfy it, so callers never care which one they hold.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Protocol

from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.events import Event


class Runner(Protocol):
    @property
    def session_id(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def effort(self) -> str: ...

    def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncGenerator[Event, None]:
        """Run one user turn. Cancelling the consuming task cancels the turn and
        leaves the transcript valid; the stream always ends with TurnFinished or
        TurnFailed unless cancelled. ``meta`` is what the host knows about the turn
        (a goal start, a host-made round): the Coordinator routes on it."""
        ...
