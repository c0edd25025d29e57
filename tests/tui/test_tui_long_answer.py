"""A long streamed answer: bounded segments, parked off-screen, same look as one widget."""

from __future__ import annotations

from textual.widgets import Markdown
from tui_helpers import send, session, settle

from reasonix_tui.testing import text_steps
from reasonix_tui.widgets.assistant_block import SEGMENT_BLOCKS, AssistantBlock


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


async def test_long_answer_is_segmented_parked_and_complete(make_app) -> None:
    answer = long_markdown(24)
    app, _ = make_app([text_steps(answer, chunk=16)])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "explain")
        await settle(pilot)
        await pilot.pause(0.1)
        screen = session(pilot)
        block = screen.query_one(AssistantBlock)
        assert block.text == answer
        assert block.source == answer
        segments = block.segments
        assert len(segments) >= 4
        assert all(s.final_source is not None for s in segments)
        assert all(len(s.children) <= SEGMENT_BLOCKS + 8 for s in segments if not s.parked)
        # Far above the bottom of the transcript: blocks dropped, height kept.
        parked = [s for s in segments if s.parked]
        assert parked and all(not s.children and s.size.height > 0 for s in parked)
        assert segments[0].parked
        last = segments[-1].children[-1]
        assert last.has_class("-tail") and "That is all." in str(last.render())

        # Scrolling to the top rebuilds the first segment from its Markdown.
        screen.transcript.scroll_home(animate=False)
        for _ in range(6):
            await pilot.pause(0.05)
        first = segments[0]
        assert not first.parked and first.children
        assert "Step 1" in str(first.children[0].render())
        assert not segments[-1].children  # ... and the far end is parked now

        screen.transcript.scroll_end(animate=False)
        for _ in range(6):
            await pilot.pause(0.05)
        assert segments[0].parked and segments[-1].children


async def test_segments_are_as_tall_as_one_markdown_widget(make_app) -> None:
    """Splitting only before blocks with no top margin keeps every gap as it was."""
    answer = long_markdown(10)
    app, _ = make_app([text_steps(answer, chunk=16)])
    async with app.run_test(size=(100, 200)) as pilot:  # tall: nothing gets parked
        await send(pilot, "explain")
        await settle(pilot)
        screen = session(pilot)
        block = screen.query_one(AssistantBlock)
        assert len(block.segments) >= 3
        assert not any(s.parked for s in block.segments)
        reference = Markdown()
        reference.styles.padding = (0, 1)
        await screen.transcript.mount(reference)
        await reference.update(answer)
        await pilot.pause()
        await pilot.pause()
        # The answer's last block has no bottom margin; the plain widget's has.
        trailing = reference.children[-1].styles.margin.bottom
        assert block.size.height == reference.size.height - trailing
