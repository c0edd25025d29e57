"""The ``/help`` view: commands from the shared registry, then keys."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from reasonix_tui.commands import CommandRegistry, SlashCommand
from reasonix_tui.screens.overlay import Overlay
from reasonix_tui.widgets.columns import Columns, Line, Row

SHOWN_PER_SECTION = 8
HELP_MAX_ROWS = 26
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


def _detail(text: str) -> Content:
    # Styled (in the text's own colour): an SVG export then draws the indent before
    # it apart from it, as a viewer that drops leading spaces still places it right.
    return Content.styled(text, "$text")


def _section(title: str, commands: list[SlashCommand], cap: int | None) -> list[Line]:
    lines: list[Line] = [Content.styled(title, "bold $text-primary")]
    shown = commands if cap is None else commands[:cap]
    lines += [Row(Content.styled(_usage(c), "bold"), _detail(c.description)) for c in shown]
    if len(shown) < len(commands):
        more = len(commands) - len(shown)
        lines.append(Content.styled(f"  … {more} more (type / to search)", "$text-muted"))
    return lines


def help_rows(registry: CommandRegistry) -> Columns:
    """Built-ins in full; custom commands, MCP prompts and skills capped at eight each;
    then the keys. One name column for all, laid out at the width it is drawn at."""
    groups = [
        ("Commands", registry.all("builtin"), None),
        ("Custom commands", registry.all("custom"), SHOWN_PER_SECTION),
        ("MCP prompts", registry.all("mcp"), SHOWN_PER_SECTION),
        ("Skills", registry.all("skill"), SHOWN_PER_SECTION),
    ]
    sections = [_section(t, cs, cap) for t, cs, cap in groups if cs]
    keys: list[Line] = [Content.styled("Keys", "bold $text-primary")]
    keys += [Row(Content.styled(k, "bold"), _detail(v)) for k, v in KEYS]
    sections.append(keys)
    lines: list[Line] = []
    for section in sections:
        if lines:
            lines.append(Content())
        lines += section
    return Columns(lines, indent=2)


def help_content(registry: CommandRegistry, width: int = 92) -> Content:
    """The help text laid out at ``width``."""
    return help_rows(registry).content(width)


class HelpScreen(Overlay[None]):
    DEFAULT_CSS = """
    HelpScreen #help { height: auto; }
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
                yield Static(help_rows(self.registry))
            yield Static("Esc close", classes="hint")

    def on_resize(self, event: events.Resize) -> None:
        # The list scrolls inside the dialog (at most 90% of the screen); the title and
        # "Esc close" stay on screen, at 80×24 too: 8 rows are the dialog's border,
        # padding, title and hint.
        rows = min(HELP_MAX_ROWS, int(event.size.height * 0.9) - 8)
        self.query_one("#help").styles.max_height = max(3, rows)

    def action_close(self) -> None:
        self.dismiss(None)
