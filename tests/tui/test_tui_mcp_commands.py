"""MCP prompts as slash commands and @server:uri resources, through the session screen."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from tui_helpers import send, session, settle, until

from reasonix_testkit.tui import ScriptedServices, text_steps
from reasonix_tui.app import ReasonixApp


@dataclass
class McpServices(ScriptedServices):
    rendered: list[tuple[str, str]] = field(default_factory=list)

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        return [("mcp__example__review", "Review a file", "<path> [focus]")]

    async def render_mcp_prompt(self, name: str, args: str) -> str:
        self.rendered.append((name, args))
        return f"Please review {args} carefully."

    async def expand_mcp_resources(self, text: str) -> tuple[str, list[str]]:
        if "@example:style://guide" in text:
            return text + '\n\n<resource uri="style://guide">Use short names.</resource>', []
        return text, []


def make(tmp_path: Path, turns) -> tuple[ReasonixApp, McpServices]:  # type: ignore[no-untyped-def]
    services = McpServices(turns=turns, workspace=tmp_path / "ws", config_home=tmp_path / "home")
    (tmp_path / "ws").mkdir(exist_ok=True)
    return ReasonixApp(services, cursor_blink=False), services


async def test_mcp_prompt_is_a_slash_command_in_the_menu_and_runs_as_a_turn(tmp_path: Path) -> None:
    app, services = make(tmp_path, [text_steps("Reviewed.")])
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("/", "m", "c", "p", "_")
        await pilot.pause()
        screen = session(pilot)
        assert screen.menu.is_open
        labels = [str(item.value) for item in screen.menu.items]
        assert any("mcp__example__review" in label for label in labels)
        await pilot.press("escape")
        screen.composer.text = ""
        await send(pilot, "/mcp__example__review src/app.py")
        await settle(pilot)
    assert services.rendered == [("mcp__example__review", "src/app.py")]
    assert services.runners[0].prompts == ["Please review src/app.py carefully."]


async def test_resource_reference_is_expanded_into_the_user_turn(tmp_path: Path) -> None:
    app, services = make(tmp_path, [text_steps("Noted.")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "follow @example:style://guide please")
        await settle(pilot)
    prompt = services.runners[0].prompts[0]
    assert prompt.startswith("follow @example:style://guide please")
    assert "Use short names." in prompt


async def test_other_agents_commands_from_the_git_root_run_in_the_tui(tmp_path: Path) -> None:
    """The TUI shares the core's loader and expander with `reasonix run`: a Claude Code
    command at the repository root, typed in a subfolder, with an @path in its body."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "explain.md").write_text(
        "---\nallowed-tools:\n  - Read\ndescription: explain a file\n---\nExplain $1: @$1\n"
    )
    sub = root / "pkg"
    sub.mkdir()
    (sub / "mod.py").write_text("X = 1\n")
    services = McpServices(turns=[text_steps("Done.")], workspace=sub, config_home=tmp_path / "h")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/explain mod.py")
        await settle(pilot)
    prompt = services.runners[0].prompts[0]
    assert prompt.startswith("Explain mod.py: @mod.py")
    assert '<file path="mod.py">\nX = 1\n' in prompt


@dataclass
class StartingMcpServices(McpServices):
    """Its one MCP server is still starting: no prompts until ``started`` is set."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    waits: int = 0

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        return super().mcp_prompts() if self.started.is_set() else []

    async def wait_mcp(self) -> bool:
        self.waits += 1
        await self.started.wait()
        return True


async def test_an_mcp_prompt_typed_while_its_server_starts_waits_for_it(tmp_path: Path) -> None:
    """Issue 30 item 11: as `reasonix run` does, not "Unknown command /mcp__…"."""
    from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock

    (tmp_path / "ws").mkdir()
    services = StartingMcpServices(
        turns=[text_steps("Reviewed.")], workspace=tmp_path / "ws", config_home=tmp_path / "h"
    )
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await send(pilot, "/mcp__example__review src/app.py")
        await until(pilot, lambda: services.waits == 1)
        assert "waiting for MCP" in screen.status.state.hint
        assert "ready" not in screen.status.render().plain  # it is waiting, not ready
        pending = [b.text for b in screen.query(UserBlock)]
        assert pending == ["/mcp__example__review src/app.py"]  # shown at once
        assert not services.rendered
        services.started.set()
        await until(pilot, lambda: bool(services.runners) and bool(services.runners[0].prompts))
        await settle(pilot)
        notices = [str(n.text) for n in screen.query(NoticeBlock)]
        shown = [b.text for b in screen.query(UserBlock)]
    assert len(shown) == 1  # the pending message gave way to the turn's: no duplicate
    assert not any("Unknown command" in n for n in notices)
    assert services.rendered == [("mcp__example__review", "src/app.py")]
    assert services.runners[0].prompts == ["Please review src/app.py carefully."]


async def test_an_unknown_mcp_prompt_still_says_so_once_the_servers_are_up(tmp_path: Path) -> None:
    from reasonix_tui.widgets.blocks import NoticeBlock

    (tmp_path / "ws").mkdir()
    services = StartingMcpServices(turns=[], workspace=tmp_path / "ws", config_home=tmp_path / "h")
    services.started.set()
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await send(pilot, "/mcp__example__nope")
        await until(
            pilot, lambda: any("Unknown command" in str(n.text) for n in screen.query(NoticeBlock))
        )
