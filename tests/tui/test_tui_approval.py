"""The approval dialog answered each way; one dialog at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_helpers import send, session, settle, until

from reasonix_core.events import ToolCallFinished, ToolCallStarted
from reasonix_core.permission.approver import ApprovalDecision, ApprovalRequest
from reasonix_testkit.tui import Approval, Call, text_steps
from reasonix_tui.screens.approval import ApprovalScreen
from reasonix_tui.widgets.diff_view import DiffView
from reasonix_tui.widgets.tool_block import ToolBlock

PREVIEW = "--- a/out.txt\n+++ b/out.txt\n@@ -0,0 +1 @@\n+written\n"


def write_turn(target: Path, call_id: str = "c1") -> list:
    request = ApprovalRequest(
        tool="write_file",
        arguments={"path": "out.txt", "content": "written\n"},
        call_id=call_id,
        read_only=False,
        scope="Edit(out.txt)",
        summary="Write out.txt",
        preview=PREVIEW,
    )
    started = ToolCallStarted(call_id=call_id, name="write_file", arguments='{"path": "out.txt"}')
    return [
        started,
        Approval(
            request=request,
            allowed=[
                Call(lambda: target.write_text("written\n")),
                ToolCallFinished(call_id=call_id, name="write_file", result="ok\n" + PREVIEW),
            ],
            denied=[
                ToolCallFinished(
                    call_id=call_id, name="write_file", result="denied", outcome="denied"
                )
            ],
        ),
        *text_steps("done"),
    ]


async def wait_for_dialog(pilot) -> ApprovalScreen:
    await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
    return pilot.app.screen


@pytest.mark.parametrize(
    ("key", "decision"),
    [
        ("1", ApprovalDecision.ALLOW_ONCE),
        ("y", ApprovalDecision.ALLOW_ONCE),
        ("enter", ApprovalDecision.ALLOW_ONCE),
        ("2", ApprovalDecision.ALLOW_SESSION),
        ("a", ApprovalDecision.ALLOW_SESSION),
        ("3", ApprovalDecision.DENY),
        ("n", ApprovalDecision.DENY),
        ("escape", ApprovalDecision.DENY),
    ],
)
async def test_approval_each_way(make_app, tmp_path: Path, key: str, decision) -> None:
    target = tmp_path / "out.txt"
    app, services = make_app([write_turn(target)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "write it")
        dialog = await wait_for_dialog(pilot)
        assert dialog.query_one(DiffView).diff == PREVIEW
        assert not session(pilot).composer.display
        await pilot.press(key)
        await settle(pilot)
        assert services.runners[0].decisions == [decision]
        assert target.exists() == (decision is not ApprovalDecision.DENY)
        card = session(pilot).query_one(ToolBlock)
        assert card.status == ("denied" if decision is ApprovalDecision.DENY else "ok")
        assert session(pilot).composer.display
        assert not session(pilot).busy


async def test_allow_for_session_skips_the_second_dialog(make_app, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    app, services = make_app([write_turn(target), write_turn(target, "c2")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "write it")
        await wait_for_dialog(pilot)
        await pilot.press("a")
        await settle(pilot)
        target.unlink()
        await send(pilot, "again")
        await settle(pilot)
        assert services.runners[0].decisions == [ApprovalDecision.ALLOW_SESSION]
        assert target.exists()


async def test_ctrl_c_in_dialog_denies_and_cancels_turn(make_app, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    app, _services = make_app([write_turn(target)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "write it")
        await wait_for_dialog(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not target.exists()
        assert not session(pilot).busy
        assert not isinstance(app.screen, ApprovalScreen)


async def test_cancelling_the_turn_closes_the_dialog(make_app, tmp_path: Path) -> None:
    app, _ = make_app([write_turn(tmp_path / "out.txt")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "write it")
        await wait_for_dialog(pilot)
        session(pilot).cancel_turn()
        await settle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert session(pilot).composer.display


async def test_one_dialog_at_a_time(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        approver = session(pilot).approver

        def request(n: int) -> ApprovalRequest:
            return ApprovalRequest(
                tool="bash",
                arguments={"command": f"echo {n}"},
                call_id=f"c{n}",
                read_only=False,
                scope=f"Bash(echo {n})",
            )

        first = asyncio.ensure_future(approver.decide(request(1)))
        second = asyncio.ensure_future(approver.decide(request(2)))
        dialog = await wait_for_dialog(pilot)
        assert dialog.request.call_id == "c1"
        assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1
        await pilot.press("y")
        dialog = await wait_for_dialog(pilot)
        assert dialog.request.call_id == "c2"
        assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1
        await pilot.press("n")
        await pilot.pause()
        assert await first == ApprovalDecision.ALLOW_ONCE
        assert await second == ApprovalDecision.DENY


async def test_a_subagents_request_says_which_child_asks(make_app, tmp_path: Path) -> None:
    from textual.widgets import Static

    from reasonix_core.permission.approver import Requester

    child = ApprovalRequest(
        tool="bash",
        arguments={"command": "rm -rf build"},
        call_id="c7",
        read_only=False,
        scope="Bash(rm:*)",
        summary="Run: rm -rf build",
        requester=Requester(
            agent_path=("call_f#backend", "call_9#tests"),
            name="reviewer",
            task="Clean the build and rerun the backend tests",
            lineage=("backend · task", "tests · reviewer"),
        ),
    )
    app, services = make_app(
        [[Approval(request=child), *text_steps("done")], write_turn(tmp_path / "out.txt")]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "delegate")
        dialog = await wait_for_dialog(pilot)
        title = str(dialog.query_one("#title", Static).render())
        asker = str(dialog.query_one("#requester", Static).render())
        assert title == "Allow bash for a subagent?"
        # Who, in people's words (issue 30 item 5): the subagents by item and
        # profile, never by the tool call ids of their agent path.
        assert "Asked by a subagent, not the main agent: backend · task › tests · reviewer" in asker
        assert "call_" not in asker
        assert "its task: Clean the build and rerun the backend tests" in asker
        await pilot.press("n")
        await settle(pilot)
        # The main agent's own request carries no requester line.
        await send(pilot, "write it")
        dialog = await wait_for_dialog(pilot)
        assert str(dialog.query_one("#title", Static).render()) == "Allow write_file?"
        assert not dialog.query("#requester")
        await pilot.press("n")
        await settle(pilot)
    assert services.runners[0].decisions == [ApprovalDecision.DENY, ApprovalDecision.DENY]
