"""/copy and terminal notifications (issue 14, comforts)."""

from __future__ import annotations

from tui_helpers import send, session, settle, until

from reasonix_core.permission.approver import ApprovalRequest
from reasonix_testkit.tui import Approval, Pause, text_steps
from reasonix_tui.notify import sequences


async def test_copy_puts_the_last_answer_on_the_clipboard(make_app) -> None:
    app, _ = make_app([text_steps("First."), text_steps("Second **answer**.")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/copy")
        await settle(pilot)
        assert "no answer to copy" in session(pilot).query("NoticeBlock").last().text
        for prompt in ("one", "two"):
            await send(pilot, prompt)
            await settle(pilot)
        await send(pilot, "/copy")
        await settle(pilot)
        assert app.clipboard == "Second **answer**."
        assert "Copied the last answer" in session(pilot).status.state.hint


def capture(app, monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """What the app writes to the terminal (the test driver is headless and drops it)."""
    written: list[str] = []
    monkeypatch.setattr(app._driver, "write", written.append)
    monkeypatch.setattr(type(app), "is_headless", property(lambda self: False))
    return written


async def test_a_long_turn_and_an_approval_notify(make_app, monkeypatch) -> None:
    request = ApprovalRequest(
        tool="bash",
        arguments={},
        call_id="c1",
        read_only=False,
        scope="Bash(make)",
        summary="Run make",
    )
    app, _ = make_app(
        [[Pause(0.05), *text_steps("done")], [Approval(request, allowed=text_steps("ok"))]],
        notify_after=0.01,
    )
    async with app.run_test(size=(100, 32)) as pilot:
        written = capture(app, monkeypatch)
        await send(pilot, "build")
        await settle(pilot)
        assert any("the turn finished after" in w and "\x1b]9;" in w for w in written)
        await send(pilot, "run it")
        await until(pilot, lambda: any("approval needed: Run make" in w for w in written))
        await pilot.press("y")
        await settle(pilot)


async def test_no_notification_when_turned_off(make_app, monkeypatch) -> None:
    app, _ = make_app([[Pause(0.05), *text_steps("done")]], notify_after=None)
    async with app.run_test(size=(100, 32)) as pilot:
        written = capture(app, monkeypatch)
        await send(pilot, "build")
        await settle(pilot)
        assert not any("\x1b]9;" in w for w in written)


def test_a_hostile_answer_cannot_break_out_of_the_sequence() -> None:
    out = sequences("Reasonix", "done\x07\x1b]52;c;ZXZpbA==\x07; rm")
    assert out.count("\x1b") == 2  # only our two OSC introducers
    assert "\x1b]52" not in out
