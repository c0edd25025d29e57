"""A long streamed answer: bounded segments, parked off-screen, read as one rendering."""

from __future__ import annotations

from textual.geometry import Offset
from textual.selection import Selection
from tui_helpers import send, session, settle, until

from reasonix_testkit.tui import text_steps
from reasonix_tui.widgets.assistant_block import (
    FENCE_LINES,
    SEGMENT_BLOCKS,
    AnswerSegment,
    AssistantBlock,
)
from reasonix_tui.widgets.markdown_render import (
    markdown_theme,
    render_markdown,
    theme_colors,
    top_level_blocks,
)


def long_markdown(sections: int) -> str:
    parts = []
    for n in range(1, sections + 1):
        parts.append(
            f"## Step {n}\n\n"
            f"The parser in `item_{n}.py` reads each line twice; **stream** it instead.\n\n"
            f"- `parse_{n}` yields records\n- `total` sums lazily\n  - in cents\n\n"
            f"1. run the tests\n2. check again\n\n"
            f"```python\ndef parse_{n}(lines):\n    yield from lines\n```\n\n"
            "> The old function stays for one release.\n\n"
        )
    parts.append("That is all.")
    return "".join(parts)


def plain(segment: AnswerSegment) -> str:
    return segment.render().plain  # type: ignore[union-attr]


