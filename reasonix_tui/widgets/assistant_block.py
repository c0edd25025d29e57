"""Assistant text: streamed Markdown, batched, in bounded segments.

An answer is a column of :class:`AnswerSegment` widgets, each a ``Static``
holding its Markdown pre-rendered at the current width
(:mod:`reasonix_tui.widgets.markdown_render` says why not Textual's
``Markdown`` widget):

- only the last segment grows, re-rendered with each piece; once it holds more
  than ``SEGMENT_BLOCKS`` top-level blocks, its last block starts a new
  segment and the old one is final, so a piece costs the same late in a long
  answer as early on;
- a final segment far from the viewport is *parked*: its rendered lines are
  dropped, it keeps its height, and it renders again when it comes near (the
  transcript checks on scroll);
- fragments are coalesced and handed over at most once per ``FLUSH_SECONDS``,
  in pieces of about ``APPEND_CHARS``.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from contextlib import suppress

from rich.console import Console
from rich.theme import Theme
from textual.content import Content
from textual.geometry import Region
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget
from textual.widgets import Static

from reasonix_tui import format as fmt
from reasonix_tui.widgets.markdown_render import (
    BlockRenderer,
    copy_text,
    markdown_theme,
    render_markdown,
    theme_colors,
    top_level_blocks,
)

log = logging.getLogger(__name__)

SEGMENT_BLOCKS = 16
FENCE_LINES = 48  # a longer code block goes on in the next segment
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


class AnswerSegment(Static):
    """A run of consecutive top-level blocks of one answer, rendered as one ``Content``."""

    DEFAULT_CSS = """
    AnswerSegment {
        height: auto;
        margin: 0;
        padding: 0;
        background: transparent;
        &.-after { margin-top: 1; }
    }
    """

    def __init__(self, *, first: bool = True) -> None:
        super().__init__(Content(), classes="" if first else "-after")
        self.source = ""  # the Markdown so far
        self.final_source: str | None = None  # set once the segment no longer grows
        # A long code block is cut across segments: the next one renders with a copy of
        # its opening fence line (``prefix``, not part of the answer's text).
        self.prefix = ""
        self.continues = False  # its last code block goes on in the next segment
        self.parked = False
        self._shown_width = 0
        self._renderer = BlockRenderer()
        # Line by line rendering (see ``render_line``): the Content's lines when each
        # fits the width it was laid out at, and the strips drawn from them so far.
        self._lines: list[Content] | None = None
        self._strips: dict[int, Strip] = {}
        self._strips_key: tuple[object, ...] = ()

    @property
    def markdown(self) -> str:
        return self.final_source if self.final_source is not None else self.source

    def _width(self) -> int:
        """The width to lay the Markdown out at (estimated before the first layout)."""
        if self.content_region.width:
            return self.content_region.width
        parent = self.parent
        if isinstance(parent, Widget) and parent.content_region.width:
            return parent.content_region.width
        return max(self.app.size.width - 5, 20)  # transcript and block padding, scrollbar

    def show(self) -> None:
        """Render the Markdown at the current width."""
        width = self._width()
        app = self.app
        cached = _THEMES.get(app.theme)
        if cached is None:
            colors = theme_colors(app.theme_variables)
            cached = _THEMES[app.theme] = (markdown_theme(colors), colors["surface"])
        theme, surface = cached
        self.update(
            self._renderer.render(
                self.prefix + self.markdown,
                width,
                app.console,
                theme,
                surface=surface,
                open_top=bool(self.prefix),
                open_bottom=self.continues,
            )
        )
        self._shown_width = width

    def _line_view(self) -> list[Content] | None:
        """The shown Content's lines, if each is one line on screen at the current width
        (the renderer lays the Markdown out at that width, so normally they are), else
        None: then Textual wraps and renders the whole Content as usual."""
        visual = self._render()
        width = self.size.width
        key = (visual, width, self.visual_style, self.styles.content_align, self.auto_links)
        if self._strips_key != key:
            old = self._lines or []
            lines: list[Content] | None = None
            if isinstance(visual, Content) and width and self.styles.line_pad == 0:
                lines = visual.split(allow_blank=True)
                if any(line.cell_length > width or "\t" in line.plain for line in lines):
                    lines = None
            strips: dict[int, Strip] = {}
            if lines is not None and key[1:] == self._strips_key[1:]:
                # The same width and styles: a line drawn before and unchanged keeps its
                # strip (a streaming answer grows at its end).
                for y, strip in self._strips.items():
                    if y < len(lines) and y < len(old):
                        line, before = lines[y], old[y]
                        if line.plain == before.plain and line.spans == before.spans:
                            strips[y] = strip
            self._lines, self._strips, self._strips_key = lines, strips, key
        return self._lines

    def render_line(self, y: int) -> Strip:
        """Draw only the lines on screen, and reuse those unchanged since the last frame.

        Textual's ``Static`` wraps and draws the whole Content whenever it changes; the
        growing segment changes with every streamed piece, so each frame redrew up to
        ``SEGMENT_BLOCKS`` blocks to show the few lines at the bottom of the screen.
        """
        if self.text_selection is not None or self.screen._selecting:
            return super().render_line(y)  # selection styles span lines: draw it whole
        lines = self._line_view()
        if lines is None or self.styles.content_align != ("left", "top"):
            return super().render_line(y)
        strip = self._strips.get(y)
        if strip is None:
            if y >= len(lines):
                return Strip.blank(self.size.width, self.visual_style.rich_style)
            strip = Visual.to_strips(self, lines[y], self.size.width, 1, self.visual_style)[0]
            # Drawn alone, the line is row 0: the offsets text selection reads say its row.
            strip = self._strips[y] = strip.apply_offsets(0, y) if y else strip
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text without the layout's padding (see :func:`copy_text`)."""
        shown = selection.extract(self.render().plain)  # type: ignore[union-attr]
        start = selection.start
        text = copy_text(
            shown,
            self._renderer.line_kinds,
            start.y if start is not None else 0,
            start.x if start is not None else 0,
        )
        return text, "\n"

    def on_resize(self) -> None:
        if not self.parked and self.markdown and self.content_region.width != self._shown_width:
            self.show()

    def set_parked(self, parked: bool) -> None:
        """Drop the rendered lines of a final segment far off screen, keeping its height
        (or render them again)."""
        if self.final_source is None or parked == self.parked:
            return
        if parked:
            height = self.size.height
            if not height:
                return
            self.styles.height = height
            self.update(Content())
            self._renderer.clear()
            self._lines, self._strips, self._strips_key = None, {}, ()
        else:
            self.styles.height = None
            self.show()
        self.parked = parked


