"""Assistant text: streamed Markdown, batched, in bounded segments.

Textual's ``Markdown`` widget lays out every block it holds each time it grows,
and every widget adds a few hundred objects for the garbage collector to scan,
so one widget for a long answer gets slower with every fragment (a
20,000-token answer stalled the event loop for seconds). The answer is
therefore a column of :class:`AnswerSegment` widgets:

- only the last segment grows; once it holds more than ``SEGMENT_BLOCKS``
  top-level blocks, the trailing blocks move to a new segment and the old one
  is final;
- a final segment far from the viewport is *parked*: its block widgets are
  removed, it keeps its height, and it is rebuilt from its Markdown when it
  comes near again (the transcript checks on scroll);
- fragments are coalesced and handed over at most once per ``FLUSH_SECONDS``,
  in pieces of about ``APPEND_CHARS``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import suppress

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock

log = logging.getLogger(__name__)

SEGMENT_BLOCKS = 16
APPEND_CHARS = 384
FLUSH_SECONDS = 0.02


def _first_piece(text: str, size: int) -> str:
    """The start of ``text`` up to a newline, about ``size`` characters (all if shorter)."""
    if len(text) <= size:
        return text
    cut = text.rfind("\n", 0, size)
    if cut < 0:
        cut = text.find("\n", size)
    return text if cut < 0 else text[: cut + 1]


class AnswerSegment(Markdown):
    """A run of consecutive top-level blocks of one answer."""

    DEFAULT_CSS = """
    AnswerSegment {
        height: auto;
        margin: 0;
        padding: 0;
        background: transparent;
    }
    """
    # Only its blocks paint. Without this Textual renders a blank strip (about ten
    # objects for the garbage collector) for every line of the segment's height,
    # anew each time it grows.
    BLANK = True

    def __init__(self) -> None:
        super().__init__()
        self.final_source: str | None = None  # set once the segment no longer grows
        self.is_tail = True  # the answer's last segment: its last block has no bottom margin
        self.parked = False
        self._want_parked = False
        self._parking: asyncio.Task[None] | None = None
        self._tail_block: Widget | None = None

    @property
    def markdown(self) -> str:
        return self.final_source if self.final_source is not None else self.source

    def mark_tail(self) -> None:
        """Only the answer's very last block loses its bottom margin (a class, not
        ``:last-child``, which would restyle every sibling on each mount)."""
        last = self.children[-1] if self.is_tail and self.children else None
        if last is self._tail_block:
            return
        if self._tail_block is not None:
            self._tail_block.remove_class("-tail")
        if last is not None:
            last.add_class("-tail")
        self._tail_block = last

    def set_parked(self, parked: bool) -> None:
        """Ask for the segment to be parked or rebuilt (done in the background)."""
        if self.final_source is None:
            return
        self._want_parked = parked
        if self._parking is None and parked != self.parked:
            self._parking = asyncio.create_task(self._reconcile())

    async def _reconcile(self) -> None:
        try:
            while self.parked != self._want_parked and self.is_attached:
                if self._want_parked:
                    height = self.size.height
                    if not height:
                        break
                    self.styles.height = height
                    await self.remove_children()
                    self._release_removed()
                    self.parked = True
                else:
                    await self.update(self.final_source or "")
                    self.styles.height = None  # back to auto, now that the blocks are there
                    self.parked = False
                    self.mark_tail()
        except Exception:  # the segment went away meanwhile
            log.debug("parking a segment failed", exc_info=True)
        finally:
            self._parking = None

    def _release_removed(self) -> None:
        """Drop Textual's cached references to removed children, or they stay alive
        (the displayed-children lists and the arrangement cache outlive a removal)."""
        self._tail_block = None
        _ = self.displayed_children, self.displayed_and_visible_children
        self._clear_arrangement_cache()

    def on_unmount(self) -> None:
        if self._parking is not None:
            self._parking.cancel()


class AssistantBlock(Widget):
    DEFAULT_CSS = """
    AssistantBlock {
        height: auto;
        layout: vertical;
        margin: 1 0 0 0;
        padding: 0 1;
        & > AnswerSegment > MarkdownBlock.-tail { margin-bottom: 0; }
    }
    """
    BLANK = True  # padding only; see AnswerSegment

    def __init__(self) -> None:
        super().__init__()
        self.text = ""  # everything written so far
        self._segment: AnswerSegment | None = None  # the one that grows
        self._queued: list[str] = []
        self._wake = asyncio.Event()
        self._finished = asyncio.Event()
        self._updater: asyncio.Task[None] | None = None

    @property
    def segments(self) -> list[AnswerSegment]:
        return [c for c in self.children if isinstance(c, AnswerSegment)]

    @property
    def source(self) -> str:
        """The Markdown shown so far (all of :attr:`text` once finished)."""
        return "".join(segment.markdown for segment in self.segments)

    async def write(self, fragment: str) -> None:
        """Queue a fragment; the updater shows it with the next piece."""
        if not fragment:
            return
        self.text += fragment
        self._queued.append(fragment)
        if self._updater is None and not self._finished.is_set():
            self._updater = asyncio.create_task(self._run())
        self._wake.set()
        await asyncio.sleep(0)

    async def finish(self) -> None:
        """Wait until everything written is shown, then stop the updater."""
        self._finished.set()
        self._wake.set()
        updater, self._updater = self._updater, None
        if updater is not None:
            # Not ``await updater``: that would cancel the updater if this task is cancelled.
            await asyncio.wait([updater])
        while self._queued:  # only if the updater failed or never ran
            await self._show_piece()
        if self._segment is not None:
            self._segment.final_source = self._segment.source

    def on_unmount(self) -> None:
        if self._updater is not None:
            self._updater.cancel()

    async def _run(self) -> None:
        """Show the queue one piece per frame, no more often than every ``FLUSH_SECONDS``.

        A fast stream queues up faster than it can be laid out; showing it a piece
        at a time keeps every frame's work small (the text catches up as soon as
        the stream slows down), where one large update would stall the loop.
        """
        try:
            while self._queued or not self._finished.is_set():
                if not self._queued:
                    await self._wake.wait()
                    self._wake.clear()
                    continue
                started = time.monotonic()
                await self._show_piece()
                if not self.is_attached:
                    return
                await self.wait_for_refresh()
                pause = FLUSH_SECONDS - (time.monotonic() - started)
                if pause > 0 and not self._finished.is_set():
                    with suppress(TimeoutError):
                        await asyncio.wait_for(self._finished.wait(), pause)
        except asyncio.CancelledError:
            raise
        except Exception:  # a rendering error must not take the turn down
            log.exception("streaming Markdown failed")

    async def _show_piece(self) -> None:
        """Hand about ``APPEND_CHARS`` of the queue (cut after a newline) to the last segment."""
        text = "".join(self._queued)
        piece = _first_piece(text, APPEND_CHARS)
        self._queued[:] = [text[len(piece) :]] if len(piece) < len(text) else []
        if self._segment is None:
            self._segment = AnswerSegment()
            await self.mount(self._segment)
        await self._segment.append(piece)
        if len(self._segment.children) > SEGMENT_BLOCKS:
            await self._split(self._segment)
        self._segment.mark_tail()

    async def _split(self, segment: AnswerSegment) -> None:
        """Move the trailing blocks to a new segment; ``segment`` is then final.

        The cut goes before the last block (but the first) with no top margin:
        inside one segment the gap between two blocks is the larger of their
        margins, across segments it is their sum, so a block with no top margin
        looks the same on either side.
        """
        blocks = list(segment.children)
        cut = next(
            (
                i
                for i in range(len(blocks) - 1, 0, -1)
                if isinstance(blocks[i], MarkdownBlock) and not blocks[i].styles.margin.top
            ),
            None,
        )
        if cut is None:
            return
        start = blocks[cut].source_range[0]  # type: ignore[attr-defined]
        lines = segment.source.splitlines(keepends=True)
        if not 0 < start < len(lines):
            return
        segment.final_source = "".join(lines[:start])
        segment.is_tail = False
        following = self._segment = AnswerSegment()
        with self.app.batch_update():
            await segment.remove_children(blocks[cut:])
            segment._release_removed()
            segment.mark_tail()
            await self.mount(following)
            await following.append("".join(lines[start:]))
        for ancestor in self.ancestors:  # the transcript decides what parks
            schedule = getattr(ancestor, "schedule_parking", None)
            if schedule is not None:
                schedule()
                break

    def park_offscreen(self, window: Region) -> None:
        """Park the final segments outside ``window`` (screen coordinates); rebuild the rest."""
        for segment in self.segments:
            if segment.final_source is None:
                continue
            try:
                region = segment.region
            except Exception:  # not laid out yet
                continue
            segment.set_parked(not region.overlaps(window))
