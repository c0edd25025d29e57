"""``/fork`` in the app, over the real engine (issue 32 item 4): the screen goes on in a
copy of the session; the original file is untouched and the fork's first request
extends the original's last byte for byte."""

from __future__ import annotations

from pathlib import Path

from reasonix_testkit import Reply
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from tests.tui.tui_helpers import send, session, until

SIZE = (100, 32)


async def test_slash_fork_goes_on_in_a_copy(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = session(pilot)
        configured.enqueue(Reply(content="first answer"))
        await send(pilot, "first question")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        original = screen.runner.session_id
        original_file = next(home.glob(f"sessions/*/{original}.jsonl"))
        original_bytes = original_file.read_bytes()
        await send(pilot, "/fork")
        await until(pilot, lambda: session(pilot).runner.session_id != original, 30)
        configured.enqueue(Reply(content="in the fork"))
        await send(pilot, "second question")
        await until(pilot, lambda: len(configured.requests) >= 2 and not session(pilot).busy, 30)
        forked = session(pilot).runner.session_id
    assert forked != original
    assert original_file.read_bytes() == original_bytes
    assert next(home.glob(f"sessions/*/{forked}.jsonl")).exists()
    last, first_in_fork = (r.body for r in configured.requests)
    assert first_in_fork.startswith(last[: last.index(b'],"tools"')])
    assert b"second question" in first_in_fork


async def test_slash_fork_before_any_turn_says_so(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/fork")
        await until(
            pilot,
            lambda: (
                "Nothing to fork yet"
                in str(session(pilot).transcript.query("NoticeBlock").last().text)
            ),  # type: ignore[attr-defined]
            30,
        )
    assert configured.requests == []


async def test_start_notices_show_once_in_the_app(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    """Retired settings (issue 32 item 6) are said once, with the session's first turn."""
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace("[agent]\n", '[agent]\nguardian_model = "x/y"\n', 1)
    )
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = session(pilot)
        configured.enqueue(Reply(content="one"), Reply(content="two"))
        await send(pilot, "first")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        await send(pilot, "second")
        await until(pilot, lambda: len(configured.requests) >= 2 and not screen.busy, 30)
        texts = [str(b.text) for b in screen.transcript.query("NoticeBlock")]  # type: ignore[attr-defined]
    assert sum("guardian_model is ignored" in t for t in texts) == 1
