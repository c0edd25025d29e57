"""The scrolling transcript; keeps at most ``max_blocks`` blocks mounted.

Blocks are grouped in :class:`TranscriptChunk` containers of ``CHUNK_BLOCKS``.
Textual lays out every displayed widget on every frame, so after each scroll
and each growth of the content, chunks far outside the viewport are *parked*:
their blocks are hidden (``display: none``, state kept) and the chunk keeps its
height; they show again when the viewport comes near. Blocks that can shed
widgets themselves (long assistant answers, see
:meth:`AssistantBlock.park_offscreen`) are told where the viewport is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from reasonix_tui.widgets.blocks import NoticeBlock
from reasonix_tui.widgets.transcript_chunk import CHUNK_BLOCKS, TranscriptChunk

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from reasonix_tui.replay import Entry
    from reasonix_tui.widgets.history import SavedHistory

MAX_BLOCKS = 400


class NewOutputMarker(Static):
    """Shown while the transcript has output below the view the user scrolled away from."""

    DEFAULT_CSS = """
    NewOutputMarker {
        display: none;
        height: 1;
        padding: 0 2;
        color: $text-accent;
        text-style: bold;
        &.-shown { display: block; }
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(
            Content("↓ new output below · Ctrl+End follows it"),
            **kwargs,  # type: ignore[arg-type]
        )

    def on_mount(self) -> None:
        transcript = self.screen.query_one(Transcript)
        def show(unseen: bool) -> None:
            self.set_class(unseen, "-shown")

        self.watch(transcript, "unseen", show)

    def on_click(self) -> None:
        self.screen.query_one(Transcript).follow()


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript {
        /* Its text lines up with the composer (margin 0 1): the scrollbar's column is
           always kept, in the composer's right margin, so nothing moves when it comes. */
        width: 100%;
        height: 1fr;
        padding: 0 0 1 1;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        & > .-trimmed { color: $text-muted; text-style: italic; }
        & TranscriptChunk > .-selected { background: $boost; outline-left: thick $accent; }
    }
    """

    can_focus = False
    BLANK = True  # see TranscriptChunk
    # Output arrived below while the user had scrolled away from the bottom.
    unseen = var(False)

    def __init__(self, *, max_blocks: int = MAX_BLOCKS, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.max_blocks = max_blocks
        self.trimmed = 0
        self._parking_scheduled = False
        # A request that came while a pass was pending: that pass may run on a layout
        # from before it, so one more pass follows it.
        self._parking_again = False
        # A pass was asked for since this screen was last laid out: one more runs
        # right after that layout (see _parking_after_layout).
        self._parking_after_layout = False
        self.history: SavedHistory | None = None  # a saved session's blocks not drawn yet
        self._reading_above = False  # the user scrolled away from the bottom
        # The content's height at the last layout: only growth can be new output (a
        # dialog opening or closing resizes the view, not the content) ...
        self._content_height = 0
        # ... and only growth at the end: the last block, its height and the number of
        # blocks, as last seen (a card expanded above the end is not new output).
        self._tail: tuple[int, int, int, int] | None = None
        self._grew_while_reading = False
        self.selected: Widget | None = None  # the block Ctrl+O acts on (Alt+Up/Down)

    @property
    def chunks(self) -> list[TranscriptChunk]:
        return [c for c in self.children if isinstance(c, TranscriptChunk)]

    @property
    def blocks(self) -> list[Widget]:
        return [block for chunk in self.chunks for block in chunk.children]

    async def add(self, block: Widget) -> Widget:
        chunks = self.chunks
        chunk = chunks[-1] if chunks else None
        if chunk is None or len(chunk.children) >= CHUNK_BLOCKS:
            chunk = TranscriptChunk()
            await self.mount(chunk)
        await chunk.mount(block)
        await self._trim()
        if not self.is_anchored:
            self.call_after_refresh(self._anchor_when_full)
        return block

    def _scroll_update(self, virtual_size: Size) -> None:
        # Called whenever the content height changes (e.g. a streaming block grew).
        super()._scroll_update(virtual_size)
        grew = virtual_size.height > self._content_height
        self._content_height = virtual_size.height
        if not self.is_anchored and virtual_size.height > self.container_size.height:
            self.call_after_refresh(self._anchor_when_full)
        if grew and self.is_anchored and self.scroll_y < self.max_scroll_y:
            # Growth while the user reads above: say so (not for older history drawn on top)
            # once laid out, if it is at the end.
            drawing = self.history is not None and self.history.drawing
            if self._reading_above and not drawing:
                self._grew_while_reading = True
        self.call_after_refresh(self._note_tail)
        # Anchored growth moves the view without calling watch_scroll_y.
        self.schedule_parking()

    def _tail_now(self) -> tuple[int, int, int, int] | None:
        chunks = self.chunks
        if not chunks or not chunks[-1].children:
            return None
        last = chunks[-1].children[-1]
        return id(last), last.outer_size.height, len(chunks), len(chunks[-1].children)

    def _note_tail(self) -> None:
        """After a layout: the end changed while the user reads above (and the content
        grew meanwhile): that is new output below."""
        tail = self._tail_now()
        if self._grew_while_reading and self._reading_above and tail != self._tail:
            self.unseen = True
        self._grew_while_reading = False
        self._tail = tail

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.schedule_parking()
        if new_value >= self.max_scroll_y:
            self._reading_above = self.unseen = False
        if new_value <= 0 and self.history is not None and self.history.pending:
            self.call_after_refresh(self._draw_earlier)

    def release_anchor(self) -> None:
        # Textual calls this when the user scrolls (wheel, keys, scrollbar).
        super().release_anchor()
        self._reading_above = True

    async def show_saved(self, entries: Sequence[Entry], now: datetime) -> None:
        """Draw a saved session (resume): the newest blocks now, older ones on scroll-up;
        the view starts at the bottom."""
        from reasonix_tui.widgets.history import SavedHistory

        self.history = SavedHistory(self, entries, now, reading_above=lambda: self.reading_above)
        await self.history.start()
        self.call_after_refresh(self._show_end)

    @property
    def reading_above(self) -> bool:
        """The user scrolled away from the bottom (and has not come back)."""
        return self._reading_above

    def _show_end(self) -> None:
        self.scroll_end(animate=False, immediate=True)
        self._anchor_when_full()
        # What parked while the blocks were laid out near the bottom renders again, even
        # if the view was already there (no scroll event to trigger it).
        self.schedule_parking()
        if self.history is not None:
            self.history.shown = True
            self.history.on_screen.set()
        if self.max_scroll_y <= 0:  # not a screenful yet: draw more of it
            self.call_after_refresh(self._draw_earlier)

    async def _draw_earlier(self) -> None:
        history = self.history
        if history is None or not history.shown or not history.pending or self.scroll_y > 0:
            return
        await history.draw_earlier()
        if self.max_scroll_y <= 0:
            self.call_after_refresh(self._draw_earlier)

    def on_resize(self) -> None:
        # A smaller or larger viewport (a docked dialog came or went, the terminal
        # resized): the end stays in view unless the user reads above, and what is
        # parked or shown follows the new viewport once the compositor has placed it.
        if not self._reading_above:
            self.call_after_refresh(self._keep_end)
        self.call_after_refresh(self.schedule_parking)

    def _keep_end(self) -> None:
        if self.max_scroll_y > 0:
            self.follow()
        elif self.is_anchored:
            # It fits again (a dialog's first, taller layout had it overflow): an
            # anchor would push the short transcript down to the dialog's edge.
            self.anchor(False)

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out, immediate=True)

    def _laid_out(self, screen: object) -> None:
        # "After the next refresh" (call_after_refresh) is the refresh of the app's top
        # screen. Under a docked dialog that is the dialog's, which may come before this
        # screen, in the background, has laid out the change the pass is for (the
        # transcript shrunk above the dialog, its view moved to the end): that pass then
        # parks the lead-in right above the dialog, on where it was a frame ago, and
        # nothing re-checks it until the dialog closes. So a pass asked for also runs
        # once this screen's own layout is done, on the regions it placed.
        if self._parking_after_layout:
            self._parking_after_layout = False
            self._park_pass()

    def schedule_parking(self) -> None:
        """Re-check what may park, once the next frame has been laid out."""
        self._parking_after_layout = True
        if not self._parking_scheduled:
            self._parking_scheduled = True
            self.call_after_refresh(self._park_offscreen)
        else:
            self._parking_again = True

    def scroll_end(self, *args: Any, **kwargs: Any) -> None:
        super().scroll_end(*args, **kwargs)
        # Re-anchoring moves the view in the compositor's next arrangement, which
        # calls no watcher (a busy machine lays that out after any pending pass).
        self.schedule_parking()

    def _park_offscreen(self) -> None:
        self._parking_scheduled = False
        if self._parking_again:
            self._parking_again = False
            self.schedule_parking()
        self._park_pass()

    def _park_pass(self) -> None:
        view = self.region
        if not view:
            return
        # Half a screen of margin either way, so that scrolling rarely meets a parked block.
        window = view.grow((view.height // 2, 0, view.height // 2, 0))
        chunks = self.chunks
        for index, chunk in enumerate(chunks):
            # The last chunk takes new blocks: it never parks.
            near = index == len(chunks) - 1 or chunk.region.overlaps(window)
            chunk.park(not near)
            if near:
                chunk.park_offscreen(window)

    def follow(self) -> None:
        """Go to the bottom and follow new output again (a prompt sent, Ctrl+End)."""
        self._reading_above = self.unseen = False
        if self.history is not None:
            self.history.cancel_home()  # a Ctrl+Home still drawing must not undo this
        if self.max_scroll_y > 0:
            self.anchor()  # its scroll_end also re-engages an anchor the user released
        else:
            self.scroll_end(animate=False, immediate=True)

    def _anchor_when_full(self) -> None:
        # Anchoring a short transcript would push it to the bottom; wait until it overflows.
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    def reveal(self, block: Widget) -> None:
        """Show ``block`` even if its chunk was parked (it parks again once far away)."""
        chunk = block.parent
        if isinstance(chunk, TranscriptChunk):
            chunk.park(False)

    def select_expandable(self, step: int) -> Widget | None:
        """Move the block selection (Alt+Up/Alt+Down) to the previous or next block
        that can show more; from no selection, Alt+Up picks the newest."""
        blocks = [b for b in self.blocks if getattr(b, "expandable", False)]
        current = self.selected
        if not blocks:
            return self.select(None)
        if current in blocks:
            index = blocks.index(current) + step
            if not 0 <= index < len(blocks):
                return current
        else:
            index = len(blocks) - 1 if step < 0 else 0
        return self.select(blocks[index])

    def select(self, block: Widget | None) -> Widget | None:
        if self.selected is not None:
            self.selected.remove_class("-selected")
        self.selected = block
        if block is not None:
            block.add_class("-selected")
            self.reveal(block)
            self.call_after_refresh(self.scroll_to_widget, block, animate=False)
        return block

    def latest_expandable(self) -> Widget | None:
        """The newest tool card that can show more (after a tool step its output is what
        the user wants, even when the model thought again since), else the newest
        finished reasoning block that can."""
        from reasonix_tui.widgets.tool_block import ToolBlock

        expandable = [b for b in reversed(self.blocks) if getattr(b, "expandable", False)]
        cards = (b for b in expandable if isinstance(b, ToolBlock))
        return next(cards, expandable[0] if expandable else None)

    async def _trim(self) -> None:
        blocks = self.blocks
        excess = len(blocks) - self.max_blocks
        if excess <= 0:
            return
        self.trimmed += excess
        doomed = set(blocks[:excess])
        for chunk in self.chunks:
            mine = [b for b in chunk.children if b in doomed]
            if len(mine) == len(chunk.children):
                await chunk.remove()
            elif mine:
                await chunk.remove_children(mine)
        marker = self.query_children(".-trimmed")
        label = f"{self.trimmed} earlier blocks hidden (still in the session)"
        if marker:
            marker.first(NoticeBlock).update(label)
        else:
            await self.mount(NoticeBlock(label, "info"), before=0)
            self.children[0].add_class("-trimmed")

    async def clear(self) -> None:
        # A new conversation (/new, /resume, a rewind): nothing of it is below the view.
        self._reading_above = self.unseen = False
        self._content_height = 0
        self._tail = None
        self._grew_while_reading = False
        self.trimmed = 0
        self.selected = None
        self.history = None
        self.anchor(False)
        await self.remove_children()
