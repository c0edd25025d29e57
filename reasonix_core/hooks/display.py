"""How a hook run is shown to the user: one line, the same in the TUI (a muted line)
and on a headless run's stderr."""

from __future__ import annotations

from reasonix_core import events as ev

__all__ = ["hook_line"]

_DETAIL = 200


def _one_line(text: str) -> str:
    # The message is a hook's own output: no control character moves the cursor.
    flat = " ".join(text.split())
    clean = "".join(ch if ch.isprintable() else "?" for ch in flat)
    return clean if len(clean) <= _DETAIL else clean[: _DETAIL - 1] + "…"


def hook_line(event: ev.HookRan) -> str:
    """``⚓ PreToolUse hook ./guard.sh (.claude/settings.json) blocked: reason``."""
    head = f"⚓ {event.hook_event} hook {_one_line(event.command)} ({_one_line(event.source)})"
    if event.outcome == "ok":
        return f"{head}: {_one_line(event.message)}" if event.message else head
    detail = f": {_one_line(event.message)}" if event.message else ""
    label = "warning" if event.outcome in ("error", "timeout") else event.outcome
    return f"{head} {label}{detail}"
