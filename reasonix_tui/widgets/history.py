"""A saved session drawn into the transcript: the newest blocks at once, the rest on scroll-up.

A resumed session may hold hundreds of messages; drawing them all (Markdown,
tool cards, diffs) before the first usable frame would take seconds. The
newest ``LIVE_ENTRIES`` blocks are drawn at once and the view starts at the
bottom; older ones wait in :class:`SavedHistory` behind an
:class:`EarlierMarker` ("↑ N earlier blocks") and are drawn ``BATCH_ENTRIES``
at a time when the view reaches the top (or the marker is clicked), above
what is shown, without moving it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from reasonix_tui.replay import (
    AnswerEntry,
    ChildEntry,
    Entry,
    NoticeEntry,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
)
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from reasonix_tui.widgets.reasoning_block import ReasoningBlock
from reasonix_tui.widgets.tool_block import ToolBlock
from reasonix_tui.widgets.transcript_chunk import TranscriptChunk

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from textual.containers import VerticalScroll

LIVE_ENTRIES = 16
BATCH_ENTRIES = 40
LAYOUT_TRIES = 20  # frames to wait for the drawn batch to be laid out


class EarlierMarker(Static):
    """The top of a partly drawn saved session: how many blocks are not drawn yet."""

    DEFAULT_CSS = """
    EarlierMarker {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    """

    def show_count(self, count: int) -> None:
        self.display = count > 0
        noun = "block" if count == 1 else "blocks"
        self.update(Content(f"↑ {count} earlier {noun} of this session · scroll up to show"))

    async def on_click(self) -> None:
        transcript = self.parent
        history = getattr(transcript, "history", None)
        if isinstance(history, SavedHistory):
            await history.draw_earlier()


def _block(entry: Entry, now: datetime) -> Widget:
    match entry:
        case UserEntry(text=text):
            return UserBlock(text)
        case ReasoningEntry():
            return ReasoningBlock(now)
        case AnswerEntry():
            from reasonix_tui.widgets.assistant_block import AssistantBlock

            return AssistantBlock()
        case ToolEntry(call_id=call_id, name=name, arguments=arguments):
            return ToolBlock(call_id, name, arguments)
        case NoticeEntry(text=text, level=level):
            return NoticeBlock(text, level if level in ("warning", "error") else "info")  # type: ignore[arg-type]
    raise TypeError(f"not a transcript entry: {entry!r}")


async def _fill(block: Widget, entry: Entry) -> None:
    """Give a mounted block its saved content (the widgets render once mounted)."""
    match entry:
        case ReasoningEntry(text=text):
            assert isinstance(block, ReasoningBlock)
            block.show_saved(text)
        case AnswerEntry(text=text):
            await block.show_saved(text)  # type: ignore[attr-defined]
        case ToolEntry():
            assert isinstance(block, ToolBlock)
            # Its subagents' cards first: live, they were there before the result.
            for child in entry.children:
                await block.mount(saved_card(child))
            await block.finish(
                entry.result,
                entry.outcome,
                entry.is_error,
                entry.diff,
                summary=entry.summary,
                for_model=entry.for_model,
            )


def saved_card(child: ChildEntry) -> Widget:
    """A subagent's card as it ended live (its header; the calls stay in its own session)."""
    from reasonix_tui.widgets.subagent_card import SubagentCard

    card = SubagentCard(child.label, depends_on=child.depends_on, state=child.state)
    card.profile = child.profile
    if child.usage is not None:
        spend = child.usage
        card.add_usage(
            spend.prompt_tokens,
            spend.completion_tokens,
            spend.cache_hit_tokens,
            spend.cost,
            spend.currency,
        )
    card.set_state(child.state, child.reason, child.status)
    return card


class SavedHistory:
    """The not yet drawn part of a saved session shown in ``transcript``."""

    def __init__(
        self,
        transcript: VerticalScroll,
        entries: Sequence[Entry],
        now: datetime,
        *,
        reading_above: Callable[[], bool],
    ) -> None:
        self.transcript = transcript
        # Whether the user scrolled away from the bottom (the transcript tracks it).
        self.reading_above = reading_above
        self.now = now
        self.earlier = list(entries)
        self.marker = EarlierMarker()
        self.drawing = False
        self.shown = False  # the newest blocks are laid out and the view is at the bottom
        self.on_screen = asyncio.Event()  # set with ``shown``
        self.wants_everything = False  # Ctrl+Home came while a batch was being drawn
        # Ctrl+Home's trip to the top, until its batch is laid out or the user moves the
        # view again (End, Ctrl+End, a prompt sent): that later move wins.
        self.going_home = False

    @property
    def pending(self) -> int:
        return len(self.earlier)

    async def start(self) -> None:
        """Mount the marker and the newest blocks at the end of the transcript."""
        await self.transcript.mount(self.marker)
        newest = self.earlier[-LIVE_ENTRIES:]
        del self.earlier[-LIVE_ENTRIES:]
        await self._draw(newest, TranscriptChunk.split(len(newest)), after=self.marker)
        self.marker.show_count(self.pending)

    async def draw_earlier(self, *, everything: bool = False) -> None:
        """Draw the next older batch above what is shown, keeping the view where it is;
        ``everything``: all that is left, then go to the top (Ctrl+Home)."""
        self.going_home = self.going_home or everything
        if self.drawing or not self.earlier:
            # Asked mid-batch: the rest follows once this batch is laid out.
            self.wants_everything = self.wants_everything or (everything and self.drawing)
            return
        self.drawing = True
        transcript = self.transcript
        take = len(self.earlier) if everything else BATCH_ENTRIES
        try:
            batch = self.earlier[-take:]
            del self.earlier[-take:]
            height, y = transcript.virtual_size.height, transcript.scroll_y
            await self._draw(batch, TranscriptChunk.split(len(batch)), after=self.marker)
            self.marker.show_count(self.pending)
        except BaseException:
            self.drawing = False
            raise

        def keep_view(tries: int = LAYOUT_TRIES) -> None:
            grown = transcript.virtual_size.height - height
            if not grown and tries:  # not laid out yet: the scroll would be clamped
                transcript.call_after_refresh(keep_view, tries - 1)
                return
            if everything and self.going_home:
                transcript.scroll_home(animate=False, immediate=True)
            elif self.reading_above():
                transcript.scroll_to(y=y + grown, animate=False, immediate=True)
            else:  # filling a short view, or the user went to the bottom meanwhile
                transcript.scroll_end(animate=False, immediate=True)
            self.drawing = False
            if self.wants_everything:
                self.wants_everything = False
                transcript.call_later(self._draw_the_rest)
            elif everything:
                self.going_home = False

        transcript.call_after_refresh(keep_view)

    async def _draw_the_rest(self) -> None:
        if self.going_home:  # not cancelled since it was asked for
            await self.draw_earlier(everything=True)

    def cancel_home(self) -> None:
        """The user moved the view after Ctrl+Home: no trip to the top once the batch
        being drawn is laid out (the view stays where the user put it)."""
        self.going_home = self.wants_everything = False

    async def _draw(self, entries: list[Entry], sizes: list[int], *, after: Widget) -> None:
        start = 0
        chunks: list[tuple[TranscriptChunk, list[tuple[Widget, Entry]]]] = []
        for size in sizes:
            part = entries[start : start + size]
            start += size
            chunks.append((TranscriptChunk(), [(_block(e, self.now), e) for e in part]))
        # Mounted in order right after ``after``: the last chunk mounts first, each
        # next one before it.
        for chunk, _ in reversed(chunks):
            await self.transcript.mount(chunk, after=after)
        for chunk, pairs in chunks:
            await chunk.mount_all([block for block, _ in pairs])
            for block, entry in pairs:
                await _fill(block, entry)
