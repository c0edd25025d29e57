"""Resumed subagent cards keep their header (issue 30, item 7): a live run with a real
child through the loopback fixture, then ``-c``; both show the same card header, the
child's usage included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widgets import Static

from reasonix_testkit import ContentScript, Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.replay import ChildEntry, saved_children
from reasonix_tui.widgets.subagent_card import SubagentCard
from reasonix_tui.widgets.tool_block import ToolBlock
from tests.tui.tui_helpers import send, session, until

pytestmark = pytest.mark.usefixtures("configured")


def headers(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        str(c.query_one(".header", Static).render()) for c in session(pilot).query(SubagentCard)
    ]


def card_lines(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    card = session(pilot).query_one(SubagentCard)
    return [strip.text for strip in card.render_lines(Region(0, 0, *card.size))]


def parent_with_a_child() -> ContentScript:
    """The parent runs one read_only_task whose child answers, then answers itself."""
    script = ContentScript()
    script.when(
        "PARENT",
        Reply(tool_calls=[ToolCallSpec("read_only_task", json.dumps({"prompt": "CHILD look"}))]),
        Reply(content="parent done"),
    )
    script.when("CHILD", Reply(content="child answer"))
    return script


def without_usage(header: str) -> str:
    return header.split("  ")[0] + "  " + header.split("  ")[1]


async def test_a_resumed_subagent_card_keeps_its_header(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.responder = parent_with_a_child()
    live_app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with live_app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "PARENT go")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 3)
        await until(pilot, lambda: bool(headers(pilot)) and "done" in headers(pilot)[0])
        live = headers(pilot)
    resumed_app = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed_app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: bool(session(pilot).query(ToolBlock)))
        await until(pilot, lambda: bool(headers(pilot)))
        resumed = headers(pilot)
        card = session(pilot).query_one(SubagentCard)
        assert card.parent is session(pilot).query_one(ToolBlock)
    # The child's usage too (issue 30 item 7): saved beside the call's result, which
    # the model never sees (no request carries it).
    assert live == resumed
    assert all(b"subagent_usage" not in r.body for r in configured.requests)
    saved = (home / "sessions").rglob("*.jsonl")
    assert any('"subagent_usage"' in p.read_text() for p in saved)
    assert without_usage(resumed[0]) == "✓ read_only_task  done"
    assert " tok · cache " in resumed[0]


def test_fleet_items_and_task_ends_come_back_from_the_saved_result() -> None:
    args = json.dumps(
        {
            "items": [
                {"id": "research", "prompt": "a", "profile": "explore", "read_only": True},
                {"id": "backend", "prompt": "b", "depends_on": ["research"]},
                {"id": "review", "prompt": "c", "depends_on": ["backend"]},
            ]
        }
    )
    result = (
        "fleet: 3 items, 1 done, 1 failed, 1 skipped\n\n"
        '<item id="research" state="done" status="done">\nfound it\n\n'
        "[subagent session: s1 - give it as continue_from]\n</item>\n\n"
        '<item id="backend" state="failed" status="blocked">\n[subagent status: blocked]\n\n'
        "[subagent session: s2 - give it]\n</item>\n\n"
        '<item id="review" state="skipped">\n'
        "skipped: depends on 'backend', which failed\n</item>"
    )
    assert saved_children("fleet", args, result, "error", True) == (
        ChildEntry(label="research", profile="explore", state="done", status="done"),
        ChildEntry(
            label="backend",
            profile="task",
            depends_on=("research",),
            state="failed",
            status="blocked",
        ),
        ChildEntry(
            label="review",
            depends_on=("backend",),
            state="skipped",
            reason="skipped: depends on 'backend', which failed",
        ),
    )
    writer = "[subagent status: partial]\nSummary: x\n\n[subagent session: s3 - give it]"
    assert saved_children("task", '{"prompt": "p", "profile": "fixer"}', writer, "ok", False) == (
        ChildEntry(label="fixer", status="partial"),
    )
    failed = "[subagent failed: HTTP 500]\n\n[subagent session: s4 - give it]"
    assert saved_children("task", '{"prompt": "p"}', failed, "error", True) == (
        ChildEntry(label="task", state="failed", status="failed"),
    )
    # Refused before a child ran, or hostile arguments: no card.
    assert saved_children("task", '{"prompt": ""}', "task: bad arguments", "error", True) == ()
    assert saved_children("fleet", "[1, 2]", result, "error", True) == ()
    assert saved_children("task", "not json", writer, "ok", False) == ()


def test_saved_spend_goes_to_its_card_and_hostile_values_are_no_figure() -> None:
    from reasonix_tui.replay import ChildSpend, with_spend

    fleet = (ChildEntry(label="research"), ChildEntry(label="backend"), ChildEntry(label="x"))
    saved = {
        "research": {"prompt_tokens": 1200, "completion_tokens": 30, "cache_hit_tokens": 1000,
                     "cost": 0.0004, "currency": "CNY"},
        "backend": {"prompt_tokens": "9", "completion_tokens": -4, "cache_hit_tokens": True,
                    "cost": float("nan"), "currency": "X" * 400},
        "x": "not a dict",
    }  # fmt: skip
    research, backend, x = with_spend(fleet, saved, fleet=True)
    assert research.usage == ChildSpend(
        prompt_tokens=1200, completion_tokens=30, cache_hit_tokens=1000, cost=0.0004,
        currency="CNY",
    )  # fmt: skip
    assert backend.usage == ChildSpend()
    assert x.usage is None
    (task,) = with_spend((ChildEntry(label="explore"),), {"": saved["research"]}, fleet=False)
    assert task.usage is not None and task.usage.prompt_tokens == 1200
    assert with_spend(fleet, [1, 2], fleet=True) == fleet


async def test_a_resumed_session_costs_and_looks_like_the_live_one(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 7: the child's requests are in its own session file, not the
    parent's records; the resumed status bar still counts them, once."""
    configured.responder = parent_with_a_child()
    live_app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with live_app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "PARENT go")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 3)
        await until(pilot, lambda: bool(headers(pilot)) and "done" in headers(pilot)[0])
        await pilot.pause()
        live = session(pilot).status.state.cost
        live_lines = card_lines(pilot)
    assert live > 0
    resumed_app = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed_app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: session(pilot).status.state.cost > 0)
        assert round(session(pilot).status.state.cost, 10) == round(live, 10)
        await until(pilot, lambda: bool(headers(pilot)))
        await pilot.pause()
        # The same rows too: the finished card folded, no empty body line under it.
        assert card_lines(pilot) == live_lines
        assert len(live_lines) == 1
