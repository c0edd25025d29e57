"""The scrolling transcript; keeps at most ``max_blocks`` widgets mounted.

Blocks that can shed widgets while far from the viewport (long assistant
answers, see :meth:`AssistantBlock.park_offscreen`) are told where the viewport
is after it scrolls.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget

from reasonix_tui.widgets.blocks import NoticeBlock

MAX_BLOCKS = 400


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

    def __init__(self, *, max_blocks: int = MAX_BLOCKS, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.max_blocks = max_blocks
        self.trimmed = 0
        self._parking_scheduled = False

    async def add(self, block: Widget) -> Widget:
        await self.mount(block)
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
        """Re-check which blocks may park, once the next frame has been laid out."""
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
        for block in self.children:
            park = getattr(block, "park_offscreen", None)
            if park is not None:
                park(window)

    def _anchor_when_full(self) -> None:
        # Anchoring a short transcript would push it to the bottom; wait until it overflows.
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    @property
    def blocks(self) -> list[Widget]:
        return [c for c in self.children if not c.has_class("-trimmed")]

    def latest_expandable(self) -> Widget | None:
        """The newest block that can show more (a finished reasoning block or tool card)."""
        for block in reversed(self.children):
            if getattr(block, "expandable", False):
                return block
        return None

    async def _trim(self) -> None:
        blocks = self.blocks
        excess = len(blocks) - self.max_blocks
        if excess <= 0:
            return
        self.trimmed += excess
        await self.remove_children(blocks[:excess])
        marker = self.query(".-trimmed")
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
