"""The permission presets and plan mode: their names, the Shift+Tab cycle and
the one-line summaries (the one owner of these facts).

A leaf module that imports nothing of Reasonix: the CLI's parser reads it
before the first frame, which must not load ``reasonix_core.permission`` (the
policy, the gate, pydantic). ``permission.policy`` re-exports it.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "CLAUDE_MODES",
    "MODE_CHOICES",
    "MODE_CYCLE",
    "PLAN_MODE",
    "PLAN_MODE_SUMMARY",
    "PRESETS",
    "PRESET_SUMMARY",
    "PresetName",
    "claude_word",
    "mode_arg",
]

#: A permission preset's name (``[permissions] preset``, ``--permission-mode``).
PresetName = Literal["ask", "auto", "yolo"]
PRESETS: tuple[PresetName, ...] = get_args(PresetName)
#: What each preset does, in one line (the TUI says it when Shift+Tab switches).
PRESET_SUMMARY: dict[str, str] = {
    "ask": "asks before edits and commands",
    "auto": "edits and commands run without asking; ask rules still ask",
    "yolo": "everything runs without asking, except deny rules",
}
#: Plan mode's name beside the presets (``--permission-mode plan``, the TUI's
#: Shift+Tab cycle): not a preset, it sits on top of one (``Policy.plan_mode``).
PLAN_MODE = "plan"
PLAN_MODE_SUMMARY = "read-only tools; the plan waits for your approval before any write"
#: What ``--permission-mode`` accepts where a session can start in plan mode.
MODE_CHOICES: tuple[str, ...] = (*PRESETS, PLAN_MODE)
#: The TUI's Shift+Tab cycle. yolo is never one keystroke away from ask; it
#: joins the cycle only when the session started in it.
MODE_CYCLE: tuple[str, ...] = ("ask", "auto", PLAN_MODE)

#: Claude Code's ``--permission-mode`` words (``claude-agent-sdk``'s
#: ``permission_mode``) and the Reasonix mode each one is. Claude Code's
#: ``dontAsk`` and its classifier ``auto`` have no counterpart here: ``auto``
#: keeps Reasonix's meaning, ``dontAsk`` is refused (docs/CLI.md).
CLAUDE_MODES: dict[str, str] = {
    "default": "ask",
    "acceptEdits": "auto",
    "bypassPermissions": "yolo",
    "plan": PLAN_MODE,
}


def mode_arg(text: str) -> str:
    """A ``--permission-mode`` value as the Reasonix mode it names (Claude Code's
    words mapped, Reasonix's own unchanged; argparse checks the result)."""
    return CLAUDE_MODES.get(text, text)


def claude_word(mode: str) -> str:
    """A Reasonix mode in Claude Code's words (``permissionMode`` of the init line)."""
    return next((word for word, ours in CLAUDE_MODES.items() if ours == mode), mode)
