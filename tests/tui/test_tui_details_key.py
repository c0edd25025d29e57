"""Ctrl+O expands and collapses the latest tool card with more to show, else the latest
reasoning block."""

from __future__ import annotations

from tui_helpers import send, session, settle, until

from reasonix_testkit.tui import reasoning_steps, text_steps, tool_steps
from reasonix_tui.widgets.reasoning_block import ReasoningBlock
from reasonix_tui.widgets.tool_block import PREVIEW_LINES, ToolBlock

LONG = "\n".join(f"line {i}" for i in range(1, 21))


async def test_ctrl_o_toggles_the_latest_tool_card(make_app) -> None:
    app, _ = make_app(
        [
            [
                *reasoning_steps("List the directory first."),
                *tool_steps("c1", "bash", {"command": "ls"}, LONG),
                *text_steps("Twenty lines."),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "list it")
        await settle(pilot)
        screen = session(pilot)
        card = screen.query_one(ToolBlock)
        reasoning = screen.query_one(ReasoningBlock)
        assert card.expandable and not card.expanded
        assert f"{20 - PREVIEW_LINES} more lines" in str(card.query_one(".result").render())

        await pilot.press("ctrl+o")
        await pilot.pause()
        assert card.expanded
        assert not reasoning.expanded  # only the latest expandable block
        assert "line 20" in str(card.query_one(".result").render())
        assert screen.composer.has_focus  # the key never takes focus from the composer

        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not card.expanded
        assert "more lines" in str(card.query_one(".result").render())


async def test_ctrl_o_toggles_reasoning_when_it_is_the_latest(make_app) -> None:
    app, _ = make_app(
        [
            [
                # A short result has nothing more to show, so the reasoning after it is picked.
                *tool_steps("c1", "read_file", {"path": "a.py"}, "x = 1"),
                *reasoning_steps("The file sets x to one and nothing else."),
                *text_steps("It sets x."),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "what does it do")
        await settle(pilot)
        screen = session(pilot)
        reasoning = screen.query_one(ReasoningBlock)
        assert not screen.query_one(ToolBlock).expandable
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert reasoning.expanded
        assert "▾ thought for" in str(reasoning.query_one(".header").render())
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not reasoning.expanded


async def test_ctrl_o_with_nothing_to_expand_says_so(make_app) -> None:
    app, _ = make_app([text_steps("Just text.")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hello")
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert session(pilot).status.state.hint == "Nothing to expand"


async def test_ctrl_o_reveals_a_card_in_a_parked_chunk(make_app) -> None:
    app, _ = make_app([tool_steps("c1", "bash", {"command": "ls"}, LONG)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "list it")
        await settle(pilot)
        screen = session(pilot)
        for i in range(60):  # push the card far up: its chunk parks
            await screen.notice(f"note {i}")
        card = screen.query_one(ToolBlock)
        await until(pilot, lambda: card.parent.parked)  # type: ignore[union-attr]
        await pilot.press("ctrl+o")
        await until(
            pilot,
            lambda: (
                card.expanded
                and not card.parent.parked  # type: ignore[union-attr]
                and card.region.overlaps(screen.transcript.region)
            ),
        )


async def test_alt_up_selects_an_earlier_block_for_ctrl_o(make_app) -> None:
    """Issue 14, item 8: the tool output is reachable from the keyboard even when a
    reasoning block came after it."""
    app, _ = make_app(
        [
            [
                *tool_steps("c1", "bash", {"command": "ls"}, LONG),
                *reasoning_steps("Twenty files are listed here."),
                *text_steps("Done."),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "list it")
        await settle(pilot)
        screen = session(pilot)
        card = screen.query_one(ToolBlock)
        reasoning = screen.query_one(ReasoningBlock)
        await pilot.press("alt+up")  # the newest expandable block: the reasoning
        assert screen.transcript.selected is reasoning
        await pilot.press("alt+up")  # then the tool output before it
        assert screen.transcript.selected is card and card.has_class("-selected")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: card.expanded)
        assert not reasoning.expanded
        assert "line 20" in str(card.query_one(".result").render())
        assert screen.composer.has_focus
        await pilot.press("alt+down")
        assert screen.transcript.selected is reasoning
        await send(pilot, "next")  # a new prompt clears the selection
        assert screen.transcript.selected is None


async def test_ctrl_o_opens_the_latest_tool_card_before_a_later_thought(make_app) -> None:
    """Issue 30, item 10: after a tool step the model thinks again; Ctrl+O still opens
    the tool's output, what the user wants there, not the newer thought."""
    app, _ = make_app(
        [
            [
                *tool_steps("c1", "bash", {"command": "ls"}, LONG),
                *reasoning_steps("Twenty files; now summarise them."),
                *text_steps("Twenty lines."),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "list it")
        await settle(pilot)
        screen = session(pilot)
        card = screen.query_one(ToolBlock)
        reasoning = screen.query_one(ReasoningBlock)
        assert card.expandable and reasoning.expandable
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert card.expanded
        assert not reasoning.expanded
