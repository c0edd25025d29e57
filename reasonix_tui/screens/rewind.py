"""``/rewind`` (and Esc Esc on an empty composer): pick a turn, see what a code
rewind would change, then choose code, conversation, both or fork.

The turn picker is the shared :class:`PickerScreen`; :class:`RewindScreen` is
the second step. :func:`open_rewind` runs the flow for the session screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from reasonix_core.errors import ReasonixError
from reasonix_tui.format import exact_line, one_line
from reasonix_tui.screens.overlay import DialogBox, DockedOverlay
from reasonix_tui.screens.picker import PickerItem, PickerScreen
from reasonix_tui.services import RewindPreview, RewindTurn
from reasonix_tui.widgets.diff_view import render_diff

if TYPE_CHECKING:
    from reasonix_tui.screens.session_host import SessionHost

#: (scope, label) in the order shown; the scope is what ``SessionHandle.rewind`` takes.
CHOICES: tuple[tuple[str, str], ...] = (
    ("code", "Code: put the files back to the start of this turn"),
    ("chat", "Conversation: continue from just before this turn"),
    ("both", "Both: code and conversation"),
    ("fork", "Fork: a new session from just before this turn"),
)
_PREVIEW_LINES = 400
_HEAD = 48
_TITLE = 200


class RewindScreen(DockedOverlay[str | None]):
    """The second step: a turn's diff preview and the four choices."""

    DEFAULT_CSS = """
    RewindScreen {
        & #preview { background: $surface; }
        & #conflicts { color: $text-warning; margin-top: 1; }
        & #note { color: $text-muted; margin-top: 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=False),
    ]

    def __init__(self, turn: RewindTurn, preview: RewindPreview) -> None:
        super().__init__()
        self.turn = turn
        self.preview = preview

    def compose(self) -> ComposeResult:
        with DialogBox(id="dialog"):
            head = one_line(self.turn.head, _TITLE)
            yield Static(f"Rewind to turn {self.turn.number}: {head}", id="title", markup=False)
            if self.preview.conflicts:
                # Names of files the model may have made: one line each, inert.
                shown = ", ".join(exact_line(path) for path in self.preview.conflicts)
                yield Static(
                    f"Changed outside Reasonix since the last checkpoint: {shown}. "
                    "A code rewind overwrites them.",
                    id="conflicts",
                    markup=False,
                )
            if self.preview.diff:
                with VerticalScroll(id="preview", classes="body"):
                    yield Static(render_diff(self.preview.diff, _PREVIEW_LINES))
            else:
                from reasonix_core.permission.summary import visible  # off the first frame

                note = visible(self.preview.note) or "No file changes to put back."
                yield Static(note, id="note", markup=False)
            # Nothing to put back: no code choices (a "both" would be a chat rewind).
            offered = [c for c in CHOICES if self.preview.diff or c[0] not in ("code", "both")]
            yield OptionList(*(Option(label, id=scope) for scope, label in offered), id="choices")
            yield Static("↑↓ move · Enter choose · Esc close", classes="hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)


def turn_items(turns: list[RewindTurn]) -> list[PickerItem]:
    """Newest first; the detail says when, and how many files the turn changed."""
    items = []
    for turn in reversed(turns):
        count = len(turn.files)
        changed = f"{count} file{'s' * (count != 1)}" if count else "no edits"
        # A prompt can come from a project's command file: one row per turn, inert.
        head = one_line(turn.head, _HEAD)
        items.append(
            PickerItem(
                value=str(turn.number),
                label=f"{turn.number:>3}  {head}",
                detail=f"{turn.time[11:16]} · {changed}".strip(" ·"),
            )
        )
    return items


def open_rewind(screen: SessionHost) -> None:
    """The whole flow: turn picker -> preview and choice -> rewind -> notice (and,
    after a chat rewind or a fork, continue in that session)."""
    session = screen.runner
    try:
        turns = {t.number: t for t in session.rewind_turns()}
    except ValueError as exc:
        screen.notify(f"Rewind is not available: {exc}", severity="error")
        return

    async def chosen(number: int, scope: str | None) -> None:
        if scope is None:
            return
        try:
            await session.open()  # a resumed session may not be open yet
            done = session.rewind(number, scope, force=True)
        except (ValueError, ReasonixError) as exc:
            await screen.notice(f"Rewind failed: {exc}", "error")
            return
        if done.resume_id is None:
            await screen.notice(done.message)
        elif await screen.continue_session(done.resume_id):
            # Switching sessions cleared the transcript: redraw what was kept.
            screen.show_saved_session(rewound_text(done.message, number, scope))

    async def picked(value: str | None) -> None:
        if not value:
            return
        number = int(value)
        preview = session.rewind_preview(number)

        async def answer(scope: str | None) -> None:
            await chosen(number, scope)

        screen.app.push_screen(RewindScreen(turns[number], preview), answer)

    screen.app.push_screen(
        PickerScreen(
            "Rewind to the start of a turn", turn_items(list(turns.values())), empty="No turns yet."
        ),
        picked,
    )


def rewound_text(message: str, turn: int, scope: str) -> str:
    """The notice after a rewind that continues in a branched session, in plain
    words (the core's report speaks the CLI's ``chat:``/``-c`` language)."""
    if scope == "fork":
        return f"Forked the conversation from before turn {turn}; files unchanged."
    if scope == "chat":
        return f"Rewound the conversation to before turn {turn}; files unchanged."
    code = [line for line in message.splitlines() if not line.startswith("chat:")]
    return "\n".join([f"Rewound the conversation to before turn {turn}.", *code])
