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
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.runner import Runner
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.hooks.engine import Hooks

__all__ = ["MAX_STOP_CONTINUATIONS", "hooked_turn", "session_end", "session_start"]

#: Turns a blocking Stop hook may add after one prompt.
MAX_STOP_CONTINUATIONS = 5
#: How long SessionEnd hooks may hold a closing session (each is also bounded by
#: its own timeout).
SESSION_END_GRACE = 60.0


async def session_start(hooks: Hooks, source: str) -> None:
    """SessionStart (startup, resume, clear): its context waits for the first turn."""
    if hooks.has("SessionStart"):
        outcome = await hooks.fire("SessionStart", {"source": source}, subject=(source,))
        hooks.add_context(outcome.context)


async def session_end(hooks: Hooks, reason: str) -> None:
    """SessionEnd, also when the session closes because it was cancelled."""
    if not hooks.has("SessionEnd"):
        return
    with anyio.CancelScope(shield=True), anyio.move_on_after(SESSION_END_GRACE):
        await hooks.fire("SessionEnd", {"reason": reason}, subject=(reason,))


async def hooked_turn(
    hooks: Hooks, runner: Runner, agent: Agent, text: str, meta: TurnMeta | None
) -> AsyncGenerator[ev.Event, None]:
    """One user turn with its UserPromptSubmit and Stop hooks."""
    for event in _reports(hooks, agent):  # SessionStart's, before the first turn
        yield event
    if hooks.has("UserPromptSubmit"):
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
    prompt, turn_meta = text, meta
    continuations = 0
    while True:
        finished: ev.TurnFinished | None = None
        async with aclosing(runner.run(prompt, turn_meta)) as events:
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
        turn_meta = TurnMeta(synthetic=True)


def _reports(hooks: Hooks, agent: Agent) -> list[ev.Event]:
    return [agent.make_event(ev.HookRan, **r.fields()) for r in hooks.take_reports()]
