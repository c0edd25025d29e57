"""Reasoning-effort levels: the one vocabulary, per provider kind and protocol.

Each built-in kind maps the levels it accepts onto what its wire format sends
(the tables below); a provider says what it accepts through its ``efforts()``
method, and every way of choosing an effort (``--effort``, ``[agent] effort``,
a provider's ``effort``, ``/effort``) is checked with :func:`check_effort`
against the selected provider. Stdlib only, and below ``config/`` and
``provider/`` (both import it): the config schema
validates with it before any provider module (or httpx) is imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reasonix_core.errors import ConfigError

#: The server's default: nothing is sent.
AUTO = "auto"
#: Thinking off (DeepSeek, Anthropic); elsewhere nothing is sent.
DISABLED_EFFORTS = ("disabled", "none", "off")

#: DeepSeek (any kind, reasoning protocol ``deepseek``): ``reasoning_effort``.
DEEPSEEK_EFFORTS: Mapping[str, str] = {
    "low": "low",
    "minimal": "low",
    "medium": "high",
    "high": "high",
    "xhigh": "high",
    "max": "max",
    "ultra": "max",
}
#: ``openai`` kind, OpenAI protocol: chat ``reasoning_effort``.
OPENAI_CHAT_EFFORTS: Mapping[str, str] = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "max": "high",
}
#: ``responses`` kind, OpenAI protocol: ``reasoning.effort`` takes low / medium /
#: high ("minimal" and "none" only on some models, so they are not sent).
OPENAI_RESPONSES_EFFORTS: Mapping[str, str] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
    "ultra": "high",
}
#: ``anthropic`` kind, Anthropic flavour: the level whose thinking budget is sent.
ANTHROPIC_EFFORTS: Mapping[str, str] = {
    "minimal": "low",
    "low": "low",
    "medium": "high",
    "high": "high",
    "xhigh": "max",
    "max": "max",
    "ultra": "max",
}

# Each built-in kind's table under the OpenAI (or Anthropic) protocol.
_LEVELS: dict[str, Mapping[str, str]] = {
    "openai": OPENAI_CHAT_EFFORTS,
    "responses": OPENAI_RESPONSES_EFFORTS,
    "anthropic": ANTHROPIC_EFFORTS,
}
# The order levels are listed in (menus, error messages).
_ORDER = ("minimal", "low", "medium", "high", "xhigh", "max", "ultra")


def accepted_efforts(kind: str, protocol: str) -> tuple[str, ...] | None:
    """What a built-in kind accepts under a reasoning protocol, ``auto`` first;
    None for a kind that is not built in (it says nothing)."""
    if kind not in _LEVELS:
        return None
    if protocol == "none":
        return known_efforts()  # no reasoning settings are sent: every level is moot
    table = DEEPSEEK_EFFORTS if protocol == "deepseek" else _LEVELS[kind]
    return (AUTO, *DISABLED_EFFORTS, *(level for level in _ORDER if level in table))


def known_efforts() -> tuple[str, ...]:
    """Every level some built-in provider accepts (before one is selected)."""
    return (AUTO, *DISABLED_EFFORTS, *_ORDER)


class UnknownEffort(ConfigError, ValueError):
    """An effort level the selected provider does not accept. A ValueError too,
    so pydantic validators and the TUI's ``/effort`` report it as such."""


def check_effort(effort: str, accepted: Sequence[str] | None, provider: str) -> str:
    """``effort`` normalised (lower case) if ``provider`` accepts it; else an
    :class:`UnknownEffort` naming what it accepts. ``accepted`` None or empty
    (a kind that does not say) accepts anything."""
    norm = effort.strip().lower()
    if not accepted or norm in accepted:
        return norm
    raise UnknownEffort(
        f"effort {effort!r} is not accepted by provider {provider!r}; "
        f"it accepts: {', '.join(accepted)}"
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
