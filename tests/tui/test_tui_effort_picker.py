"""``/effort`` alone opens a picker of the model's levels, one name each (issue 30
item 5: not three names for "off"); ``/effort LEVEL`` still sets one, aliases too.
Over the real engine against the loopback fixture (DeepSeek's protocol)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from reasonix_testkit import Reply
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.widgets.blocks import NoticeBlock
from tests.conftest import write_config
from tests.tui.tui_helpers import send, session, type_text, until

SIZE = (100, 32)


def app_for(workspace: Path, home: Path) -> ReasonixApp:
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    return ReasonixApp(services, cursor_blink=False)


async def command(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    """Typed as a user does: the completion menu closed (Esc), then Enter."""
    await type_text(pilot, text)
    await pilot.press("escape", "enter")


def options(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    listed = pilot.app.screen.query_one(OptionList)
    return [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]


def notices(screen) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(n.text) for n in screen.query(NoticeBlock)]


async def test_effort_alone_picks_from_one_name_per_level(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.enqueue(Reply(content="thought hard"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        await command(pilot, "/effort")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen), 30)
        shown = options(pilot)
        names = [line.split()[1] if line.startswith("●") else line.split()[0] for line in shown]
        assert names == ["auto", "off", "low", "high", "max"]
        assert [line for line in shown if line.startswith("●")] == [
            next(line for line in shown if "auto" in line)
        ]
        assert not any(word in " ".join(names) for word in ("disabled", "none"))
        assert "also: medium, xhigh" in next(line for line in shown if " high" in line)
        await pilot.press("down", "down", "down", "down", "enter")  # max
        await until(pilot, lambda: pilot.app.screen is screen, 30)
        await until(pilot, lambda: screen.runner.effort == "max", 30)
        assert "Reasoning effort set to max." in notices(screen)
        await send(pilot, "go")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
    body = configured.requests[0].json
    assert body["reasoning_effort"] == "max" and body["thinking"] == {"type": "enabled"}


async def test_a_typed_alias_still_sets_its_level_and_the_picker_marks_it(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.enqueue(Reply(content="no thinking"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        await command(pilot, "/effort disabled")
        await until(pilot, lambda: "Reasoning effort set to disabled." in notices(screen), 30)
        await command(pilot, "/effort")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen), 30)
        (marked,) = [line for line in options(pilot) if line.startswith("●")]
        assert marked.split()[1] == "off"
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen, 30)
        assert screen.runner.effort == "disabled"  # Esc changes nothing
        await send(pilot, "hi")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
    assert configured.requests[0].json["thinking"] == {"type": "disabled"}


async def test_openai_protocol_lists_no_off_it_would_not_send(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    write_config(home, configured.base_url, protocol="openai")
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        await command(pilot, "/effort")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen), 30)
        names = [line.lstrip("● ").split()[0] for line in options(pilot)]
        assert names == ["auto", "minimal", "low", "medium", "high"]


async def test_a_model_without_effort_says_so_in_one_line(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    write_config(home, configured.base_url, protocol="none")
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        await command(pilot, "/effort")
        said = "deepseek-flash has no reasoning-effort setting here: none is sent."
        await until(pilot, lambda: said in notices(screen), 30)
        assert pilot.app.screen is screen
