"""When the TUI's garbage collector does a full pass: off the hot path.

A full collection (generation 2) scans every tracked object. Textual keeps a
few hundred objects per widget (styles, caches, rendered strips), so with a
long answer on screen one full pass takes 100-250 ms: an event-loop stall in
the middle of a stream that also delays keystrokes (``bench/bench_tui.py``
measured it). With the policy installed (``run_app`` does; tests do not, so
that they never freeze objects):

- everything alive at start-up (modules, classes, configuration) is frozen and
  never scanned again (``gc.freeze`` is O(1); start-up leaves next to no
  cyclic garbage, so no collection first);
- automatic full passes wait for ``SAFETY_THRESHOLD`` young-generation passes
  instead of CPython's 10, so they are rare while a turn streams;
- the app runs a full pass itself once it has been idle (no turn running, no
  key or mouse input) for ``IDLE_SECONDS``, if young passes happened since the
  last one; during a long turn also when it has been quiet (no input, no core
  event) for ``QUIET_SECONDS`` and at least ``BUSY_PASSES`` young passes piled
  up, e.g. while a tool runs or the model thinks.

Young passes (generations 0 and 1, about a millisecond) stay automatic, so
short-lived cyclic garbage is still collected as it appears. No Textual import.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

IDLE_SECONDS = 2.0
QUIET_SECONDS = 0.5
BUSY_PASSES = 100
SAFETY_THRESHOLD = 1000

_installed = False


def install() -> None:
    """Freeze the start-up heap and defer automatic full passes (idempotent)."""
    global _installed
    if _installed:
        return
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, SAFETY_THRESHOLD)
    _installed = True


def installed() -> bool:
    return _installed


class IdleCollector:
    """Runs full collections at idle or quiet moments (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_activity = clock()
        self.collections = 0

    def touch(self) -> None:
        """Input, or an event of the running turn: not quiet."""
        self.last_activity = self.clock()

    def maybe_collect(self, busy: bool) -> bool:
        """Collect if due; ``busy``: a turn is running. Returns whether it collected."""
        quiet = self.clock() - self.last_activity
        passes = gc.get_count()[2]  # young passes since the last full one
        if busy:
            due = quiet >= QUIET_SECONDS and passes >= BUSY_PASSES
        else:
            due = quiet >= IDLE_SECONDS and passes > 0
        if not due:
            return False
        gc.collect()
        self.collections += 1
        return True
