"""Full garbage-collection passes that scan only what is new.

A full (generation 2) pass scans every tracked object that is not frozen. A
session keeps 100-300K of them (Textual's widgets, styles and cached strips,
more as the transcript grows), and one pass over them took 60-200 ms on the
bench machine: the longest stall while an answer streams
(``bench/bench_tui.py``). Right after a full pass everything still tracked is
alive, so :class:`HeapPolicy` freezes it then (``gc.freeze``): the next pass
scans only what was allocated since. Young passes stay automatic.

The price: a frozen object that later becomes cyclic garbage (a trimmed
transcript block, say) is not freed until the frozen heap is collected again.
:meth:`HeapPolicy.compact` does that (unfreeze, one full pass, freeze); the
app calls it when the user has been idle for a moment, and between model
requests once the frozen heap has grown by ``BOUND`` objects. No Textual import.
"""

from __future__ import annotations

import gc
from typing import Any

BOUND = 250_000  # frozen objects allowed to pile up before a compaction is due


class HeapPolicy:
    """Freeze after every automatic full pass; :meth:`compact` on request."""

    def __init__(self) -> None:
        self.installed = False
        self.baseline = 0  # frozen objects right after the last compaction
        self.compactions = 0
        self._compacting = False

    def install(self) -> None:
        if self.installed:
            return
        gc.freeze()  # the start-up heap: modules, classes, configuration
        self.baseline = gc.get_freeze_count()
        gc.callbacks.append(self._after_collection)
        self.installed = True

    def freeze(self) -> None:
        """Freeze what is alive now and count growth from here (start-up is done: the
        engine's configuration, schemas and tools live as long as the session)."""
        gc.freeze()
        self.baseline = gc.get_freeze_count()

    def uninstall(self) -> None:
        if self.installed:
            gc.callbacks.remove(self._after_collection)
            self.installed = False

    def _after_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == 2 and not self._compacting:
            gc.freeze()  # all that survived is alive: keep it out of the next scans

    @property
    def growth(self) -> int:
        """Objects frozen since the last compaction (some may be garbage by now)."""
        return max(gc.get_freeze_count() - self.baseline, 0)

    def due(self, bound: int = BOUND) -> bool:
        return self.installed and self.growth > bound

    def compact(self) -> int:
        """Collect the whole heap, frozen part included, and freeze what survives."""
        self._compacting = True
        try:
            gc.unfreeze()
            collected = gc.collect()
            gc.freeze()
        finally:
            self._compacting = False
        self.baseline = gc.get_freeze_count()
        self.compactions += 1
        return collected
