"""Transcript chunks: far-away chunks park (hidden, same height) and come back on scroll."""

from __future__ import annotations

from tui_helpers import session, until

from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from reasonix_tui.widgets.transcript import CHUNK_BLOCKS, TranscriptChunk


async def test_far_chunks_park_and_return_when_scrolled_to(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        transcript = session(pilot).transcript
        for i in range(5 * CHUNK_BLOCKS):
            await transcript.add(UserBlock(f"prompt {i}") if i % 2 else NoticeBlock(f"n{i}"))
        await until(pilot, lambda: transcript.chunks[0].parked)
        await pilot.pause(0.1)  # ... and the layout has settled
        chunks = transcript.chunks
        assert len(chunks) == 6  # the welcome block plus 100 blocks, 20 per chunk
        assert all(len(c.children) <= CHUNK_BLOCKS for c in chunks)
        assert chunks[0].parked and not chunks[-1].parked
        height = transcript.virtual_size.height
        assert chunks[0].children[1].region.height == 0  # hidden: not laid out at all

        transcript.scroll_home(animate=False)
        await until(pilot, lambda: not chunks[0].parked and chunks[0].children[1].region.height > 0)
        assert transcript.virtual_size.height == height  # parking never changes the layout
        assert not chunks[-1].parked  # the last chunk takes new blocks: never parked


async def test_trimming_removes_whole_chunks_and_keeps_the_marker_first(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        transcript = session(pilot).transcript
        transcript.max_blocks = 30
        for i in range(75):
            await transcript.add(NoticeBlock(f"n{i}"))
        assert len(transcript.blocks) == 30
        assert transcript.trimmed == 46  # 75 notices + the welcome block - 30
        assert transcript.children[0].has_class("-trimmed")
        assert all(isinstance(c, TranscriptChunk) and c.children for c in transcript.children[1:])
        assert [str(b.render()) for b in transcript.blocks][-1].endswith("n74")
