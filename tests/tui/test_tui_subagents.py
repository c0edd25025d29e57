"""Subagent cards: each child under the tool call that spawned it, live, with its own
usage; a fleet's plan as a list of item states; Esc cancels every child.

The runner is scripted with the events the core emits: the spawner's
SubagentStarted / SubagentFinished / FleetItemChanged, and the child's own
events tagged with its agent path."""

from __future__ import annotations

import asyncio
import dataclasses

from textual.widgets import Static
from tui_helpers import send, session, settle, until

from reasonix_core.events import (
    Event,
    FleetItemChanged,
    Retrying,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from reasonix_core.usage import Usage
from reasonix_testkit.tui import Hold, WaitFor
from reasonix_tui.widgets.assistant_block import AssistantBlock
from reasonix_tui.widgets.subagent_card import SubagentCard
from reasonix_tui.widgets.tool_block import ToolBlock

RESEARCH = ("f1/research",)
BACKEND = ("f1/backend",)


def item(item_id: str, state: str, *deps: str, reason: str = "") -> FleetItemChanged:
    return FleetItemChanged(
        tool_call_id="f1", item_id=item_id, state=state, depends_on=deps, reason=reason
    )  # type: ignore[arg-type]


def child(path: tuple[str, ...], event: Event) -> Event:
    return dataclasses.replace(event, agent_path=path)


def usage(prompt: int, completion: int, hit: int, cost: float) -> UsageReported:
    u = Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_hit_tokens=hit,
        cache_miss_tokens=prompt - hit,
    )
    return UsageReported(usage=u, model="deepseek-chat", source="subagent", cost=cost)


def plan() -> list[Event]:
    return [
        ToolCallStarted(
            call_id="f1",
            name="fleet",
            arguments='{"items": [{"id": "research"}, {"id": "backend"}, {"id": "review"}]}',
        ),
        item("research", "waiting"),
        item("backend", "waiting", "research"),
        item("review", "waiting", "backend"),
        item("research", "running"),
        SubagentStarted(
            name="explore", child_path=RESEARCH, tool_call_id="f1", fleet_item="research"
        ),
        child(RESEARCH, StepStarted(step=1, model="deepseek-chat")),
        child(RESEARCH, usage(1000, 200, 800, 0.001)),
        child(RESEARCH, StepStarted(step=2, model="deepseek-chat")),
        child(
            RESEARCH,
            ToolCallStarted(call_id="k1", name="read_file", arguments='{"path": "src/app.py"}'),
        ),
        child(RESEARCH, TextDelta(text="the child's own words")),
    ]


def rest() -> list[Event]:
    return [
        child(RESEARCH, ToolCallFinished(call_id="k1", name="read_file", result="...")),
        SubagentFinished(name="explore", child_path=RESEARCH, tool_call_id="f1", status="done"),
        item("research", "done"),
        item("backend", "running", "research"),
        SubagentStarted(name="task", child_path=BACKEND, tool_call_id="f1", fleet_item="backend"),
        child(BACKEND, usage(500, 100, 0, 0.002)),
        SubagentFinished(
            name="task", ok=False, child_path=BACKEND, tool_call_id="f1", status="failed"
        ),
        item("backend", "failed", "research"),
        item("review", "skipped", "backend", reason="skipped: depends on 'backend', which failed"),
        ToolCallFinished(
            call_id="f1", name="fleet", result="fleet: 3 items, 1 done, 1 failed, 1 skipped"
        ),
    ]


def cards(pilot) -> dict[str, SubagentCard]:  # type: ignore[no-untyped-def]
    return {c.label: c for c in session(pilot).query(SubagentCard)}


def header(card: SubagentCard) -> str:
    return str(card.query_one(".header", Static).render())


