"""Codex's ``/prompts:NAME`` in the TUI: the custom command ``/NAME`` (issue 31 item 4)."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import session, settle, type_text

from reasonix_testkit.tui import text_steps
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock


async def test_prompts_name_runs_the_codex_prompt(make_app, tmp_path: Path) -> None:
    prompts = tmp_path / "ws" / ".codex" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("Review $1 with care\n")
    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await type_text(pilot, "/prompts:review app.py")
        await pilot.press("escape")  # close the completion menu, if any
        await pilot.press("enter")
        await settle(pilot)
        assert services.runners[0].prompts == ["Review app.py with care"]
        assert screen.query(UserBlock).last().text == "/prompts:review app.py"


async def test_prompts_prefix_never_reaches_a_builtin(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await screen.run_slash("/prompts:help")
        await settle(pilot)
        notices = [n.text for n in screen.query(NoticeBlock)]
        assert any("Unknown command /prompts:help" in t for t in notices)
