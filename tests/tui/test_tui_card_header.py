"""A tool card's header ends with its status at any width (issue 30, item 5): the key
argument gives way, cut with "…"."""

from __future__ import annotations

import pytest
from tui_helpers import send, session, settle

from reasonix_core.events import ToolCallStarted
from reasonix_testkit.tui import text_steps, tool_steps
from reasonix_tui.widgets.tool_block import ToolBlock

LOOP = 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "test_case_$i ... passed"; done; echo all done'


def _header(card: ToolBlock) -> tuple[str, int, int]:
    header = card.query_one(".header")
    content = header.render()
    return str(content), content.cell_length, header.size.width  # type: ignore[union-attr]


@pytest.mark.parametrize("width", [60, 80, 140])
async def test_a_finished_cards_header_ends_with_its_status(make_app, width: int) -> None:
    app, _ = make_app(
        [[*tool_steps("c1", "bash", {"command": LOOP}, "all done"), *text_steps("ok")]]
    )
    async with app.run_test(size=(width, 24)) as pilot:
        await send(pilot, "run")
        await settle(pilot)
        text, cells, room = _header(session(pilot).query_one(ToolBlock))
        assert text.endswith("✓ ok") and cells <= room
        assert text.startswith("bash  for i in 1 2 3")
        assert ("…" in text) == (width < 140)


async def test_a_running_cards_header_and_a_resize(make_app) -> None:
    app, _ = make_app(
        [
            [
                ToolCallStarted(
                    call_id="c1",
                    name="bash",
                    arguments=f'{{"command": "{LOOP.replace(chr(34), chr(92) + chr(34))}"}}',
                )
            ]
        ]
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "run")
        await settle(pilot)
        card = session(pilot).query_one(ToolBlock)
        text, cells, room = _header(card)
        assert card.status != "running" or text.endswith("running…")
        assert "…" in text[:-8] and cells <= room
        await pilot.resize_terminal(50, 24)
        await settle(pilot)
        text, cells, room = _header(card)
        assert cells <= room and "…" in text


async def test_control_characters_in_the_key_argument_are_spelled_out(make_app) -> None:
    app, _ = make_app([tool_steps("c1", "bash", {"command": "echo \x1b[2Jhi"}, "hi")])
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "run")
        await settle(pilot)
        text, _, _ = _header(session(pilot).query_one(ToolBlock))
        assert "\x1b" not in text and "\\x1b" in text


def test_a_subagent_cards_label_and_reason_are_terminal_safe() -> None:
    from reasonix_tui.widgets.subagent_card import SubagentCard

    card = SubagentCard("item\x1b]0;pwned\x07", depends_on=("b\x1b[2J",), state="skipped")
    card.profile, card.reason = "task\x1b[31m", "blocked \x1b[H here"
    card.lines = [("bash \x1b[2J", "ok")]
    text = card.header().plain + card._calls_text().plain
    assert "\x1b" not in text and "\x07" not in text
    assert "item\\x1b]0;pwned\\x07" in text and "blocked \\x1b[H here" in text


async def test_picker_labels_are_terminal_safe(make_app) -> None:
    from textual.widgets import OptionList

    from reasonix_tui.screens.picker import PickerItem, PickerScreen

    app, _ = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        items = [PickerItem("a", "model\x1b]0;pwned\x07", "from \x1b[2J a provider")]
        picker = PickerScreen("Pick", items)
        app.push_screen(picker)
        await pilot.pause()
        prompt = str(picker.query_one(OptionList).get_option_at_index(0).prompt)
        assert "\x1b" not in prompt and "\x07" not in prompt
        assert "model\\x1b]0;pwned\\x07" in prompt and "\\x1b[2J" in prompt


async def test_the_update_goal_card_names_the_change_not_the_goal_id(make_app) -> None:
    """``update_goal goal-9e5e7c2c`` said nothing: the card names the new status, or
    the new objective of an edit."""
    complete = {"id": "goal-9e5e7c2c", "revision": 1, "action": "complete"}
    edit = {"id": "goal-9e5e7c2c", "revision": 2, "action": "edit", "objective": "Ship v2"}
    app, _ = make_app(
        [
            [
                *tool_steps("c1", "update_goal", complete, "Updated goal"),
                *tool_steps("c2", "update_goal", edit, "Updated goal"),
            ]
        ]
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        headers = [_header(block)[0] for block in session(pilot).query(ToolBlock)]
    assert len(headers) == 2
    assert "complete" in headers[0] and "Ship v2" in headers[1]
    assert not any("goal-9e5e7c2c" in text for text in headers), headers
