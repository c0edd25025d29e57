"""Base classes for modal overlays; the session screen hides its composer under them.

:class:`Overlay` centres its dialog over a dimmed screen (help, trust, ``/mcp``).
:class:`DockedOverlay` is for the moments the user decides something about the
conversation (approvals, questions, plans, pickers, ``/rewind``, ``/cache``): its
dialog sits at the bottom, full width, over the composer, and the screen behind stays
drawn, so the model's lead-in and the last diff stay in view above it. Its scrolling
part (class ``body``) is capped to a share of the terminal's height, so the choices and
the key hints under it are always on screen, at 80×24 too; when it holds more than that,
a line under it says how much ("↓ 78 more lines") and PageUp/PageDown, Shift+Up/Down and
the wheel scroll it while the choices keep the focus."""

from __future__ import annotations

from typing import ClassVar, Protocol, TypeVar, cast, runtime_checkable

from rich.cells import cell_len
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

T = TypeVar("T")

#: What the hint line says first while the keys typed go on into the composer.
TYPING_THROUGH = "typing goes to your message · Tab to answer"
#: What the hint line adds while the dialog's body holds more than it shows.
SCROLL_KEYS = "PgUp/PgDn scroll"


def fit_phrases(phrases: list[str], width: int) -> str:
    """The hint's phrases joined by " · ", a line broken only between two phrases
    (never inside "3/n/Esc deny") when the next would pass ``width``."""
    lines: list[str] = []
    line = ""
    for phrase in phrases:
        joined = f"{line} · {phrase}" if line else phrase
        if line and cell_len(joined) > width:
            lines.append(line)
            line = phrase
        else:
            line = joined
    lines.append(line)
    return "\n".join(lines)


