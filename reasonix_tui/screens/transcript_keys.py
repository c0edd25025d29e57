# pyright: reportGeneralTypeIssues=false
# (until the mixins stop annotating self as SessionScreen, issue 24 item 6)
"""Scrolling the transcript from the keyboard while the composer keeps the focus.

PageUp/PageDown scroll a page and Ctrl+Up/Ctrl+Down a line, always (the
composer is at most ten lines, so it does not need them); Ctrl+Home/Ctrl+End
go to the top/bottom. Home/End and Shift+Up/Shift+Down scroll the transcript
only while the composer is empty: with text in it they keep their editing
meaning (line start/end, extend the selection). Going to the bottom follows
the output again (reaching it by scrolling does too: Textual re-anchors). The bindings live on :class:`SessionScreen`; a key whose
action does not apply falls through to the composer (``check_action``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_tui.screens.session_host import SessionHost

# Keys that move the transcript only while the composer is empty.
WHEN_EMPTY = frozenset({"scroll_home", "scroll_end", "scroll_line_up", "scroll_line_down"})


class TranscriptKeys:
    """``action_scroll_*`` for :class:`SessionScreen` (a mixin)."""

    def check_action(self: SessionHost, action: str, parameters: tuple[object, ...]) -> bool:
        if action in WHEN_EMPTY and parameters == ("if_empty",):
            return not self.composer.text and not self.menu.is_open
        return True

    def action_scroll_page(self: SessionHost, direction: int) -> None:
        transcript = self.transcript
        page = transcript.scrollable_content_region.height
        # immediate: a key pressed next (End after Home) must see this one done.
        transcript.scroll_to(
            y=transcript.scroll_y + direction * page, animate=False, immediate=True
        )

    def action_scroll_line_up(self: SessionHost, when: str = "") -> None:
        self.transcript.scroll_up(animate=False, immediate=True)

    def action_scroll_line_down(self: SessionHost, when: str = "") -> None:
        self.transcript.scroll_down(animate=False, immediate=True)

    def action_scroll_home(self: SessionHost, when: str = "") -> None:
        transcript = self.transcript
        history = transcript.history
        if history is None or not history.pending:
            transcript.scroll_home(animate=False, immediate=True)
        else:
            # The top of the session, not of what is drawn: the rest of a resumed
            # session in one go (the view goes to the top once it is laid out).
            transcript.call_later(history.draw_earlier, everything=True)

    def action_scroll_end(self: SessionHost, when: str = "") -> None:
        self.transcript.follow()
