"""No clutter (issue 30, item 5): blank reasoning makes no "thought" line, and a turn
shows at most one."""

from __future__ import annotations

from tui_helpers import send, session, settle

from reasonix_core.events import ReasoningDelta
from reasonix_testkit.tui import reasoning_steps, text_steps, tool_steps
from reasonix_tui.widgets.reasoning_block import ReasoningBlock


async def test_blank_reasoning_makes_no_thought_line(make_app) -> None:
    app, _ = make_app([[ReasoningDelta(text=""), ReasoningDelta(text=" \n"), *text_steps("Hi.")]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hello")
        await settle(pilot)
        assert not session(pilot).query(ReasoningBlock)


async def test_a_turn_shows_one_thought_line(make_app) -> None:
    app, _ = make_app(
        [
            [
                *reasoning_steps("First I list the files."),
                *tool_steps("c1", "ls", {}, "a.py\nb.py"),
                *reasoning_steps("Now I read them."),
                *tool_steps("c2", "ls", {}, "c.py"),
                *reasoning_steps("Done."),
                *text_steps("Three files."),
            ],
            [*reasoning_steps("A new turn thinks anew."), *text_steps("Yes.")],
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "list")
        await settle(pilot)
        blocks = list(session(pilot).query(ReasoningBlock))
        assert len(blocks) == 1
        text = blocks[0].text
        assert "First I list" in text and "Now I read them." in text and "Done." in text
        assert blocks[0].expandable
        await send(pilot, "again")
        await settle(pilot)
        assert len(session(pilot).query(ReasoningBlock)) == 2


async def test_the_approval_shows_the_command_once(make_app) -> None:
    from reasonix_core.permission.approver import ApprovalRequest
    from reasonix_tui.screens.approval import ApprovalScreen

    request = ApprovalRequest(
        tool="bash",
        arguments={"command": "pytest -q tests", "timeout": 60},
        call_id="c1",
        read_only=False,
        scope="Bash(pytest:*)",
        summary="Run: pytest -q tests",
    )
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        dialog = ApprovalScreen(request)
        app.push_screen(dialog)
        await pilot.pause()
        shown = "\n".join(
            str(widget.render()) for widget in dialog.query("#summary, #arguments")
        )
        assert shown.count("pytest -q tests") == 1
        assert "timeout: 60" in shown  # what the summary does not say still shows


def test_a_plan_card_names_the_plan_without_its_markdown() -> None:
    """Issue 30, item 8: the exit_plan_mode card's header is the plan's title."""
    import json

    from reasonix_tui.format import key_argument

    plan = "\n## **Rename** `greet`\n\n1. Rename it\n2. Run the tests\n"
    assert key_argument(json.dumps({"plan": plan})) == "Rename greet"


async def test_keep_planning_is_not_drawn_as_a_denial(make_app) -> None:
    """Issue 30, item 8: the user's "Keep planning" is their choice, in their words."""
    from reasonix_core.coordinator.plan_mode import KEEP_PLANNING
    from reasonix_tui.widgets.tool_block import ToolBlock

    model_text = f"{KEEP_PLANNING} Plan mode stays on: research more, then call exit_plan_mode."
    plan = "# Rename greet\n\n1. Rename it\n"
    app, _ = make_app(
        [tool_steps("c1", "exit_plan_mode", {"plan": plan}, model_text, outcome="denied")]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "plan it")
        await settle(pilot)
        card = session(pilot).query_one(ToolBlock)
        header = str(card.query_one(".header").render())
        assert "denied" not in header and "keep planning" in header
        assert "Rename greet" in header and "#" not in header
        body = str(card.query_one(".result").render())
        assert "exit_plan_mode" not in body and "keep planning" in body


async def test_trivial_reasoning_makes_no_thought_line(make_app) -> None:
    """A one-word live reasoning ("Ask.", under 20 characters and 1 s) makes no line."""
    app, _ = make_app([[*reasoning_steps("Ask."), *text_steps("Which file?")]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hello")
        await settle(pilot)
        assert not session(pilot).query(ReasoningBlock)
