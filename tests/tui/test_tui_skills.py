"""``/<skill>`` in the terminal app: the menu lists skills, a skill's body is the
turn, problems with skill files are notices, and a skill never shadows a command."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import session, settle, type_text

from reasonix_core.skills import load_catalog
from reasonix_testkit.tui import text_steps
from reasonix_tui.screens.help import HelpScreen, help_content
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from tests.core.test_skills import skill_md, write_skill


def skills_in(tmp_path: Path) -> Path:
    return tmp_path / "ws" / ".reasonix" / "skills"


def catalog(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_catalog(tmp_path / "ws", tmp_path / "home" / ".reasonix", tmp_path / "user")


async def test_slash_skill_is_in_the_menu_and_sends_its_body(make_app, tmp_path: Path) -> None:
    root = skills_in(tmp_path)
    write_skill(
        root,
        "review-pr",
        skill_md("review-pr", "Review a pull request", body="Review PR $1 ($ARGUMENTS)."),
    )
    write_skill(root, "broken", "---\nname: broken\ndescription: x\nread-only: perhaps\n---\nb\n")
    app, services = make_app([text_steps("reviewed")], skills=catalog(tmp_path))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        notices = [n.text for n in screen.query(NoticeBlock)]
        assert any("broken/SKILL.md: line 4: read-only must be true or false" in t for t in notices)
        await type_text(pilot, "/review")
        assert [i.value for i in screen.menu.items] == ["review-pr"]
        assert screen.menu.items[0].detail == "Review a pull request"
        await pilot.press("tab")
        assert screen.composer.text == "/review-pr "
        await type_text(pilot, "42 quickly")
        await pilot.press("enter")
        await settle(pilot)
        assert services.runners[0].prompts == ["Review PR 42 (42 quickly)."]
        assert screen.query(UserBlock).last().text == "/review-pr 42 quickly"


async def test_a_skill_edited_after_start_sends_its_new_body(make_app, tmp_path: Path) -> None:
    root = skills_in(tmp_path)
    write_skill(root, "note", skill_md("note", "Take a note", body="Old."))
    app, services = make_app([text_steps("ok")], skills=catalog(tmp_path))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        write_skill(root, "note", skill_md("note", "Take a note", body="New: $ARGUMENTS"))
        await screen.handle_input("/note milk")
        await settle(pilot)
        assert services.runners[0].prompts == ["New: milk"]
        (root / "note" / "SKILL.md").unlink()
        await screen.handle_input("/note again")
        await settle(pilot)
        assert any("cannot be used" in n.text for n in screen.query(NoticeBlock))
        assert services.runners[0].prompts == ["New: milk"]


async def test_a_skill_never_shadows_a_command(make_app, tmp_path: Path) -> None:
    root = skills_in(tmp_path)
    write_skill(root, "help", skill_md("help", "A skill called help"))
    write_skill(root, "deploy", skill_md("deploy", "Ship it"))
    commands = tmp_path / "ws" / ".reasonix" / "commands"
    commands.mkdir(parents=True)
    (commands / "deploy.md").write_text("Custom deploy $ARGUMENTS\n")
    app, services = make_app([text_steps("ok")], skills=catalog(tmp_path))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await screen.handle_input("/deploy now")
        await settle(pilot)
        assert services.runners[0].prompts == ["Custom deploy now"]
        assert screen.registry.get("deploy").kind == "custom"
        assert screen.registry.get("help").kind == "builtin"
        await screen.handle_input("/help")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_help_has_a_skills_section(make_app, tmp_path: Path) -> None:
    write_skill(skills_in(tmp_path), "lint-all", skill_md("lint-all", "Lint everything"))
    app, _ = make_app(skills=catalog(tmp_path))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        screen._refresh_mcp_commands()
        shown = help_content(screen.registry).plain
        assert "Skills\n  /lint-all" in shown and "Lint everything" in shown


async def test_skills_arrive_with_the_deferred_services(tmp_path: Path) -> None:
    """The real start-up path: the first frame has no skills; once the services are
    built, the skills' notices appear and /<skill> works."""
    from test_tui_startup import Gate, deferred, scripted, wait_until

    from reasonix_tui.app import ReasonixApp

    root = skills_in(tmp_path)
    write_skill(root, "tidy", skill_md("tidy", "Tidy up", body="Tidy $ARGUMENTS."))
    write_skill(root, "bad", "---\nname: BAD\ndescription: x\n---\nbody\n")
    real = scripted(tmp_path, [text_steps("tidied")], skills=catalog(tmp_path))
    gate = Gate(lambda: real)
    services = deferred(tmp_path, gate)
    assert services.skills is None  # a placeholder until the services are built
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        assert not any("SKILL.md" in n.text for n in screen.query(NoticeBlock))
        gate.open()
        await wait_until(pilot, lambda: services.is_ready)
        await wait_until(
            pilot, lambda: any("invalid skill name" in n.text for n in screen.query(NoticeBlock))
        )
        await screen.handle_input("/tidy src")
        await settle(pilot)
        assert real.runners[0].prompts == ["Tidy src."]
        notices = [n.text for n in screen.query(NoticeBlock) if "SKILL.md" in n.text]
        assert len(notices) == 1  # announced once
