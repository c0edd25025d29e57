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
from dataclasses import dataclass

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


#: The one name a menu shows for thinking off (:data:`DISABLED_EFFORTS` are its spellings).
OFF = "off"


@dataclass(frozen=True, slots=True)
class EffortLevel:
    """One level as a menu lists it: the name shown, and the other names a user may
    type for the same request (``/effort medium`` on DeepSeek sends ``high``)."""

    name: str
    aliases: tuple[str, ...] = ()


def effort_levels(kind: str, protocol: str) -> tuple[EffortLevel, ...]:
    """One entry per distinct request a built-in kind makes under ``protocol``:
    ``auto``, ``off`` where thinking can be switched off, then each level whose
    wire value differs, named by the level that sends it as itself (else the first
    in order). Empty for a kind that is not built in or a protocol that sends no
    reasoning settings: nothing to choose."""
    if kind not in _LEVELS or protocol == "none":
        return ()
    table = DEEPSEEK_EFFORTS if protocol == "deepseek" else _LEVELS[kind]
    grouped: dict[str, list[str]] = {}
    for level in _ORDER:
        if level in table:
            grouped.setdefault(table[level], []).append(level)
    out: list[EffortLevel] = []
    if _turns_thinking_off(kind, protocol):
        out.append(EffortLevel(AUTO))
        out.append(EffortLevel(OFF, tuple(n for n in DISABLED_EFFORTS if n != OFF)))
    else:  # "off" sends nothing here, as auto does
        out.append(EffortLevel(AUTO, DISABLED_EFFORTS))
    for wire, names in grouped.items():
        name = wire if wire in names else names[0]
        out.append(EffortLevel(name, tuple(n for n in names if n != name)))
    return tuple(out)


def effort_level(effort: str, levels: Sequence[EffortLevel]) -> str:
    """The name ``levels`` show for ``effort`` (itself when none lists it)."""
    norm = effort.strip().lower()
    for level in levels:
        if norm == level.name or norm in level.aliases:
            return level.name
    return norm


def _turns_thinking_off(kind: str, protocol: str) -> bool:
    # DeepSeek's protocol (any kind) and Anthropic's kind send thinking disabled;
    # the OpenAI kinds under OpenAI's protocol send nothing for it.
    return protocol == "deepseek" or kind == "anthropic"


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
    "OFF",
    "OPENAI_CHAT_EFFORTS",
    "OPENAI_RESPONSES_EFFORTS",
    "EffortLevel",
    "UnknownEffort",
    "accepted_efforts",
    "check_effort",
    "effort_level",
    "effort_levels",
    "known_efforts",
]
