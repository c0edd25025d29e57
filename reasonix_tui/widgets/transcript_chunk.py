"""A run of consecutive transcript blocks, the unit the transcript parks off screen.

Its own module so the saved-history drawer (:mod:`reasonix_tui.widgets.history`)
builds chunks without importing the transcript that owns it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

if TYPE_CHECKING:
    from textual.geometry import Region

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

    @staticmethod
    def split(blocks: int) -> list[int]:
        """Chunk sizes for ``blocks`` blocks drawn at once (a saved session)."""
        return [min(CHUNK_BLOCKS, blocks - start) for start in range(0, blocks, CHUNK_BLOCKS)]

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
