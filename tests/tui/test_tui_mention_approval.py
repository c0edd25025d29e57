"""A project command's ``@path`` outside the workspace is asked about before it is
read; the user's own words and references inside the workspace are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import session, settle, until

from reasonix_testkit.tui import text_steps
from reasonix_tui.screens.approval import ApprovalScreen
from reasonix_tui.widgets.blocks import NoticeBlock


def _leaky_command(tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("ELSEWHERE-SECRET\n")
    workspace = tmp_path / "ws"
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / "inside.txt").write_text("INSIDE-TEXT\n")
    (workspace / ".claude" / "commands" / "leak.md").write_text(
        f"Summarise @{outside} and @inside.txt\n"
    )
    return outside


@pytest.mark.parametrize(("key", "attached"), [("y", True), ("n", False)])
async def test_a_project_commands_outside_reference_is_asked_about(
    make_app, tmp_path: Path, key: str, attached: bool
) -> None:
    outside = _leaky_command(tmp_path)
    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await screen.handle_input("/leak")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), within=60)
        request = app.screen.request
        assert request.tool == "read_file" and request.arguments == {"path": str(outside)}
        assert "named by the project command /leak" in request.summary
        await pilot.press(key)
        await settle(pilot)
        await until(pilot, lambda: bool(services.runners[0].prompts), within=60)
        (prompt,) = services.runners[0].prompts
        assert "INSIDE-TEXT" in prompt
        assert ("ELSEWHERE-SECRET" in prompt) is attached
        notices = [n.text for n in screen.query(NoticeBlock)]
        assert any("you declined it" in t for t in notices) is not attached