# Rich themes (and the code background) by app theme: they only change with it.
_THEMES: dict[str, tuple[Theme, str]] = {}


class AssistantBlock(Widget):
    DEFAULT_CSS = """
    AssistantBlock {
        height: auto;
        layout: vertical;
        margin: 1 0 0 0;
        padding: 0 1;
    }
    """
    # Padding only: without this Textual renders a blank strip (about ten objects for
    # the garbage collector) for every line of the block's height, anew as it grows.
    BLANK = True

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
    def rendering(self) -> bool:
        """Text written but not shown yet (the display catches up after a fast stream)."""
        return bool(self._queued) or (self._updater is not None and not self._updater.done())

    @property
    def source(self) -> str:
        """The Markdown shown so far (all of :attr:`text` once finished)."""
        return "".join(segment.markdown for segment in self.segments)

    async def write(self, fragment: str) -> None:
        """Queue a fragment; the updater shows it with the next piece."""
        if not fragment:
            return
        self.text += fragment
        self._queued.append(fmt.terminal_safe(fragment))  # escapes drawn, never sent
        if self._updater is None and not self._finished.is_set():
            self._updater = asyncio.create_task(self._run())
        self._wake.set()
        await asyncio.sleep(0)

    async def show_saved(self, text: str) -> None:
        """A saved session's answer (resume): shown whole at once, without the
        updater's one piece per frame."""
        self.text = text
        self._queued = [fmt.terminal_safe(text)] if text else []
        await self.finish()

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
        """Hand about ``APPEND_CHARS`` of the queue (cut after a newline) to the last
        segment; past ``SEGMENT_BLOCKS`` top-level blocks the rest starts a new one."""
        text = "".join(self._queued)
        piece = _first_piece(text, APPEND_CHARS)
        self._queued[:] = [text[len(piece) :]] if len(piece) < len(text) else []
        segment = self._segment
        if segment is None:
            segment = self._segment = AnswerSegment(first=True)
            await self.mount(segment)
        segment.source += piece
        split = False
        while (cut := self._cut(segment)) is not None:
            at, opener = cut
            lines = segment.source.splitlines(keepends=True)
            segment.final_source = "".join(lines[:at])
            segment.continues = bool(opener)
            segment.show()
            # A blank line before the next segment, unless it goes on with a code block.
            following = self._segment = AnswerSegment(first=bool(opener))
            following.prefix = opener
            following.source = "".join(lines[at:])
            await self.mount(following)
            segment, split = following, True
        segment.show()
        if split:
            for ancestor in self.ancestors:  # the transcript decides what parks
                schedule = getattr(ancestor, "schedule_parking", None)
                if schedule is not None:
                    schedule()
                    break

    @staticmethod
    def _cut(segment: AnswerSegment) -> tuple[int, str] | None:
        """Where the growing segment ends, if it is full: (line of its source, the fence
        line the next segment opens with, or "" after a whole block).

        Full means more than ``SEGMENT_BLOCKS`` top-level blocks (every block before
        the 17th is complete: a later one has started), or a last code block longer than
        ``FENCE_LINES`` (its first lines are final: text only ever comes at the end).
        """
        text = segment.prefix + segment.source
        shift = segment.prefix.count("\n")
        blocks = top_level_blocks(text)  # block tokens always carry their line `map`
        size = segment.source.count("\n") + (not segment.source.endswith("\n"))
        if len(blocks) > SEGMENT_BLOCKS:
            at, opener = blocks[SEGMENT_BLOCKS].map[0] - shift, ""  # pyright: ignore[reportOptionalSubscript]
        elif blocks and blocks[-1].type == "fence":
            start, end = blocks[-1].map  # pyright: ignore[reportGeneralTypeIssues]
            if end - start - 1 <= FENCE_LINES:
                return None
            at = start + 1 + FENCE_LINES - shift
            opener = text.splitlines(keepends=True)[start]
        else:
            return None
        return (at, opener) if 0 < at < size else None

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


WARM_UP_SAMPLE = (
    "".join(f"```{language}\nx\n```\n\n" for language in ("python", "bash", "json", "diff", "text"))
    + "# h\n\n- *a* `b` [c](d)\n\n> e\n\n| f | g |\n|---|---|\n| 1 | 2 |\n"
)


def warm_up() -> None:
    """Exercise what the first answer needs (any thread; importing this module loads
    the widget): Rich's Markdown, Pygments and the lexers an answer most often uses."""
    console = Console(file=io.StringIO(), width=80, color_system="truecolor")
    theme = markdown_theme(
        {
            "primary": "#000001",
            "secondary": "#000002",
            "accent": "#000003",
            "surface": "#000004",
            "muted": "#000005",
        }
    )
    render_markdown(WARM_UP_SAMPLE, 80, console, theme, surface="#000004")
    render_markdown("- a\n\n  ```python\n  x\n  ```\n", 80, console, theme)  # nested fence