async def test_a_fleet_shows_its_plan_and_each_child_live(make_app) -> None:
    gate = asyncio.Event()
    app, _ = make_app([[*plan(), WaitFor(gate), *rest()]])
    async with app.run_test(size=(110, 36)) as pilot:
        await send(pilot, "split the work")
        await until(pilot, lambda: cards(pilot).get("research", None) is not None)
        await until(pilot, lambda: cards(pilot)["research"].tool != "")
        found = cards(pilot)
        assert list(found) == ["research", "backend", "review"]  # the plan, in order
        research = found["research"]
        # Under the fleet's tool card, live: step, tool, own tokens / cache / cost.
        fleet_card = session(pilot).query_one(ToolBlock)
        assert research.parent is fleet_card
        assert "fleet  3 items  running…" in str(fleet_card.query_one(".header").render())
        assert "◐ research · explore  step 2 · read_file src/app.py" in header(research)
        assert "1.2k tok · cache 80% · $0.0010" in header(research)
        assert "○ backend (after research)  waiting" in header(found["backend"])
        assert not research.collapsed  # its calls show while it runs
        # The child's text is not the parent's answer.
        assert not session(pilot).query(AssistantBlock)
        status = session(pilot).status.state
        assert status.context_tokens == 0 and status.cost == 0.001
        gate.set()
        await settle(pilot)
        found = cards(pilot)
        assert [c.state for c in found.values()] == ["done", "failed", "skipped"]
        assert "✓ research · explore  done" in header(found["research"])
        assert "✗ backend · task (after research)  failed  600 tok · cache 0%" in header(
            found["backend"]
        )
        assert "skipped: depends on 'backend', which failed" in header(found["review"])
        research = found["research"]
        assert research.collapsed  # folded once it ended
        assert session(pilot).status.state.cost == 0.001 + 0.002
        await pilot.click(research)
        assert not research.collapsed
        assert "read_file src/app.py  ✓" in str(research.query_one(".calls", Static).render())
        assert session(pilot).query_one(ToolBlock).expanded is False  # the click stayed inside


async def test_a_task_child_card_and_its_own_child(make_app) -> None:
    me, grandchild = ("t1",), ("t1", "t9")
    app, _ = make_app(
        [
            [
                ToolCallStarted(call_id="t1", name="task", arguments='{"prompt": "fix it"}'),
                SubagentStarted(name="task", child_path=me, tool_call_id="t1"),
                child(me, ToolCallStarted(call_id="t9", name="read_only_task", arguments="{}")),
                SubagentStarted(
                    name="reviewer",
                    child_path=grandchild,
                    tool_call_id="t9",
                    read_only=True,
                    agent_path=me,
                ),
                child(grandchild, StepStarted(step=1, model="m")),
                child(grandchild, Retrying(attempt=1, delay=0.5, reason="HTTP 503")),
                Hold(),
            ]
        ]
    )
    async with app.run_test(size=(110, 36)) as pilot:
        await send(pilot, "go")
        await until(pilot, lambda: "reviewer" in cards(pilot))
        await until(pilot, lambda: cards(pilot)["reviewer"].step == 1)
        found = cards(pilot)
        assert found["task"].parent is session(pilot).query_one(ToolBlock)
        assert found["reviewer"].parent in found["task"].query(".body")  # nested in its parent
        await until(pilot, lambda: "retrying" in header(cards(pilot)["reviewer"]))
        assert "step 1 · retrying: HTTP 503" in header(found["reviewer"])
        await pilot.press("escape")
        await settle(pilot)
        # Esc cancels the parent and every child.
        assert [c.state for c in cards(pilot).values()] == ["cancelled", "cancelled"]


async def test_escape_cancels_running_and_waiting_fleet_items(make_app) -> None:
    slot_wait = item("review", "waiting", "backend", reason="waiting for a scheduling slot")
    app, _ = make_app([[*plan(), slot_wait, Hold()], [TextDelta(text="still usable")]])
    async with app.run_test(size=(110, 36)) as pilot:
        await send(pilot, "split the work")
        await until(pilot, lambda: cards(pilot).get("research") is not None)
        await until(pilot, lambda: cards(pilot)["research"].tool != "")
        await until(pilot, lambda: cards(pilot)["review"].reason != "")
        assert "○ review (after backend)  waiting for a scheduling slot" in header(
            cards(pilot)["review"]
        )
        await pilot.press("escape")
        await settle(pilot)
        assert {c.label: c.state for c in cards(pilot).values()} == {
            "research": "cancelled",
            "backend": "cancelled",
            "review": "cancelled",
        }
        assert "⊘ research" in header(cards(pilot)["research"])
        # The slot wait was the reason to wait, not to be cancelled.
        assert "⊘ review (after backend)  cancelled" in header(cards(pilot)["review"])
        assert "slot" not in header(cards(pilot)["review"])
        await send(pilot, "again")
        await settle(pilot)
        assert [b.text for b in session(pilot).query(AssistantBlock)] == ["still usable"]
