"""Typed text is never cut while a turn runs (issue 30, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix_testkit import Reply
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from tests.tui.tui_helpers import session, until

pytestmark = pytest.mark.usefixtures("configured")

LONG = "word " * 400


@pytest.mark.parametrize("gap", [0.0, 0.01, 0.03])
async def test_goal_status_typed_during_a_streaming_goal_round_arrives_whole(
    workspace: Path, home: Path, configured, gap: float
) -> None:  # type: ignore[no-untyped-def]
    from tests.core.test_goal_mode import GoalScript, _update

    configured.responder = GoalScript(
        Reply(content=LONG, chunk_size=4, delay=0.002),
        Reply(content=LONG, chunk_size=4, delay=0.002),
        _update("complete", note="verified"),
        Reply(content="Done."),
    )
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        for char in "/goal make it so":
            await pilot.press("space" if char == " " else char)
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and screen.busy, 30)
        for char in "/goal status":
            await pilot.press("space" if char == " " else char)
            if gap:
                await pilot.pause(gap)
        await pilot.press("enter")
        await until(pilot, lambda: not screen.busy and len(configured.requests) >= 4, 60)
        await pilot.pause()
        users = [str(b.text) for b in screen.query(UserBlock)]
        notices = [str(n.text) for n in screen.query(NoticeBlock)]
        assert "us" not in users and not any("stat" in u for u in users), users
        assert any(n.startswith("Goal: make it so") for n in notices), notices
        assert screen.composer.prompt_history[-1] == "/goal status"


async def test_an_approval_opening_mid_typing_takes_no_typed_keys(make_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The race behind item 4: the approval dialog opens between two keys of text typed
    for the composer. Today the dialog takes the rest: "a" of "/goal" is its "Allow for
    this session" key, the composer kept "/gol status". Now the keys stay the composer's
    while it holds text; Tab hands them to the dialog."""
    import asyncio

    from reasonix_testkit.tui import WaitFor
    from reasonix_tui.screens.approval import ApprovalScreen
    from tests.tui.test_tui_approval import write_turn
    from tests.tui.tui_helpers import send, type_text, until

    gate = asyncio.Event()
    target = tmp_path / "ws" / "out.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    app, _ = make_app([[WaitFor(gate), *write_turn(target)]])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await send(pilot, "go")
        await until(pilot, lambda: screen.busy)
        await type_text(pilot, "/go")
        gate.set()  # the approval opens between two keys
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen) or target.exists())
        await type_text(pilot, "al status")
        await pilot.pause()
        assert not target.exists(), "a key typed for the composer approved the write"
        assert screen.composer.text == "/goal status"
        await pilot.press("enter")  # neither a choice nor a send while the dialog waits
        assert isinstance(pilot.app.screen, ApprovalScreen) and not target.exists()
        await pilot.press("tab", "1")
        await until(pilot, lambda: target.exists())
        assert screen.composer.text == "/goal status"


async def test_keys_typed_as_a_dialog_opens_stay_on_screen(make_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 1/4: the keys that go on into the composer while an approval is up
    are seen: the composer stays drawn above the dialog, the hint line says where the keys
    go and names Tab first; after Tab the composer hides again and the digits answer."""
    import asyncio

    from reasonix_testkit.tui import WaitFor
    from reasonix_tui.screens.approval import ApprovalScreen
    from tests.tui.test_tui_approval import write_turn
    from tests.tui.test_tui_dialog_lead_in import drawn
    from tests.tui.tui_helpers import send, type_text, until

    def above_dialog(text: str) -> bool:
        lines = drawn(pilot.app)
        top = pilot.app.screen.query_one("#dialog").region.y
        return any(text in line for line in lines[:top])

    def hint_lines() -> str:
        top = pilot.app.screen.query_one("#dialog").region.y
        return "\n".join(drawn(pilot.app)[top:])

    gate = asyncio.Event()
    target = tmp_path / "ws" / "out.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    app, _ = make_app([[WaitFor(gate), *write_turn(target)]])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = session(pilot)
        await send(pilot, "go")
        await until(pilot, lambda: screen.busy)
        await type_text(pilot, "note:")
        gate.set()
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await type_text(pilot, " y1a")
        await until(pilot, lambda: above_dialog("note: y1a"))
        await until(pilot, lambda: "Tab to answer" in hint_lines())
        assert "typing goes to your message" in hint_lines()
        assert isinstance(pilot.app.screen, ApprovalScreen) and not target.exists()
        await pilot.press("tab")
        await until(pilot, lambda: not screen.composer.display)
        await until(pilot, lambda: "Tab to answer" not in hint_lines())
        assert "1/y allow once" in hint_lines()
        await pilot.press("1")
        await until(pilot, lambda: target.exists())
        assert screen.composer.display and screen.composer.text == "note: y1a"
