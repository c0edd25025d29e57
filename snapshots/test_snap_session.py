from __future__ import annotations

import pytest
from snap_scripts import (
    fleet_turn,
    markdown_turn,
    streaming_turn,
    thinking_turn,
    tools_turn,
    wording_turn,
)
from snap_support import scripted, send


class TestSession:
    def test_empty(self, snap) -> None:
        assert snap()

    def test_thinking_live(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Change the greeting to Hello")

        assert snap(scripted(turns=[thinking_turn()]), run)

    def test_streaming_with_reasoning(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Change the greeting to Hello")

        assert snap(scripted(turns=[streaming_turn()]), run)

    def test_tool_cards_with_diff(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Change the greeting to Hello")
            await pilot.app.workers.wait_for_complete()

        assert snap(scripted(turns=[tools_turn()]), run)

    def test_narrow_80x24(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Change the greeting to Hello")
            await pilot.app.workers.wait_for_complete()

        assert snap(scripted(turns=[tools_turn()]), run, size=(80, 24))

    def test_markdown_answer(self, snap) -> None:
        """Headings, inline styles, nested and ordered lists, a quote, a table, a code
        block and a rule, as the answer renderer lays them out."""

        async def run(pilot) -> None:
            await send(pilot, "Plan the parser change")
            await pilot.app.workers.wait_for_complete()

        assert snap(scripted(turns=[markdown_turn()]), run, size=(100, 44))

    def test_fleet_cards(self, snap) -> None:
        """A fleet's plan under its tool card: one card per item, each state, live
        step and tool, the child's own tokens, cache hits and cost."""

        async def run(pilot) -> None:
            await send(pilot, "Rename greet across the app")

        assert snap(scripted(turns=[fleet_turn()]), run, size=(110, 36))

    @pytest.mark.parametrize("size", [(80, 24), (140, 40)], ids=["80x24", "140x40"])
    def test_tool_cards_in_peoples_words(self, snap, size: tuple[int, int]) -> None:
        """Issue 30 item 5: "Read 42 lines" (collapsed), "You denied it." (not the
        model's instructions), a fleet's items as a list (not its XML)."""

        async def run(pilot) -> None:
            await send(pilot, "Rename greet across the app")
            await pilot.app.workers.wait_for_complete()

        assert snap(scripted(turns=[wording_turn()]), run, size=size)

    def test_plan_mode_with_a_goal(self, snap) -> None:
        """The status bar in plan mode with an armed goal: objective (cut to fit),
        rounds, tokens, cost and state; /goal status says the same in full."""
        from reasonix_tui.services import GoalView

        goal = GoalView(
            objective="Make the parser tests pass without changing the public API",
            status="active",
            rounds=3,
            tokens=48_200,
            cost=0.0312,
            armed=True,
        )

        async def run(pilot) -> None:
            await send(pilot, "/goal status")
            await pilot.pause()

        assert snap(scripted(permission_mode="plan", goal_view=goal), run)
