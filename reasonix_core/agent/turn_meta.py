"""What the host knows about a turn: part of the Runner interface (agent/runner.py),
below the modes that route on it (coordinator/routes.py re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.images import ImagePart
    from reasonix_core.pasted import PastedSpan


@dataclass(frozen=True, slots=True)
class TurnMeta:
    """What the host (never the model or the user's wording) knows about a turn."""

    # The turn starts a Goal (``/goal``, ``reasonix run --goal``).
    goal_start: bool = False
    # A host-made turn (a goal round, a continuation): always the executor's.
    synthetic: bool = False
    # Images the user attached (``@shot.png``, a pasted path, an editor's image
    # block): the host read them; the agent sends or describes them (agent/vision.py).
    images: tuple[ImagePart, ...] = ()
    # Large pastes in the prompt, shown collapsed (the TUI's composer): kept beside
    # the user's message so a resumed transcript shows them the same way.
    pasted: tuple[PastedSpan, ...] = ()
