"""The multi-line prompt box: Enter sends, Shift+Enter / Ctrl+J adds a line,
Up/Down recall history when idle, and menu keys are forwarded while the
completion menu is open (the parent sets :attr:`menu_open` and :attr:`busy`).

Ctrl+V attaches the system clipboard's image (terminals never paste image bytes)
as an ``[Image #N]`` chip: the chip's text stays in the prompt, and the turn sends
the images whose chips it still holds (:meth:`Composer.images_in`), so deleting a
chip (Backspace takes it whole) removes its image.

A large paste collapses the same way, to a ``[Pasted text #N +K lines]`` chip that
keeps the pasted text behind it (reasonix_tui/pasted_text.py); the composer's
prompt (:meth:`Composer.prompt`) is a :class:`PromptText` that sends it whole."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar, Literal

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from reasonix_tui.pasted_text import CHIP as PASTE_CHIP
from reasonix_tui.pasted_text import PromptText, chip_label, collapses, normalise

if TYPE_CHECKING:
    from reasonix_core.images import ImagePart

MenuKey = Literal["up", "down", "tab", "enter"]

CHIP = re.compile(r"\[Image #(\d+)\]")


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

    class PasteProblem(Message):
        """Ctrl+V found no image to attach (and nothing else to paste): why, in one line."""

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
        # Clipboard images attached this session, by chip number (kept after a send,
        # so a recalled or queued prompt still finds its images).
        self.images: dict[int, ImagePart] = {}
        # Large pastes of the prompt being written, by chip number (numbered per prompt).
        self.pastes: dict[int, str] = {}

    async def _on_key(self, event: events.Key) -> None:
        if (
            (event.key == "backspace" and self._delete_chip_before_cursor())
            or (event.key == "delete" and self._delete_paste_chip_after_cursor())
            or (event.key in ("left", "right") and self._step_over_chip(event.key))
        ):
            event.stop()
            event.prevent_default()
            return
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

        if self.read_only:
            return
        mention = pasted_image_mention(event.text)
        if mention is not None:
            event.prevent_default()
            event.stop()
            self.insert(mention + " ")
            self.focus()
        elif self._insert_collapsed(event.text):
            event.prevent_default()
            event.stop()

    def _insert_collapsed(self, pasted: str) -> bool:
        """A large paste goes in as its chip (the text kept behind it); False for a
        small one, which TextArea inserts as it is."""
        text = normalise(pasted)
        if not collapses(text):
            return False
        # Never a number this prompt used: an undone deletion brings back its own paste.
        number = max(self.pastes, default=0) + 1
        self.pastes[number] = text
        self.insert(chip_label(number, text))
        self.focus()
        return True

    def _paste_chips(self, text: str) -> list[tuple[int, re.Match[str]]]:
        """The chips in ``text`` that stand for one of this prompt's pastes."""
        chips: list[tuple[int, re.Match[str]]] = []
        for match in PASTE_CHIP.finditer(text):
            number = int(match.group(1))
            pasted = self.pastes.get(number)
            if pasted is not None and match.group(0) == chip_label(number, pasted):
                chips.append((number, match))
        return chips

    def _step_over_chip(self, key: str) -> bool:
        """Left/Right at a paste's chip jump over it whole, so the cursor never rests
        inside one (typing there would break it)."""
        if not self.pastes or self.selection.start != self.selection.end:
            return False
        row, column = self.cursor_location
        for _, chip in self._paste_chips(self.document.get_line(row)):
            if key == "left" and column == chip.end():
                self.move_cursor((row, chip.start()))
                return True
            if key == "right" and column == chip.start():
                self.move_cursor((row, chip.end()))
                return True
        return False

    def prompt(self) -> PromptText:
        """The text as shown, with the pastes its chips stand for."""
        text = self.text
        return PromptText(text, {n: self.pastes[n] for n, _ in self._paste_chips(text)})

    def action_paste(self) -> None:
        """Ctrl+V: attach the clipboard's image; without one, TextArea's own paste
        (the app's clipboard) when it holds text, else say what is missing."""
        if self.read_only:
            return
        self.run_worker(self._paste_image(), group="clipboard-image", exclusive=True)

    async def _paste_image(self) -> None:
        from reasonix_tui.clipboard_image import ClipboardImageError, read_clipboard_image

        number = max(self.images, default=0) + 1
        try:
            image = await read_clipboard_image(f"Image #{number}")
        except ClipboardImageError as exc:
            if self.app.clipboard:
                if not self._insert_collapsed(self.app.clipboard):
                    super().action_paste()
            else:
                self.post_message(self.PasteProblem(f"Ctrl+V: {exc}"))
            return
        self.images[number] = image
        self.insert(f"[Image #{number}] ")
        self.focus()

    def images_in(self, text: str) -> tuple[ImagePart, ...]:
        """The attached images whose chips ``text`` holds, in order, each once."""
        numbers = dict.fromkeys(int(m.group(1)) for m in CHIP.finditer(text))
        return tuple(self.images[n] for n in numbers if n in self.images)

    def _delete_chip_before_cursor(self) -> bool:
        """Backspace right after an attached image's chip or a paste's chip (inside
        a paste's chip too) deletes the whole chip."""
        if self.selection.start != self.selection.end:
            return False
        row, column = self.cursor_location
        line = self.document.get_line(row)
        for _, chip in self._paste_chips(line):
            if chip.start() < column <= chip.end():
                self.delete((row, chip.start()), (row, chip.end()))
                return True
        before = line[:column]
        match = re.search(r"\[Image #(\d+)\] ?$", before)
        if match is None or int(match.group(1)) not in self.images:
            return False
        self.delete((row, column - len(match.group(0))), (row, column))
        return True

    def _delete_paste_chip_after_cursor(self) -> bool:
        """Delete right before (or inside) a paste's chip deletes the whole chip."""
        if self.selection.start != self.selection.end:
            return False
        row, column = self.cursor_location
        for _, chip in self._paste_chips(self.document.get_line(row)):
            if chip.start() <= column < chip.end():
                self.delete((row, chip.start()), (row, chip.end()))
                return True
        return False

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at the end; a :class:`PromptText`
        (a recalled prompt) brings its pastes, so its chips still send them."""
        if isinstance(text, PromptText):
            self.pastes = dict(text.pastes)
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_submit(self) -> None:
        if self.menu_open:
            self.post_message(self.MenuKeyPressed("enter"))
            return
        text = self.prompt()
        if not text.strip():
            return
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        elif text.pastes:  # the same shown text: the newest pastes are what it sends
            self.prompt_history[-1] = text
        self._history_index = None
        self._draft = ""
        self.clear()
        self.pastes = {}  # chips are numbered per prompt
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
            self._draft = self.prompt()
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
