"""Reasoning-effort levels, as the providers name them: the vocabulary is owned by
:mod:`reasonix_core.efforts` (below ``config/``, which validates with it) and
re-exported here for the provider modules and the surfaces."""

from __future__ import annotations

from reasonix_core.efforts import (
    ANTHROPIC_EFFORTS,
    AUTO,
    DEEPSEEK_EFFORTS,
    DISABLED_EFFORTS,
    OPENAI_CHAT_EFFORTS,
    OPENAI_RESPONSES_EFFORTS,
    UnknownEffort,
    accepted_efforts,
    check_effort,
    known_efforts,
)

__all__ = [
    "ANTHROPIC_EFFORTS",
    "AUTO",
    "DEEPSEEK_EFFORTS",
    "DISABLED_EFFORTS",
    "OPENAI_CHAT_EFFORTS",
    "OPENAI_RESPONSES_EFFORTS",
    "UnknownEffort",
    "accepted_efforts",
    "check_effort",
    "known_efforts",
]