class Overlay(ModalScreen[T]):
    """A modal overlay. The session screen hides its composer while one is open."""

    DEFAULT_CSS = """
    Overlay {
        align: center middle;
        background: $background 60%;
        & > #dialog {
            width: 90%;
            max-width: 96;
            height: auto;
            max-height: 90%;
            padding: 1 2;
            border: round $primary;
            background: $surface;
        }
        & #title { text-style: bold; color: $text-primary; margin-bottom: 1; }
        & .hint { color: $text-muted; margin-top: 1; }
        & OptionList {
            height: auto;
            max-height: 12;
            border: none;
            background: $surface;
            &:focus { border: none; }
        }
        & Input { margin-bottom: 1; }
    }
    """

    # Opened while the composer held unsent text: the keys typed next are that text's,
    # not the dialog's ("a" of "/goal" must not allow a tool for the session). They
    # go on into the composer until it is empty, or Tab hands the keys to the dialog.
    # Only dialogs the turn opens on its own (approvals, questions, plans): a picker
    # the user opened takes the keys the user types for it. Meanwhile the composer stays
    # on screen above the dialog (SessionScreen.on_screen_suspend asks typing_through)
    # and the hint line says where the keys go, so what is typed is seen.
    opens_unasked = False
    typing_through = False

    def on_mount(self) -> None:
        # Runs after the dialog's own on_mount (Textual calls the subclass first): the
        # widget it focused waits, so no filter or answer field takes the typed keys.
        self.typing_through = self.opens_unasked and bool(self._composer_text())
        if self.typing_through:
            self._held_focus = self.focused
            self.set_focus(None)
            self._show_composer(True)
            self.call_after_refresh(self.show_hint)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # A focus the dialog asked for lands later (Widget.focus is deferred): held too.
        if self.typing_through:
            self._held_focus = event.widget
            self.set_focus(None)

    def _composer(self) -> object | None:
        session = getattr(self.app, "session", None)
        return getattr(session, "composer", None)

    def _composer_text(self) -> str:
        return str(getattr(self._composer(), "text", "") or "")

    def _show_composer(self, shown: bool) -> None:
        composer = self._composer()
        if isinstance(composer, Widget):
            composer.display = shown

    def _hand_over(self) -> None:
        """The keys are the dialog's from now on."""
        self.typing_through = False
        self._show_composer(False)
        self.show_hint()
        held = getattr(self, "_held_focus", None)
        if held is not None and held.is_attached:
            self.set_focus(held)
        else:
            self.focus_next()

    async def _on_key(self, event: events.Key) -> None:
        if not self.typing_through:
            return
        if event.key == "tab" or not self._composer_text():
            self._hand_over()
            event.stop()
            event.prevent_default()
            return
        composer = self._composer()
        if event.is_printable and event.character:
            composer.insert(event.character)  # type: ignore[union-attr]
        elif event.key == "backspace":
            composer.action_delete_left()  # type: ignore[union-attr]
            if not self._composer_text():
                self._hand_over()
        elif event.key != "enter":
            return  # arrows, Esc, Ctrl+C: the dialog's own
        # Enter while text is on its way: neither sent nor a choice.
        event.stop()
        event.prevent_default()

    def blink(self) -> bool:
        return bool(getattr(self.app, "cursor_blink", True))

    # ---- the key hints: the dialog's own, and what its state adds --------
    _hint_base: list[str] | None = None  # the dialog's own phrases, once changed

    def hint_phrases(self, own: list[str]) -> list[str]:
        """The phrases the hint line shows now: the dialog's own (``own``) and what
        its state adds. A subclass adds its own state's."""
        return [TYPING_THROUGH, *own] if self.typing_through else own

    def show_hint(self) -> None:
        """Lay the hint line out again (the state it tells about, or the width, changed)."""
        hints = self.query(".hint")
        if not hints:
            return
        hint = hints.first(Static)
        if self._hint_base is None:
            content = hint.content
            own = content.plain if isinstance(content, Content) else str(content)
            phrases = own.split(" · ")
        else:
            phrases = self._hint_base
        shown = self.hint_phrases(list(phrases))
        if shown == phrases and self._hint_base is None:
            return  # as the dialog made it (a dialog may update its own hint)
        self._hint_base = phrases
        width = hint.content_region.width or max(20, self.app.size.width - 4)
        hint.update(Content(fit_phrases(shown, width)))


class DialogBox(Vertical):
    """The ``#dialog`` box of a docked dialog: when its height changes (a picker's
    list filtered or grown, a note shown), the screen below is told again."""

    def on_resize(self, event: events.Resize) -> None:
        claim = getattr(self.screen, "claim_rows", None)
        if callable(claim):
            self.call_after_refresh(claim)


@runtime_checkable
class MakesRoom(Protocol):
    """A screen that can keep its last lines above a docked dialog (the session
    screen: its transcript ends above the dialog instead of under it)."""

    def make_room(self, rows: int) -> None: ...


class KeepsTranscriptInView:
    """For a screen docked at the bottom over the session: tells the screen below
    how many rows it covers, so the transcript's last lines stay above it."""

    def on_mount(self) -> None:
        cast("Screen[object]", self).call_after_refresh(self.claim_rows)

    def on_resize(self, event: events.Resize) -> None:
        cast("Screen[object]", self).call_after_refresh(self.claim_rows)

    def claim_rows(self) -> None:
        """Tell the screen below how many rows the dialog takes (called again when
        the dialog's height may have changed)."""
        screen = cast("Screen[object]", self)
        stack = screen.app.screen_stack if screen.is_attached else []
        index = stack.index(screen) if screen in stack else 0
        below = stack[index - 1] if index > 0 else None
        if isinstance(below, MakesRoom):
            below.make_room(screen.query_one("#dialog").outer_size.height)


