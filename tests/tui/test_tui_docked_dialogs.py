"""Dialogs keep the conversation in view (issue 30, item 1): every dialog the user
decides in (approvals, questions, plans, pickers, /rewind, /cache, /login, the
confirmations) sits at the bottom over a transparent screen, the transcript's last
lines above it, and its choices and key hints on screen at 80×24; a long diff
scrolls inside the dialog."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import Static
from tui_helpers import send, session, type_text, until

from reasonix_core.events import ToolCallStarted
from reasonix_core.permission.approver import ApprovalRequest, Question
from reasonix_testkit.tui import Approval, Hold, PlanApproval, text_steps
from reasonix_tui.screens.approval import ApprovalScreen
from reasonix_tui.screens.overlay import DockedOverlay
from reasonix_tui.services import RewindPreview, RewindTurn

LEAD_IN = "Let me write the report."
LONG = "".join(f"line {n}\n" for n in range(80))
LONG_DIFF = "--- /dev/null\n+++ b/report.md\n@@ -0,0 +1,80 @@\n" + "".join(
    f"+{line}\n" for line in LONG.splitlines()
)


def long_write_turn() -> list:
    request = ApprovalRequest(
        tool="write_file",
        arguments={"path": "report.md", "content": LONG},
        call_id="c1",
        read_only=False,
        scope="Edit(report.md)",
        summary="Write report.md",
        preview=LONG_DIFF,
    )
    return [
        *text_steps(LEAD_IN),
        ToolCallStarted(call_id="c1", name="write_file", arguments='{"path": "report.md"}'),
        Approval(request=request),
        Hold(),
    ]


def on_screen(pilot, region: Region) -> bool:
    return pilot.app.screen.region.contains_region(region) and region.height > 0


def visible_text_above(pilot, text: str) -> bool:
    """``text`` is drawn by a widget of the session screen, inside the transcript's
    viewport and above the dialog."""
    screen = session(pilot)
    dialog_top = pilot.app.screen.query_one("#dialog").region.y
    viewport = screen.transcript.region
    for widget in screen.transcript.query("*"):
        shown_text = str(widget.render()) if isinstance(widget, Static) else ""
        if text in shown_text or text in str(getattr(widget, "text", "")):
            shown = widget.region.intersection(viewport)
            return shown.height > 0 and shown.bottom <= dialog_top
    return False


def assert_docked(pilot, *pinned: str) -> None:
    dialog = pilot.app.screen
    assert isinstance(dialog, Screen)
    # The session screen shows through: nothing paints over the transcript.
    assert dialog.styles.background.a == 0
    box = dialog.query_one("#dialog").region
    assert box.bottom == pilot.app.screen.region.bottom  # docked at the bottom
    assert box.y > 0
    for selector in pinned:
        assert on_screen(pilot, dialog.query_one(selector).region), selector


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_a_long_write_approval_keeps_the_lead_in_and_the_choices_in_view(
    make_app, size
) -> None:
    app, _ = make_app([long_write_turn()])
    async with app.run_test(size=size) as pilot:
        await send(pilot, "Write the report")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await until(pilot, lambda: visible_text_above(pilot, LEAD_IN))
        assert_docked(pilot, "#choices", ".hint")
        choices = pilot.app.screen.query_one("#choices")
        assert choices.region.height == 3  # "1 Allow once / 2 / 3 Deny", whole
        body = pilot.app.screen.query_one("#body")
        assert body.max_scroll_y > 0  # the 80-line diff scrolls inside the dialog
        await pilot.press("3")
        await until(pilot, lambda: not isinstance(pilot.app.screen, DockedOverlay))
        assert not session(pilot).query_one("#dialog-room").display


async def test_plan_approval_is_docked(make_app) -> None:
    plan = "# Plan\n\n" + "\n".join(f"{n}. step {n}" for n in range(1, 60))
    app, _ = make_app([[*text_steps(LEAD_IN), PlanApproval(plan=plan)]])
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "Plan it")
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await until(pilot, lambda: visible_text_above(pilot, LEAD_IN))
        assert_docked(pilot, ".hint", "#title")


async def test_a_question_is_docked(make_app) -> None:
    import asyncio

    app, _ = make_app([[*text_steps(LEAD_IN)]])
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hi")
        await until(pilot, lambda: not session(pilot).busy)
        options = tuple(f"option {n}" for n in range(30))
        questions = [Question(question="Which one?", options=options)]
        task = asyncio.ensure_future(session(pilot).approver.ask(questions))
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await until(pilot, lambda: visible_text_above(pilot, LEAD_IN))
        assert_docked(pilot, ".hint", "#filter", "#title")
        await pilot.press("escape")
        await until(pilot, task.done)


def _rewind_services() -> dict:
    return {
        "rewind_history": [RewindTurn(number=1, head="Write the report", files=("a.py",))],
        "rewind_previews": {1: RewindPreview(diff=LONG_DIFF)},
    }


@pytest.mark.parametrize(
    ("command", "pinned"),
    [
        ("/model", (".hint", "#filter")),
        ("/resume", (".hint", "#filter")),
        ("/rewind", (".hint", "#filter")),
        ("/cache", (".hint",)),
        ("/login", (".hint", "#key")),
        ("/clear", (".hint",)),
    ],
)
async def test_commands_open_docked_dialogs(make_app, command, pinned) -> None:
    app, _ = make_app([[*text_steps(LEAD_IN)]], **_rewind_services())
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hi")
        await until(pilot, lambda: not session(pilot).busy)
        await type_text(pilot, command)
        await pilot.press("escape")  # close the completion menu
        await pilot.press("enter")
        await until(pilot, lambda: pilot.app.screen is not session(pilot))
        await until(pilot, lambda: visible_text_above(pilot, LEAD_IN))
        assert_docked(pilot, *pinned)


async def test_rewind_choice_pins_its_choices_under_a_long_diff(make_app) -> None:
    from reasonix_tui.screens.rewind import RewindScreen

    app, _ = make_app([[*text_steps(LEAD_IN)]], **_rewind_services())
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hi")
        await until(pilot, lambda: not session(pilot).busy)
        await type_text(pilot, "/rewind")
        await pilot.press("escape")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, RewindScreen))
        await until(pilot, lambda: visible_text_above(pilot, LEAD_IN))
        assert_docked(pilot, "#choices", ".hint")
        assert pilot.app.screen.query_one("#choices").region.height == 4
        assert pilot.app.screen.query_one("#preview").max_scroll_y > 0


async def test_history_search_is_docked(make_app) -> None:
    app, _ = make_app([[*text_steps(LEAD_IN)]])
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hi")
        await until(pilot, lambda: not session(pilot).busy)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await until(pilot, lambda: visible_text_above(pilot, LEAD_IN))
        assert_docked(pilot, ".hint", "#filter")
