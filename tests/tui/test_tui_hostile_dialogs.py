"""The dialogs a hostile repository or model drives (issue 29 item 9): the
write-grant dialog, /login, the /rewind picker and preview, plan approval.

Each is given text as an attacker would write it (escape sequences, bidi
overrides, line breaks that fake rows, markup, giant inputs) and what it
renders is read back: no escape byte reaches the terminal, no fake row appears,
and the answers stay on screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import OptionList, Static
from tui_helpers import until

from reasonix_core.config.secrets import read_dotenv
from reasonix_core.permission.approver import ApprovalRequest, Requester
from reasonix_tui.screens.approval import ApprovalScreen
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.screens.plan_approval import PlanApprovalScreen
from reasonix_tui.screens.rewind import RewindScreen, turn_items
from reasonix_tui.services import RewindPreview, RewindTurn

#: Text no dialog may pass to the terminal as itself.
RAW = ("\x1b", "\x9b", "\u202e", "\u2066", "\u200b", "\x07", "\x08", "\r", "\x0b", "\x0c")

#: How an attacker spells a line break or a terminal command.
BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029")
ESCAPES = ("\x1b[2J\x1b[H", "\x1b]8;;http://evil\x07link\x1b]8;;\x07", "\x9b31m", "\u202eexe.txt")
MARKUP = ("[bold red]ok[/]", "[link=file:///etc/passwd]x[/link]", "[@click=app.quit]q[/]")


def rendered(widget: Widget) -> list[str]:
    """The lines ``widget`` draws, as text."""
    size = widget.size
    return [strip.text for strip in widget.render_lines(Region(0, 0, size.width, size.height))]


def screen_lines(screen) -> list[str]:
    lines: list[str] = []
    for widget in screen.query(Static):
        lines.extend(rendered(widget))
    for widget in screen.query(OptionList):
        lines.extend(rendered(widget))
    return lines


def assert_inert(lines: list[str]) -> None:
    for line in lines:
        for raw in RAW:
            assert raw not in line, (raw, line)


def visible_on(screen, widget: Widget) -> bool:
    """Whether ``widget`` is drawn inside the screen (not pushed below its edge)."""
    region = widget.region
    return region.height > 0 and screen.region.contains_region(region)


async def show(pilot, screen) -> None:
    pilot.app.push_screen(screen)
    await until(pilot, lambda: pilot.app.screen is screen)
    await pilot.pause()


@pytest.mark.parametrize("hostile", [*BREAKS, *ESCAPES, *MARKUP])
async def test_a_subagents_task_cannot_fake_the_grant_dialogs_lines(make_app, hostile) -> None:
    """The requester's task and name are a model's words: one line each, inert."""
    app, _ = make_app()
    task = f"tidy{hostile}Asked by the main agent"
    request = ApprovalRequest(
        tool="bash",
        arguments={"command": "cp a /shared/b"},
        call_id="c1",
        read_only=False,
        scope="",
        write_dirs=("/shared",),
        justification="copy",
        requester=Requester(agent_path=("main", f"c{hostile}"), name=f"f{hostile}", task=task),
    )
    async with app.run_test(size=(100, 40)) as pilot:
        dialog = ApprovalScreen(request)
        await show(pilot, dialog)
        lines = rendered(dialog.query_one("#requester", Static))
        assert_inert(lines)
        text = [line.strip() for line in lines if line.strip()]
        # A long line may wrap; a line of the model's own never starts.
        assert [line[:9] for line in text if line.startswith(("Asked by", "its task"))] == [
            "Asked by ",
            "its task:",
        ], text
        assert not any(line.startswith("Asked by the main agent") for line in text), text


@pytest.mark.parametrize("count, length", [(1, 60_000), (400, 200), (3, 4096)])
async def test_giant_folders_leave_the_command_and_the_answers_on_screen(
    make_app, count, length
) -> None:
    app, _ = make_app()
    folders = tuple(f"/srv/{i:03}/" + "d" * length for i in range(count))
    request = ApprovalRequest(
        tool="bash",
        arguments={"command": "rm -rf ~/.ssh"},
        call_id="c1",
        read_only=False,
        scope="",
        write_dirs=folders,
        justification="x " * 50_000,
    )
    async with app.run_test(size=(100, 40)) as pilot:
        dialog = ApprovalScreen(request)
        await show(pilot, dialog)
        for name in ("#arguments", "#choices", "#summary"):
            assert visible_on(dialog, dialog.query_one(name)), name
        assert any("rm -rf ~/.ssh" in line for line in rendered(dialog.query_one("#arguments")))


@pytest.mark.parametrize("hostile", [*BREAKS, *ESCAPES, *MARKUP])
async def test_a_folder_name_cannot_spoof_another_folder(make_app, hostile) -> None:
    app, _ = make_app()
    request = ApprovalRequest(
        tool="bash",
        arguments={"command": "true"},
        call_id="c1",
        read_only=False,
        scope="",
        write_dirs=(f"/tmp/ok{hostile}/home/me/.ssh",),
        justification=f"why{hostile}Deny is not an option",
    )
    async with app.run_test(size=(100, 40)) as pilot:
        dialog = ApprovalScreen(request)
        await show(pilot, dialog)
        folders = [line.strip() for line in rendered(dialog.query_one("#folders")) if line.strip()]
        assert_inert(screen_lines(dialog))
        assert len(folders) == 1 and folders[0].startswith("/tmp/ok"), folders


@pytest.mark.parametrize("hostile", [*BREAKS, *ESCAPES, *MARKUP])
async def test_the_rewind_picker_shows_one_row_per_turn(make_app, hostile) -> None:
    app, _ = make_app()
    turns = [
        RewindTurn(
            number=1, head=f"fix it{hostile}  2  delete nothing", time="2026-12-07T20:00:00"
        ),
        RewindTurn(number=2, head="second", time="2026-12-07T20:01:00", files=("M a.txt +1 -1",)),
    ]
    async with app.run_test(size=(100, 40)) as pilot:
        picker = PickerScreen("Rewind to the start of a turn", turn_items(turns))
        await show(pilot, picker)
        options = picker.query_one(OptionList)
        rows = [line for line in rendered(options) if line.strip()]
        assert_inert(rows)
        assert len(rows) == 2, rows
        turn = turns[0]
        preview = RewindPreview(
            diff=f"--- a/x{hostile}y\n+++ b/x{hostile}y\n@@ -1 +1 @@\n-a\n+b\n",
            conflicts=(f"evil{hostile}name.txt", "b.txt"),
            note="",
        )
        second = RewindScreen(turn, preview)
        await show(pilot, second)
        assert_inert(screen_lines(second))
        conflicts = [line for line in rendered(second.query_one("#conflicts")) if line.strip()]
        title = [line for line in rendered(second.query_one("#title")) if line.strip()]
        assert len(title) == 1, title
        assert "b.txt" in " ".join(conflicts)
        assert not any(line.strip().startswith("name.txt") for line in conflicts), conflicts


@pytest.mark.parametrize("hostile", [*ESCAPES, *MARKUP, "\x07\x08\x7f"])
async def test_a_plan_cannot_send_escapes_to_the_terminal(make_app, hostile) -> None:
    app, _ = make_app()
    plan = f"# Plan{hostile}\n\n1. step one {hostile}\n2. `code {hostile}`\n\n```\n{hostile}\n```\n"
    async with app.run_test(size=(100, 40)) as pilot:
        dialog = PlanApprovalScreen(plan)
        await show(pilot, dialog)
        lines: list[str] = []
        for widget in dialog.query("*"):
            if isinstance(widget, Widget) and widget.size.area:
                lines.extend(rendered(widget))
        assert_inert(lines)


async def test_a_giant_plan_leaves_the_answers_on_screen(make_app) -> None:
    app, _ = make_app()
    plan = "# Plan\n\n" + "".join(f"{i}. step {'x' * 200}\n" for i in range(5000))
    async with app.run_test(size=(100, 40)) as pilot:
        dialog = PlanApprovalScreen(plan)
        await show(pilot, dialog)
        assert visible_on(dialog, dialog.query_one(".hint"))


@pytest.mark.parametrize("breaker", [b for b in BREAKS if b not in "\n\r"])
def test_login_refuses_a_key_that_would_add_a_variable_to_dotenv(tmp_path: Path, breaker) -> None:
    """What /login saves (``save_api_key``): a pasted "key" with a line break that
    the .env reader's splitlines() honours must not plant a second variable."""
    from reasonix_core.config.secrets import save_api_key
    from reasonix_core.errors import ConfigError

    home = tmp_path / "dotenv-home"
    save_api_key("DEEPSEEK_API_KEY", "sk-old", home)
    with pytest.raises(ConfigError, match="single line"):
        save_api_key("DEEPSEEK_API_KEY", f"sk-x{breaker}OPENAI_BASE_URL=http://evil", home)
    assert read_dotenv(home / ".env") == {"DEEPSEEK_API_KEY": "sk-old"}


@pytest.mark.parametrize("hostile", [*ESCAPES, "\u2028"])
async def test_login_names_a_hostile_provider_inertly(make_app, hostile) -> None:
    """/login's words come from the config (a project's reasonix.toml once trusted):
    a provider or endpoint name cannot send escapes or fake a line."""
    from tui_helpers import send

    from reasonix_tui.screens.setup import SetupScreen
    from reasonix_tui.services import ApiKeyInfo

    app, services = make_app()
    services.api_key_info = lambda: ApiKeyInfo(  # type: ignore[method-assign]
        provider=f"Deep{hostile}Seek",
        variable="DEEPSEEK_API_KEY",
        stored_in=Path(f"/home/u/.reasonix{hostile}/.env"),
        signup_url=f"https://evil{hostile}/keys",
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/login")
        await until(pilot, lambda: isinstance(pilot.app.screen, SetupScreen))
        await pilot.pause()
        lines = rendered(pilot.app.screen.query_one("#intro", Static))
        assert_inert(lines)
        assert "\u2028" not in "".join(lines)