async def test_long_answer_is_segmented_parked_and_complete(make_app) -> None:
    answer = long_markdown(24)
    app, _ = make_app([text_steps(answer, chunk=16)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "explain")
        await settle(pilot)
        screen = session(pilot)
        block = screen.query_one(AssistantBlock)
        await until(pilot, lambda: bool(block.segments) and block.segments[0].parked)
        assert block.text == answer
        assert block.source == answer
        segments = block.segments
        assert len(segments) >= 4
        assert all(s.final_source is not None for s in segments)
        assert all(len(top_level_blocks(s.prefix + s.markdown)) <= SEGMENT_BLOCKS for s in segments)
        # Far above the bottom of the transcript: rendered lines dropped, height kept.
        parked = [s for s in segments if s.parked]
        assert parked and all(not plain(s) and s.size.height > 0 for s in parked)
        assert segments[0].parked
        assert plain(segments[-1]).rstrip().endswith("That is all.")

        # Scrolling to the top renders the first segment again from its Markdown.
        screen.transcript.scroll_home(animate=False)
        await until(pilot, lambda: not segments[0].parked and segments[-1].parked)
        first = segments[0]
        assert not first.parked and plain(first).startswith("Step 1")
        assert segments[-1].parked  # ... and the far end is parked now

        screen.transcript.scroll_end(animate=False)
        await until(pilot, lambda: segments[0].parked and not segments[-1].parked)


async def test_segments_read_as_one_rendering_of_the_answer(make_app) -> None:
    """Segments joined by their one-line gap are the whole answer rendered at once."""
    answer = long_markdown(10)
    app, _ = make_app([text_steps(answer, chunk=16)])
    async with app.run_test(size=(100, 200)) as pilot:  # tall: nothing gets parked
        await send(pilot, "explain")
        await settle(pilot)
        screen = session(pilot)
        block = screen.query_one(AssistantBlock)
        segments = block.segments
        assert len(segments) >= 3
        assert not any(s.parked for s in segments)
        width = segments[0].content_region.width
        theme = markdown_theme(theme_colors(app.theme_variables))
        whole = render_markdown(answer, width, app.console, theme).plain

        def lines(text: str) -> list[str]:
            return [line.rstrip() for line in text.split("\n")]

        assert lines("\n\n".join(plain(s) for s in segments)) == lines(whole)
        assert block.content_region.height == len(lines(whole))


async def test_answer_text_can_be_selected(make_app) -> None:
    app, _ = make_app([text_steps("Use `ruff` **now**.\n\n- one\n- two\n", chunk=8)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        segment = session(pilot).query_one(AssistantBlock).segments[0]
        selected = segment.get_selection(Selection(None, None))
        assert selected is not None
        assert selected[0].split() == ["Use", "ruff", "now.", "•", "one", "•", "two"]


async def test_resize_lays_the_answer_out_again(make_app) -> None:
    words = " ".join(f"word{i}" for i in range(40))
    app, _ = make_app([text_steps(words, chunk=8)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        segment = session(pilot).query_one(AssistantBlock).segments[0]
        wide = plain(segment).count("\n")
        await pilot.resize_terminal(50, 32)
        await until(pilot, lambda: plain(segment).count("\n") > wide)
        narrow = plain(segment)
        assert narrow.count("\n") > wide
        assert max(len(line) for line in narrow.split("\n")) <= segment.content_region.width


async def test_a_long_code_block_goes_on_across_segments(make_app) -> None:
    """A growing fence is cut every FENCE_LINES lines, so a piece never re-renders it all;
    the pieces read as one code block (no gap, padding only at its two ends)."""
    code = "".join(f"    total += item_{n}.price * item_{n}.count\n" for n in range(300))
    answer = f"Here is the file:\n\n```python\ndef total(items):\n{code}```\n\nDone.\n"
    app, _ = make_app([text_steps(answer, chunk=24)])
    async with app.run_test(size=(100, 400)) as pilot:  # tall: nothing gets parked
        await send(pilot, "write it")
        await settle(pilot)
        block = session(pilot).query_one(AssistantBlock)
        segments = block.segments
        assert block.source == answer
        assert len(segments) >= 300 // FENCE_LINES
        continued = [s for s in segments if s.prefix]
        assert continued and all(s.prefix == "```python\n" for s in continued)
        assert all(len(plain(s).split("\n")) <= FENCE_LINES + 8 for s in segments)
        width = segments[0].content_region.width
        theme = markdown_theme(theme_colors(app.theme_variables))
        whole = render_markdown(answer, width, app.console, theme).plain
        shown = plain(segments[0])
        for segment in segments[1:]:
            shown += ("\n\n" if segment.has_class("-after") else "\n") + plain(segment)

        def lines(text: str) -> list[str]:
            return [line.rstrip() for line in text.split("\n")]

        assert lines(shown) == lines(whole)
        assert block.content_region.height == len(lines(whole))


async def test_copied_text_has_no_layout_padding(make_app) -> None:
    """Selecting an answer copies what the model wrote: no trailing spaces, no padding
    rows or left padding cell around code lines."""
    answer = "Run these:\n\n```bash\nls -la\n  pytest -q\n```\n\nThen commit.\n"
    app, _ = make_app([text_steps(answer, chunk=8)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        screen = session(pilot)
        segment = screen.query_one(AssistantBlock).segments[0]
        whole = segment.get_selection(Selection(None, None))
        assert whole is not None
        assert whole[0] == "Run these:\n\nls -la\n  pytest -q\n\nThen commit."
        # From inside the first code line: the cell before it is already past.
        rows = plain(segment).split("\n")
        y = next(i for i, row in enumerate(rows) if "ls -la" in row)
        part = segment.get_selection(Selection(Offset(4, y), Offset(10, y + 1)))
        assert part is not None and part[0] == "-la\n  pytest"


async def test_segments_drawn_line_by_line_match_textual_drawing_them_whole(make_app) -> None:
    """``AnswerSegment`` draws only the lines on screen and reuses unchanged ones
    (streaming cost); each line equals what ``Static`` draws of the whole Content,
    offsets for text selection included."""
    from textual.widgets import Static

    answer = long_markdown(6) + "\n\n```python\n" + "x = 1  # a long line " * 8 + "\n```\n"
    app, _ = make_app([text_steps(answer, chunk=16)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "explain")
        await settle(pilot)
        block = session(pilot).query_one(AssistantBlock)
        await until(pilot, lambda: block.source == answer)
        await pilot.pause()

        def drawn(strip) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
            """Text, look and link of each segment, and the offset selection reads."""
            return [
                (
                    seg.text,
                    seg.style and seg.style.clear_meta_and_links(),
                    seg.style and seg.style.link,
                    seg.style and seg.style.meta.get("offset"),
                )
                for seg in strip
            ]

        checked = 0
        for segment in block.segments:
            if segment.parked or not segment.size.height:
                continue
            fast = [segment.render_line(y) for y in range(segment.size.height)]
            assert segment._lines is not None  # the line-by-line path was taken
            segment._dirty_regions.add(segment.size.region)
            whole = [Static.render_line(segment, y) for y in range(segment.size.height)]
            assert [drawn(s) for s in fast] == [drawn(s) for s in whole]
            checked += len(fast)
        assert checked > 30
