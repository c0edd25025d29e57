"""Slash and @ completion menus, slash execution and custom commands."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import session, settle, type_text

from reasonix_testkit.tui import text_steps
from reasonix_tui.screens.help import HelpScreen
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock


async def test_slash_menu_filters_and_enter_runs(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await type_text(pilot, "/")
        assert screen.menu.is_open and screen.menu.kind == "slash"
        assert len(screen.menu.items) >= 10
        await type_text(pilot, "hel")
        assert [i.value for i in screen.menu.items] == ["help"]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_enter_pressed_while_the_menu_was_closing_still_submits(make_app) -> None:
    """The composer reads its menu flag when Enter arrives; the screen may close the
    menu (the text gained a space) before it handles the key. The command runs."""
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await type_text(pilot, "/hel")
        assert screen.menu.is_open
        screen.composer.load_text("/help now")  # the space's change not yet handled,
        screen.post_message(screen.composer.MenuKeyPressed("enter"))  # Enter read as the menu's
        screen.close_menu()  # then the change is handled before the key is
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert screen.composer.text == ""


async def test_slash_menu_tab_completes_and_escape_closes(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await type_text(pilot, "/e")
        labels = [i.value for i in screen.menu.items]
        assert labels[0] == "effort"
        await pilot.press("tab")
        assert screen.composer.text == "/effort "
        assert not screen.menu.is_open
        screen.composer.clear()
        await type_text(pilot, "/")
        await pilot.press("down")
        assert screen.menu.highlighted == 1
        await pilot.press("escape")
        assert not screen.menu.is_open
        assert screen.composer.text == "/"


async def test_effort_command_sets_level(make_app) -> None:
    app, services = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await screen.handle_input("/effort low")
        assert services.effort == "low"
        assert screen.status.state.effort == "low"
        await screen.handle_input("/effort bogus")
        assert any("effort must be" in n.text for n in screen.query(NoticeBlock))


async def test_unknown_command_is_a_notice_and_paths_are_text(make_app) -> None:
    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await screen.handle_input("/nope")
        assert any("Unknown command /nope" in n.text for n in screen.query(NoticeBlock))
        await screen.handle_input("/etc/hosts is odd")
        await settle(pilot)
        assert services.runners[0].prompts == ["/etc/hosts is odd"]


async def test_at_menu_one_level_at_a_time(make_app, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print()")
    (ws / "README.md").write_text("hi")
    (ws / ".git").mkdir()
    (ws / "node_modules").mkdir()
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await type_text(pilot, "see @")
        assert screen.menu.kind == "mention"
        assert [i.label for i in screen.menu.items] == ["src/", "README.md"]
        await type_text(pilot, "s")
        assert [i.label for i in screen.menu.items] == ["src/"]
        await pilot.press("tab")
        assert screen.composer.text == "see @src/"
        assert [i.label for i in screen.menu.items] == ["pkg/", "main.py"]
        await pilot.press("down")
        await pilot.press("enter")
        assert screen.composer.text == "see @src/main.py "
        assert not screen.menu.is_open


async def test_custom_command_expands_and_is_sent(make_app, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    commands = ws / ".reasonix" / "commands"
    (commands / "git").mkdir(parents=True)
    (commands / "git" / "commit.md").write_text(
        "---\ndescription: Commit staged work\nargument-hint: <message>\n---\n"
        "Commit with message $1 (all: $ARGUMENTS) costing $$5\n"
    )
    (commands / "broken.md").write_text("---\ndescription: never closed\n")
    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        notices = [n.text for n in screen.query(NoticeBlock)]
        assert any("broken.md" in t for t in notices)
        await type_text(pilot, "/git")
        assert [i.value for i in screen.menu.items] == ["git:commit"]
        await pilot.press("enter")
        assert screen.composer.text == "/git:commit "
        await type_text(pilot, '"fix bug" now')
        await pilot.press("enter")
        await settle(pilot)
        assert services.runners[0].prompts == [
            'Commit with message fix bug (all: "fix bug" now) costing $5'
        ]
        assert screen.query(UserBlock).last().text == '/git:commit "fix bug" now'
