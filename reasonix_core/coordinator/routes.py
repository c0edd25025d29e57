"""Which agent a turn goes to: a deterministic reading of the user's words.

No classifier model and no guessing from length, file counts or topic: the
planner runs only when the user says so with one of the directives below, or
when trusted turn metadata (a Goal start) asks for it. Quoted material - code
fences, block quotes, inline code and text in quotation marks - is removed
before matching, so an example of a directive does not change the route. A
directive may stand anywhere in the unquoted text ("fix the parser; plan
first"). When several match, the strongest boundary wins: plan only, then wait
for approval, then plan first. A directive right after a negation ("don't
plan first", "no need to plan first", "不要先规划") is not one: the user is
declining the planner, so that match does not count (another, un-negated
directive in the same text still does).

The recorded reason names the directive's kind, never the user's text.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from reasonix_core.agent.turn_meta import TurnMeta as TurnMeta


class Route(enum.StrEnum):
    EXECUTOR = "executor"
    # Plan, then hand the plan straight to the executor.
    PLAN_THEN_EXECUTE = "plan_then_execute"
    # Plan, then the host asks the user before anything executes.
    PLAN_FOR_APPROVAL = "plan_for_approval"
    # Plan, save it, end the turn.
    PLAN_ONLY = "plan_only"
    # A Goal start (trusted metadata): plan, then execute.
    GOAL = "goal"

    @property
    def plans(self) -> bool:
        return self is not Route.EXECUTOR


@dataclass(frozen=True, slots=True)
class RouteDecision:
    route: Route
    # Why, without the user's text: "directive:plan_only", "metadata:goal_start"...
    reason: str


# The grammar (docs/MODES.md lists it): whole phrases, case-insensitive; the
# English ones on word boundaries. Strongest boundary first.
_DIRECTIVES: tuple[tuple[Route, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        Route.PLAN_ONLY,
        ("plan only", "only plan", "just plan", "only a plan", "just a plan"),
        ("只规划", "仅规划", "只做规划", "只做计划", "只出计划", "只要计划", "只制定计划"),
    ),
    (
        Route.PLAN_FOR_APPROVAL,
        ("wait for my approval", "wait for approval", "wait for my go-ahead"),
        ("等待我的批准", "等我批准", "等待批准", "等我确认", "等待我的确认", "等待确认"),
    ),
    (
        Route.PLAN_THEN_EXECUTE,
        ("plan first", "plan then execute", "plan, then execute", "plan before executing"),
        ("先规划", "先做规划", "先计划", "先做计划", "先出计划", "规划后执行", "规划再执行"),
    ),
)

_QUOTED = re.compile(
    r"(?ms)"
    r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$"  # fenced code (to its closing fence)
    r"|^[ \t]*(```|~~~).*\Z"  # an unclosed fence runs to the end
    r"|^[ \t]*>[^\n]*$"  # a block-quote line
    r"|`[^`\n]*`"  # inline code
    r"|\"[^\"\n]*\""  # "straight double quotes"
    r"|(?<!\w)'[^'\n]*'(?!\w)"  # 'single quotes' (not an apostrophe)
    r"|“[^”]*”|‘[^’]*’|「[^」]*」|『[^』]*』"  # typographic and CJK quotes
)


# A negation that declines the directive right after it (docs/MODES.md lists it).
# English: a negator, then at most a "need to" / "bother to" style filler, then
# the directive; Chinese: a negator directly before it. Anchored at the end of
# the text before the match, so "don't touch the tests; plan first" still plans.
_NEGATED = re.compile(
    r"(?:\b(?:don['’]?t|do\s+not|does\s+not|doesn['’]?t|no\s+need\s+to|not|never|"
    r"needn['’]?t|need\s+not|shouldn['’]?t|should\s+not|can['’]?t|cannot|without)"
    r"(?:\s+(?:you\s+)?(?:need|have|want|bother|try|ever)(?:\s+to)?)?(?:\s+(?:a|any))?\s+"
    # 要不 is "how about", not a negation.
    r"|(?:不要|不用|不必|无需|无须|毋须|不需要|不需|没必要|用不着|别|(?<!要)不)\s*)\Z",
    re.IGNORECASE,
)
# How far back a negation can stand (it must end right before the directive).
_NEGATION_REACH = 40


def _pattern(english: tuple[str, ...], chinese: tuple[str, ...]) -> re.Pattern[str]:
    words = [r"\b" + re.escape(p).replace(r"\ ", r"\s+") + r"\b" for p in english]
    return re.compile("|".join([*words, *map(re.escape, chinese)]), re.IGNORECASE)


_MATCHERS = tuple((route, _pattern(en, zh)) for route, en, zh in _DIRECTIVES)


def unquoted(text: str) -> str:
    """``text`` without its quoted material (each span becomes a space)."""
    return _QUOTED.sub(" ", text)


def _negated(text: str, start: int) -> bool:
    """Does a negation end right where the directive at ``start`` begins?"""
    # Searched in place (not on a slice), so \b and look-behinds see the real text
    # before the window rather than a start of string.
    return _NEGATED.search(text, max(0, start - _NEGATION_REACH), start) is not None


def decide_route(text: str, meta: TurnMeta | None = None) -> RouteDecision:
    """The route of one user turn (executor unless explicitly asked otherwise)."""
    meta = meta or TurnMeta()
    if meta.synthetic:
        return RouteDecision(Route.EXECUTOR, "metadata:synthetic_turn")
    plain = unquoted(text)
    for route, matcher in _MATCHERS:
        if any(not _negated(plain, m.start()) for m in matcher.finditer(plain)):
            return RouteDecision(route, f"directive:{route.value}")
    if meta.goal_start:
        return RouteDecision(Route.GOAL, "metadata:goal_start")
    return RouteDecision(Route.EXECUTOR, "default:no_directive")
