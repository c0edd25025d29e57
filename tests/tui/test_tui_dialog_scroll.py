"""A docked dialog's long body scrolls from the keyboard (issue 30, item 1, audit N2).

At 80×24 an 80-line write_file approval showed 2 diff lines; PageDown and Down moved
the highlight of the choices, not the diff, and nothing said 78 lines were hidden.
Now PageUp/PageDown and Shift+Up/Down (and the wheel) scroll the body while the
choices keep the focus and the highlight, a line under the body says how much is out
of view, and the hint line names the keys. The same holds for plan approval, the
rewind preview and ``/cache``."""

from __future__ import annotations

import pytest
from test_tui_docked_dialogs import LEAD_IN, LONG_DIFF, long_write_turn
from textual.events import MouseScrollDown
from textual.widgets import OptionList, Static
from tui_helpers import send, session, type_text, until

from reasonix_core.events import ToolCallStarted
from reasonix_core.permission.approver import ApprovalRequest
from reasonix_testkit.tui import Approval, Hold, PlanApproval, text_steps
from reasonix_tui.screens.approval import ApprovalScreen
from reasonix_tui.screens.overlay import DockedOverlay
from reasonix_tui.screens.plan_approval import PlanApprovalScreen
from reasonix_tui.services import RewindPreview, RewindTurn


def more_line(pilot) -> str:
    more = pilot.app.screen.query_one(".more", Static)
    return str(more.render()) if more.display and more.region.height else ""


def hint(pilot) -> str:
    return str(pilot.app.screen.query_one(".hint", Static).render())


def on_screen(pilot, selector: str) -> bool:
    region = pilot.app.screen.query_one(selector).region
    return region.height > 0 and pilot.app.screen.region.contains_region(region)


async def open_long_write(pilot) -> None:
    await send(pilot, "Write the report")
    await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
    await until(pilot, lambda: "more lines" in more_line(pilot))


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
async def test_the_keys_scroll_a_long_diff_and_the_choices_keep_the_focus(
    make_app, size
) -> None:
    app, _ = make_app([long_write_turn()])
    async with app.run_test(size=size) as pilot:
        await open_long_write(pilot)
        dialog = pilot.app.screen
        body = dialog.query_one("#body")
        choices = dialog.query_one("#choices", OptionList)
        hidden = round(body.max_scroll_y)
        assert more_line(pilot) == f"↓ {hidden} more lines"
        assert "PgUp/PgDn scroll" in hint(pilot)
        assert "3/n/Esc deny" in hint(pilot)  # the answers' keys are still said
        for selector in ("#choices", ".hint", ".more"):
            assert on_screen(pilot, selector), selector

        await pilot.press("pagedown")
        await until(pilot, lambda: body.scroll_y > 0)
        assert choices.highlighted == 0  # the highlight did not move
        assert dialog.focused is choices
        page = round(body.scroll_y)
        await until(pilot, lambda: f"↑ {page} lines above" in more_line(pilot))

        await pilot.press("shift+down")
        await until(pilot, lambda: body.scroll_y == page + 1)
        await pilot.press("shift+up")
        await until(pilot, lambda: body.scroll_y == page)
        await pilot.press("pageup")
        await until(pilot, lambda: body.scroll_y == 0)
        await until(pilot, lambda: more_line(pilot) == f"↓ {hidden} more lines")

        for _ in range(hidden):  # to the end: only what is above is left to say
            await pilot.press("pagedown")
            if body.scroll_y >= hidden:
                break
        await until(pilot, lambda: more_line(pilot) == f"↑ {hidden} lines above")
        assert choices.highlighted == 0

        # The choices still answer: Down moves the highlight, Enter picks it.
        await pilot.press("down", "down", "enter")
        await until(pilot, lambda: not isinstance(pilot.app.screen, DockedOverlay))
        runner = session(pilot).runner
        assert [d.value for d in runner.decisions] == ["deny"]  # type: ignore[attr-defined]


async def test_the_wheel_scrolls_the_body(make_app) -> None:
    app, _ = make_app([long_write_turn()])
    async with app.run_test(size=(80, 24)) as pilot:
        await open_long_write(pilot)
        body = pilot.app.screen.query_one("#body")
        await pilot._post_mouse_events([MouseScrollDown], "#body", offset=(4, 2))
        await until(pilot, lambda: body.scroll_y > 0)
        await until(pilot, lambda: "lines above" in more_line(pilot))


async def test_a_short_body_leaves_page_keys_to_the_choices(make_app) -> None:
    request = ApprovalRequest(
        tool="bash",
        arguments={"command": "ls"},
        call_id="c1",
        read_only=False,
        scope="Bash(ls)",
        summary="Run: ls",
    )
    turn = [
        *text_steps(LEAD_IN),
        ToolCallStarted(call_id="c1", name="bash", arguments='{"command": "ls"}'),
        Approval(request=request),
        Hold(),
    ]
    app, _ = make_app([turn])
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "List")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.pause(0.2)
        assert more_line(pilot) == ""
        assert "PgUp/PgDn" not in hint(pilot)
        choices = pilot.app.screen.query_one("#choices", OptionList)
        await pilot.press("pagedown")
        await until(pilot, lambda: choices.highlighted == 2)  # OptionList's own PageDown


async def test_a_long_plan_scrolls_from_the_keyboard(make_app) -> None:
    plan = "# Plan\n\n" + "\n".join(f"{n}. step {n}" for n in range(1, 60))
    app, _ = make_app([[*text_steps(LEAD_IN), PlanApproval(plan=plan)]])
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "Plan it")
        await until(pilot, lambda: isinstance(pilot.app.screen, PlanApprovalScreen))
        await until(pilot, lambda: "more lines" in more_line(pilot))
        assert "PgUp/PgDn scroll" in hint(pilot)
        assert "a/Enter approve and execute" in hint(pilot)
        body = pilot.app.screen.query_one(".body")
        await pilot.press("pagedown")
        await until(pilot, lambda: body.scroll_y > 0)
        await pilot.press("shift+down")
        await until(pilot, lambda: "lines above" in more_line(pilot))
        assert isinstance(pilot.app.screen, PlanApprovalScreen)  # nothing was answered
        assert on_screen(pilot, ".hint")


async def test_the_rewind_preview_scrolls_from_the_keyboard(make_app) -> None:
    app, _ = make_app(
        [[*text_steps(LEAD_IN)]],
        rewind_history=[RewindTurn(number=1, head="Write the report", files=("a.py",))],
        rewind_previews={1: RewindPreview(diff=LONG_DIFF)},
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hi")
        await until(pilot, lambda: not session(pilot).busy)
        await type_text(pilot, "/rewind")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, DockedOverlay))
        await pilot.press("enter")
        await until(pilot, lambda: "more lines" in more_line(pilot))
        choices = pilot.app.screen.query_one("#choices", OptionList)
        preview = pilot.app.screen.query_one("#preview")
        await pilot.press("pagedown")
        await until(pilot, lambda: preview.scroll_y > 0)
        assert choices.highlighted == 0
        assert "PgUp/PgDn scroll" in hint(pilot)
