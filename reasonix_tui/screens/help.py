"""The ``/help`` view: commands from the shared registry, then keys."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from reasonix_tui.commands import CommandRegistry, SlashCommand
from reasonix_tui.screens.overlay import Overlay

SHOWN_PER_SECTION = 8
KEYS = (
    ("Enter", "send (queues a follow-up while a turn runs)"),
    ("Alt+Enter / Ctrl+J", "new line; Shift+Enter too in kitty-protocol terminals"),
    ("Up / Down", "prompt history when idle (Ctrl+R searches it)"),
    ("PgUp / PgDn", "scroll the transcript a page (Ctrl+Up/Down: a line)"),
    ("Ctrl+Home / Ctrl+End", "transcript top / bottom, following new output again"),
    ("Home / End", "the same, while the prompt is empty"),
    ("Esc", "close menu / cancel the turn (queued prompts return to the prompt box)"),
    ("Esc Esc", "rewind (on an empty composer)"),
    ("Ctrl+C", "cancel turn, then clear input, then quit (press twice)"),
    ("Ctrl+D", "quit (press twice when the prompt has text)"),
    ("Shift+Tab", "cycle permission mode"),
    ("Ctrl+O", "expand / collapse the selected (else latest) reasoning or tool output"),
    ("Alt+Up / Alt+Down", "select an earlier / later block for Ctrl+O"),
    ("/  @", "command menu / file reference menu"),
)


def _usage(command: SlashCommand) -> str:
    hint = f" {command.argument_hint}" if command.argument_hint else ""
    return f"/{command.name}{hint}"


def _section(title: str, commands: list[SlashCommand], width: int, cap: int | None) -> Content:
    lines = [Content.styled(title, "bold $text-primary")]
    shown = commands if cap is None else commands[:cap]
    for command in shown:
        lines.append(
            Content.assemble(("  " + _usage(command).ljust(width), "bold"), command.description)
        )
    if len(shown) < len(commands):
        more = len(commands) - len(shown)
        lines.append(Content.styled(f"  … {more} more (type / to search)", "$text-muted"))
    return Content("\n").join(lines)


def help_content(registry: CommandRegistry) -> Content:
    """Built-ins in full; custom commands, MCP prompts and skills capped at eight each."""
    groups = [
        ("Commands", registry.all("builtin"), None),
        ("Custom commands", registry.all("custom"), SHOWN_PER_SECTION),
        ("MCP prompts", registry.all("mcp"), SHOWN_PER_SECTION),
        ("Skills", registry.all("skill"), SHOWN_PER_SECTION),
    ]
    width = (
        max(
            [len(_usage(c)) for _, commands, _ in groups for c in commands]
            + [len(k) for k, _ in KEYS]
        )
        + 3
    )
    sections = [_section(t, cs, width, cap) for t, cs, cap in groups if cs]
    keys = [Content.styled("Keys", "bold $text-primary")]
    keys += [Content.assemble(("  " + k.ljust(width), "bold"), v) for k, v in KEYS]
    sections.append(Content("\n").join(keys))
    return Content("\n\n").join(sections)


class HelpScreen(Overlay[None]):
    DEFAULT_CSS = """
    HelpScreen #help { height: auto; max-height: 26; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "close", "Close", show=False)
    ]

    def __init__(self, registry: CommandRegistry) -> None:
        super().__init__()
        self.registry = registry

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Reasonix help", id="title")
            with VerticalScroll(id="help"):
                yield Static(help_content(self.registry))
            yield Static("Esc close", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)
