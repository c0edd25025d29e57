"""What the agent asks of the workspace snapshots taken around its turns.

The session (``reasonix_core/session/``) passes in the checkpoint recorder
(``checkpoint/recorder.py``); the agent knows only this protocol, so ``agent/``
needs nothing from ``checkpoint/`` above it (docs/REWIND.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class TurnSnapshots(Protocol):
    def turn_started(self, turn: int) -> None:
        """A turn began (nothing ran yet)."""
        ...

    async def before_tool(
        self, turn: int, tool: str = "", args: Mapping[str, Any] | None = None
    ) -> None:
        """A tool that may write is about to run."""
        ...

    async def turn_end(self, turn: int) -> None:
        """The turn is over."""
        ...
