"""Command hooks and Claude Code's ``settings.json`` (docs/HOOKS.md).

:mod:`~reasonix_core.hooks.settings` reads the files, :mod:`~reasonix_core.hooks.names`
maps tool names and keys to Claude Code's, :mod:`~reasonix_core.hooks.runner` runs
one hook, :mod:`~reasonix_core.hooks.outcome` reads its answer and
:mod:`~reasonix_core.hooks.engine` is the session's set of hooks.
"""

from __future__ import annotations

from reasonix_core.hooks.engine import HookReport, Hooks
from reasonix_core.hooks.outcome import HookOutcome
from reasonix_core.hooks.settings import EVENTS, LoadedSettings, load_settings
from reasonix_core.hooks.spec import HookSpec

__all__ = [
    "EVENTS",
    "HookOutcome",
    "HookReport",
    "HookSpec",
    "Hooks",
    "LoadedSettings",
    "load_settings",
]
