"""Honest prompts and resumed cards (issue 30 items 7, 8), at 80×24 and 140×40: keep
planning drawn as the user's choice (no warning colour, the plan's title as text), an
approved plan said in the user's words, ``/compact`` with nothing to compact answered
in one line (no confirmation), a resumed subagent card with the child's usage."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from snap_support import scripted, send
from textual.pilot import Pilot

from reasonix_core.agent.child_usage import SUBAGENT_USAGE
from reasonix_core.coordinator.plan_mode import APPROVED, KEEP_PLANNING
from reasonix_core.messages import Message, ToolCall
from reasonix_core.tool.base import FOR_MODEL, SUMMARY
from reasonix_testkit.tui import ScriptedServices, text_steps, tool_steps

SIZES = {"80x24": (80, 24), "140x40": (140, 40)}
PLAN = {"plan": "# Plan: rename **greet**\n\n1. Rename `greet` in app.py\n2. Run `pytest`"}
NOTHING = "Nothing to compact yet: the conversation is short enough to keep whole."


def _plans() -> ScriptedServices:
    kept = tool_steps(
        "p1", "exit_plan_mode", PLAN, f"{KEEP_PLANNING} Plan mode stays on.", outcome="denied"
    )
    approved = tool_steps("p2", "exit_plan_mode", PLAN, f"{APPROVED} Execute the plan now.")
    return scripted(
        turns=[[*kept, *text_steps("I will look further.")], [*approved, *text_steps("Renamed.")]],
        nothing_to_compact=NOTHING,
    )


async def _plans_run(pilot: Pilot) -> None:
    await send(pilot, "Plan the rename")
    await pilot.app.workers.wait_for_complete()
    await send(pilot, "Go on")
    await pilot.app.workers.wait_for_complete()
    await send(pilot, "/compact")
    await pilot.app.workers.wait_for_complete()


def _resumed() -> ScriptedServices:
    call = ToolCall(id="c1", name="read_only_task", arguments='{"prompt": "look", "profile": "explore"}')
    usage = {"": {"prompt_tokens": 12000, "completion_tokens": 400, "cache_hit_tokens": 9000,
                  "cost": 0.0031, "currency": "USD"}}  # fmt: skip
    messages = [
        Message(role="user", content="Where is greet defined?"),
        Message(role="assistant", tool_calls=(call,)),
        Message(
            role="tool",
            tool_call_id="c1",
            content="In app.py.\n\n[subagent session: s1 - give it as continue_from]",
            # as the tool batch saves it now: people read the answer, the model the session line
            meta={"outcome": "ok", SUBAGENT_USAGE: usage, SUMMARY: "In app.py.", FOR_MODEL: True},
        ),
        Message(role="assistant", content="It is in `app.py`."),
    ]
    return scripted(saved={"old-1": messages}, continue_session="old-1")


async def _resumed_run(pilot: Pilot) -> None:
    for _ in range(10):
        await pilot.pause(0.05)


CASES: dict[str, tuple[Callable[[], ScriptedServices], Callable[[Pilot], Awaitable[None]]]] = {
    "plan_answers_and_compact": (_plans, _plans_run),
    "resumed_subagent_usage": (_resumed, _resumed_run),
}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("case", list(CASES))
def test_honest(snap, case: str, size: str) -> None:
    services, run = CASES[case]
    assert snap(services(), run, size=SIZES[size])
