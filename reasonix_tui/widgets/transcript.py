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

from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.widget import Widget

from reasonix_tui.widgets.blocks import NoticeBlock

MAX_BLOCKS = 400
CHUNK_BLOCKS = 20


class TranscriptChunk(Widget):
    """Consecutive transcript blocks. Blocks have top margins only, so the gaps are
    the same across chunk boundaries (margins collapse only between siblings)."""

    DEFAULT_CSS = """
    TranscriptChunk {
        height: auto;
        layout: vertical;
        &.-parked > * { display: none; }
    }
    """

    # Nothing of its own to paint: without this Textual renders (and the garbage
    # collector then scans) a blank strip for every line of the chunk's height.
    BLANK = True

    def __init__(self) -> None:
        super().__init__()
        self.parked = False

    def park(self, parked: bool) -> None:
        if parked == self.parked:
            return
        height = self.size.height
        if parked and not height:
            return
        self.parked = parked
        self.styles.height = height if parked else None
        self.set_class(parked, "-parked")

    def park_offscreen(self, window: Region) -> None:
        for block in self.children:
            park = getattr(block, "park_offscreen", None)
            if park is not None:
                park(window)


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
        & > .-trimmed { color: $text-muted; text-style: italic; }
    }
    """

    can_focus = False
    BLANK = True  # see TranscriptChunk

    def __init__(self, *, max_blocks: int = MAX_BLOCKS, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.max_blocks = max_blocks
        self.trimmed = 0
        self._parking_scheduled = False

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
        if not self.is_anchored and virtual_size.height > self.container_size.height:
            self.call_after_refresh(self._anchor_when_full)
        # Anchored growth moves the view without calling watch_scroll_y.
        self.schedule_parking()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.schedule_parking()

    def schedule_parking(self) -> None:
        """Re-check what may park, once the next frame has been laid out."""
        if not self._parking_scheduled:
            self._parking_scheduled = True
            self.call_after_refresh(self._park_offscreen)

    def _park_offscreen(self) -> None:
        self._parking_scheduled = False
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

    def _anchor_when_full(self) -> None:
        # Anchoring a short transcript would push it to the bottom; wait until it overflows.
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    def reveal(self, block: Widget) -> None:
        """Show ``block`` even if its chunk was parked (it parks again once far away)."""
        chunk = block.parent
        if isinstance(chunk, TranscriptChunk):
            chunk.park(False)

    def latest_expandable(self) -> Widget | None:
        """The newest block that can show more (a finished reasoning block or tool card)."""
        for block in reversed(self.blocks):
            if getattr(block, "expandable", False):
                return block
        return None

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
        self.trimmed = 0
        self.anchor(False)
        await self.remove_children()
