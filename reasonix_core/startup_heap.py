"""Garbage collection while ``reasonix run`` starts.

Start-up creates some 45,000 tracked objects (modules, classes, the config
schema, the tool list) that live until the process exits. The hundred or so young
collections that run meanwhile free under 2% of them and cost about 10 ms of a
one-request run (``bench/bench_startup.py``). So the CLI pauses collection before
it imports the engine and, once the runtime is built, freezes what exists
(``gc.freeze``: never scanned again, as the TUI's ``HeapPolicy`` does with its own
start-up heap) and lets collection resume for the run itself. Stdlib only.
"""

from __future__ import annotations

import gc

_paused = False


def pause_collection() -> None:
    """Stop automatic collection until :func:`resume_collection` (if it is on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collection() -> None:
    """Freeze the start-up heap and collect again; a no-op unless paused here."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