class DockedOverlay(KeepsTranscriptInView, Overlay[T]):
    """A dialog docked at the bottom, the transcript in view above it."""

    DEFAULT_CSS = """
    DockedOverlay {
        align: center bottom;
        background: transparent;
        & > #dialog {
            width: 100%;
            max-width: 100%;
            max-height: 100%;
            padding: 0 1;
        }
        & #title { margin-bottom: 0; }
        & .body { height: auto; margin-top: 1; }
        & .more { color: $text-muted; text-style: italic; display: none; }
        & .hint { margin-top: 0; }
        & OptionList { margin-top: 1; }
        & Input { margin: 1 0 0 0; }
        /* The "more lines" line takes the blank row above the choices. */
        & #dialog.-overflow OptionList { margin-top: 0; }
        & #dialog.-overflow .more { display: block; }
    }
    """

    # Priority: the focused choices (an OptionList) would take PageUp/PageDown to move
    # their highlight. With nothing to scroll (check_action) the keys go on to them.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pageup", "scroll_body('page_up')", "Scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_body('page_down')", "Scroll down", show=False, priority=True),
        Binding("shift+up", "scroll_body('up')", "Scroll up", show=False, priority=True),
        Binding("shift+down", "scroll_body('down')", "Scroll down", show=False, priority=True),
    ]

    #: The share of the terminal's height the scrolling part (``.body``, or the
    #: options) may take; the rest of the dialog stays on screen under it. Set in
    #: rows on each resize: a ``vh`` max-height is not honoured by the dialog's own
    #: auto height (Textual 8), which then grows to the whole screen.
    BODY_SHARE: ClassVar[float] = 0.35

    def on_mount(self) -> None:
        body = self.scrolling_part()
        if body is None:
            return
        more = Static("", classes="more", markup=False)
        body.parent.mount(more, after=body)  # type: ignore[union-attr]
        self.watch(body, "scroll_y", self._body_moved, init=False)
        self.watch(body, "virtual_size", self._body_moved, init=False)
        self.call_after_refresh(self.show_scroll_state)

    def on_resize(self, event: events.Resize) -> None:
        rows = max(3, int(event.size.height * self.BODY_SHARE))
        for widget in self.query(".body, OptionList"):
            widget.styles.max_height = rows
        self.call_after_refresh(self.show_scroll_state)

    def scrolling_part(self) -> Widget | None:
        """The part that scrolls: what is asked, the diff, the plan, the report."""
        bodies = self.query(".body")
        return bodies.first() if bodies else None

    def _overflowing_body(self) -> Widget | None:
        body = self.scrolling_part()
        return body if body is not None and body.max_scroll_y > 0 else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "scroll_body":
            return self._overflowing_body() is not None
        return True

    def action_scroll_body(self, how: str) -> None:
        body = self._overflowing_body()
        if body is None:
            return
        if how == "page_up":
            body.scroll_page_up(animate=False)
        elif how == "page_down":
            body.scroll_page_down(animate=False)
        else:
            body.scroll_relative(y=-1 if how == "up" else 1, animate=False)

    def _body_moved(self, _value: object) -> None:
        self.show_scroll_state()

    def show_scroll_state(self) -> None:
        """Say how much of the body is out of view, and the keys that scroll it."""
        body = self.scrolling_part()
        if body is None or not self.is_attached:
            return
        below = max(0, round(body.max_scroll_y - body.scroll_y))
        above = max(0, round(body.scroll_y))
        overflow = body.max_scroll_y > 0
        if overflow:
            parts = []
            if above:
                parts.append(f"↑ {above} {_lines(above)} above")
            if below:
                parts.append(f"↓ {below} more {_lines(below)}")
            self.query_one(".more", Static).update(" · ".join(parts))
        self.query_one("#dialog").set_class(overflow, "-overflow")
        self.show_hint()

    def hint_phrases(self, own: list[str]) -> list[str]:
        phrases = super().hint_phrases(own)
        if self._overflowing_body() is not None:
            phrases.append(SCROLL_KEYS)
        return phrases


def _lines(count: int) -> str:
    return "line" if count == 1 else "lines"
