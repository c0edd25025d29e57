"""The multi-line prompt box: Enter sends, Shift+Enter / Ctrl+J adds a line,
Up/Down recall history when idle, and menu keys are forwarded while the
completion menu is open (the parent sets :attr:`menu_open` and :attr:`busy`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import events
from textual.message import Message
from textual.widgets import TextArea

MenuKey = Literal["up", "down", "tab", "enter"]


class Composer(TextArea):
    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: round $primary 60%;
        padding: 0 1;
        background: transparent;
        &:focus { border: round $primary; }
        & .text-area--cursor-line { background: transparent; }
    }
    """

    # Handled in ``_on_key`` rather than as priority bindings: priority bindings run
    # on the App's queue ahead of keys still queued here, so a fast "text⏎" burst
    # (a paste, tmux send-keys) would submit before the text had been inserted.
    KEY_ACTIONS: ClassVar[dict[str, str]] = {
        "enter": "action_submit",
        "shift+enter": "action_newline",
        "alt+enter": "action_newline",
        "ctrl+j": "action_newline",
        "up": "action_up",
        "down": "action_down",
        "tab": "action_tab",
    }

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class MenuKeyPressed(Message):
        def __init__(self, key: MenuKey) -> None:
            super().__init__()
            self.key: MenuKey = key

    def __init__(self, *, prompt_history: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            highlight_cursor_line=False,
            placeholder="Ask Reasonix…  (/ for commands, @ for files)",
            **kwargs,  # type: ignore[arg-type]
        )
        self.prompt_history: list[str] = prompt_history if prompt_history is not None else []
        self._history_index: int | None = None
        self._draft = ""
        self.menu_open = False
        self.busy = False

    async def _on_key(self, event: events.Key) -> None:
        action = self.KEY_ACTIONS.get(event.key)
        if action is None:
            return  # TextArea's own handler runs next (MRO dispatch)
        event.stop()
        event.prevent_default()
        getattr(self, action)()

    async def _on_paste(self, event: events.Paste) -> None:
        """A pasted (dropped) image file's path becomes an ``@`` reference, so the turn
        sends the image; any other paste is TextArea's (MRO dispatch)."""
        from reasonix_core.command.mentions import pasted_image_mention

        mention = pasted_image_mention(event.text)
        if mention is None or self.read_only:
            return
        event.prevent_default()
        event.stop()
        self.insert(mention + " ")
        self.focus()

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at the end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_submit(self) -> None:
        if self.menu_open:
            self.post_message(self.MenuKeyPressed("enter"))
            return
        text = self.text
        if not text.strip():
            return
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_index = None
        self._draft = ""
        self.clear()
        self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_tab(self) -> None:
        if self.menu_open:
            self.post_message(self.MenuKeyPressed("tab"))

    def action_up(self) -> None:
        if self.menu_open:
            self.post_message(self.MenuKeyPressed("up"))
        elif self.cursor_location[0] == 0 and not self.busy and self.prompt_history:
            self.recall(-1)
        else:
            self.action_cursor_up()

    def action_down(self) -> None:
        if self.menu_open:
            self.post_message(self.MenuKeyPressed("down"))
        elif (
            self.cursor_location[0] == self.document.line_count - 1
            and self._history_index is not None
        ):
            self.recall(+1)
        else:
            self.action_cursor_down()

    def recall(self, step: int) -> None:
        """Move through history; stepping past the newest restores the draft."""
        if self._history_index is None:
            if step > 0:
                return
            self._draft = self.text
            index = len(self.prompt_history) - 1
        else:
            index = self._history_index + step
        if index < 0:
            return
        if index >= len(self.prompt_history):
            self._history_index = None
            self.set_text(self._draft)
            return
        self._history_index = index
        self.set_text(self.prompt_history[index])
