"""The session's hooks around its turns (docs/HOOKS.md): SessionStart and SessionEnd
around the session, UserPromptSubmit before a turn and Stop after it.

* UserPromptSubmit: exit 2 (or ``decision: block``, ``continue: false``) and the
  prompt is not sent: the turn ends as ``TurnFailed`` (kind ``hook_blocked``) saying
  why. Its stdout (exit 0) or ``additionalContext`` rides in the user turn, after
  the prompt, never in the frozen prefix.
* Stop: exit 2 or ``decision: block`` and the model goes on, with the reason as
  a host turn; ``stop_hook_active`` is true in the next Stop's input, and at most
  :data:`MAX_STOP_CONTINUATIONS` continuations follow one prompt, so a hook that
  always blocks cannot loop forever.

Stop runs at the end of every main-agent turn, also those Reasonix drives itself
(each goal round through :class:`HookedRunner`, an approved plan's execution
through :func:`hooked_plan`). UserPromptSubmit runs for what the user submitted
(a prompt, a ``/goal`` objective): never for a host-made turn (``TurnMeta.synthetic``:
a goal's "continue" round, a Stop continuation), nor for approving a plan, which
is an answer, not a prompt (Claude Code runs none when a plan is accepted).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal, get_args

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.runner import Runner
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.hooks.engine import Hooks

__all__ = [
    "MAX_STOP_CONTINUATIONS",
    "SESSION_END_REASONS",
    "HookedRunner",
    "SessionEndReason",
    "hooked_plan",
    "hooked_turn",
    "session_end",
    "session_start",
]

#: Turns a blocking Stop hook may add after one prompt.
MAX_STOP_CONTINUATIONS = 5
#: Why a session ended, as SessionEnd hooks are told (Claude Code's reasons; the one
#: owner of the list): ``clear`` (``/new``, ``/clear``), ``logout``, ``prompt_input_exit``
#: (the user quit the app), ``other`` (anything else: a resume, a headless run's end).
SessionEndReason = Literal["clear", "logout", "prompt_input_exit", "other"]
SESSION_END_REASONS: tuple[str, ...] = get_args(SessionEndReason)

#: How long SessionEnd hooks may hold a closing session (each is also bounded by
#: its own timeout).
SESSION_END_GRACE = 60.0


async def session_start(hooks: Hooks, source: str) -> None:
    """SessionStart (startup, resume, clear): its context waits for the first turn."""
    if hooks.has("SessionStart"):
        outcome = await hooks.fire("SessionStart", {"source": source}, subject=(source,))
        hooks.add_context(outcome.context)


def end_reason(reason: str) -> SessionEndReason:
    """``reason`` if it is one of :data:`SESSION_END_REASONS`; ValueError otherwise."""
    if reason not in SESSION_END_REASONS:
        raise ValueError(
            f"unknown SessionEnd reason {reason!r}; one of {', '.join(SESSION_END_REASONS)}"
        )
    return reason  # type: ignore[return-value]


async def session_end(hooks: Hooks) -> None:
    """SessionEnd with the reason last given (``hooks.end_reason``), also when the
    session closes because it was cancelled."""
    if not hooks.has("SessionEnd"):
        return
    reason = hooks.end_reason
    with anyio.CancelScope(shield=True), anyio.move_on_after(SESSION_END_GRACE):
        await hooks.fire("SessionEnd", {"reason": reason}, subject=(reason,))


async def hooked_turn(
    hooks: Hooks, runner: Runner, agent: Agent, text: str, meta: TurnMeta | None
) -> AsyncGenerator[ev.Event, None]:
    """One turn with its UserPromptSubmit (unless host-made) and Stop hooks."""
    for event in _reports(hooks, agent):  # SessionStart's, before the first turn
        yield event
    if hooks.has("UserPromptSubmit") and not (meta is not None and meta.synthetic):
        submitted = await hooks.fire("UserPromptSubmit", {"prompt": text})
        for event in _reports(hooks, agent):
            yield event
        if submitted.blocked or submitted.stop:
            why = submitted.reason or submitted.stop_reason or "no reason given"
            yield agent.make_event(
                ev.TurnFailed,
                error=f"the prompt was blocked by a UserPromptSubmit hook: {why}",
                kind="hook_blocked",
            )
            return
        hooks.add_context(submitted.context)
    async with aclosing(_with_stop(hooks, runner, agent, runner.run(text, meta))) as events:
        async for event in events:
            yield event


async def hooked_plan(
    hooks: Hooks, runner: Runner, agent: Agent, execution: AsyncGenerator[ev.Event, None]
) -> AsyncGenerator[ev.Event, None]:
    """An approved plan's execution (``execution``) with its Stop hooks."""
    for event in _reports(hooks, agent):
        yield event
    async with aclosing(_with_stop(hooks, runner, agent, execution)) as events:
        async for event in events:
            yield event


async def _with_stop(
    hooks: Hooks, runner: Runner, agent: Agent, turn: AsyncGenerator[ev.Event, None]
) -> AsyncGenerator[ev.Event, None]:
    """``turn``, then the Stop hooks; a block runs a host-made continuation turn."""
    continuations = 0
    while True:
        finished: ev.TurnFinished | None = None
        async with aclosing(turn) as events:
            async for event in events:
                if isinstance(event, ev.TurnFinished):
                    finished = event
                yield event
        for event in _reports(hooks, agent):
            yield event
        if finished is None or not hooks.has("Stop") or finished.stop_reason != "stop":
            return
        stopped = await hooks.fire(
            "Stop", {"stop_hook_active": continuations > 0, "last_assistant_message": finished.text}
        )
        for event in _reports(hooks, agent):
            yield event
        if stopped.stop or not stopped.blocked:
            return
        if continuations >= MAX_STOP_CONTINUATIONS:
            yield agent.make_event(
                ev.Notice,
                level="warning",
                text=(
                    f"a Stop hook blocked {continuations + 1} times in a row; stopping "
                    "(check stop_hook_active in the hook)"
                ),
            )
            return
        continuations += 1
        prompt = f"A Stop hook asks you to continue: {stopped.reason}"
        turn = runner.run(prompt, TurnMeta(synthetic=True))


@dataclass(frozen=True, slots=True)
class HookedRunner:
    """``runner`` with its hooks around each turn, for what drives turns in a row
    (the goal driver): a Runner like the one it wraps."""

    hooks: Hooks
    runner: Runner
    agent: Agent

    @property
    def session_id(self) -> str:
        return self.runner.session_id

    @property
    def model(self) -> str:
        return self.runner.model

    @property
    def effort(self) -> str:
        return self.runner.effort

    def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncGenerator[ev.Event, None]:
        return hooked_turn(self.hooks, self.runner, self.agent, prompt, meta)


def _reports(hooks: Hooks, agent: Agent) -> list[ev.Event]:
    return [agent.make_event(ev.HookRan, **r.fields()) for r in hooks.take_reports()]
