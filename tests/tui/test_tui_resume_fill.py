"""A resumed session draws only the newest blocks that fill the view first (issue 30's
resume target): long answers, fewer blocks; the rest still comes in order."""

from __future__ import annotations

from pathlib import Path

from test_tui_resume import resumed_app
from tui_helpers import session, settle, until

from reasonix_core.messages import Message
from reasonix_tui.replay import AnswerEntry, ToolEntry, UserEntry
from reasonix_tui.widgets.blocks import UserBlock
from reasonix_tui.widgets.history import LIVE_ENTRIES, filling_count


def long_answer(n: int) -> str:
    return "\n\n".join(f"Answer {n}, paragraph {p}: the tests pass." for p in range(12))


def long_session(turns: int) -> list[Message]:
    return [
        message
        for n in range(turns)
        for message in (
            Message(role="user", content=f"question {n}"),
            Message(role="assistant", content=long_answer(n)),
        )
    ]


def test_the_count_never_falls_short_of_the_view() -> None:
    answers = [AnswerEntry(long_answer(n)) for n in range(10)]
    # 12 paragraphs, 11 blank lines, a margin: 24 rows at least per answer.
    assert filling_count(answers, 30, 100) == 2
    assert filling_count(answers, 24, 100) == 1
    # Narrow: each paragraph wraps (counted at its characters over the width).
    assert filling_count(answers, 60, 20) == 2
    # Cards and thoughts count a row each: a tall view takes the most it may.
    cards = [ToolEntry(call_id=f"c{n}", name="bash", arguments="{}") for n in range(40)]
    assert filling_count(cards, 200, 100) == LIVE_ENTRIES
    # Not laid out yet, or fewer entries than that: as before.
    assert filling_count(answers, 0, 0) == len(answers)
    assert filling_count([UserEntry("hi")], 30, 100) == 1


async def test_long_answers_draw_fewer_blocks_first_then_the_rest_in_order(
    tmp_path: Path,
) -> None:
    app, _ = resumed_app(tmp_path, long_session(30))  # 60 blocks
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.history is not None and transcript.history.shown)
        history = transcript.history
        assert history is not None
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0)
        first_drawn = 60 - history.pending
        assert first_drawn < LIVE_ENTRIES  # the view is full with a few long answers
        # The view is full: the last answer's end at the bottom, no gap above it.
        assert transcript.max_scroll_y > 0
        assert [b.text for b in screen.query(UserBlock)][-1] == "question 29"

        await pilot.press("ctrl+home")
        await until(pilot, lambda: not history.pending and not history.drawing)
        await settle(pilot)
        assert transcript.scroll_y == 0
        assert [b.text for b in screen.query(UserBlock)] == [f"question {n}" for n in range(30)]
        first = screen.query(UserBlock).first()
        assert first.region.y >= transcript.region.y and first.region.height > 0

        await pilot.press("end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert not transcript.unseen  # nothing new arrived: no "new output below"


def test_a_fence_is_drafted_plain_until_its_lexer_is_compiled() -> None:
    """Within ``drafting`` a fence whose lexer was never compiled is drawn plain (same
    rows); rendered again outside, it is highlighted."""
    from rich.console import Console
    from rich.theme import Theme

    from reasonix_tui.widgets.markdown_render import BlockRenderer, _lexer_compiled, drafting

    source = "Some code:\n\n```fortran\nprogram hello\n  print *, 'hi'\nend program\n```\n"
    assert not _lexer_compiled("fortran")
    renderer = BlockRenderer()
    with drafting():
        draft = renderer.render(source, 60, Console(), Theme())
    assert renderer.drafted
    assert not any(span for span in draft.spans if "program" in draft.plain[span.start : span.end])
    final = renderer.render(source, 60, Console(), Theme())
    assert not renderer.drafted and _lexer_compiled("fortran")
    assert final.plain == draft.plain  # nothing moves
    assert any("program" in final.plain[span.start : span.end] for span in final.spans)


async def test_a_resumed_answers_code_is_highlighted_once_the_end_is_shown(
    tmp_path: Path,
) -> None:
    from reasonix_tui.widgets.assistant_block import AnswerSegment
    from reasonix_tui.widgets.markdown_render import _lexer_compiled

    answer = "Done:\n\n```cobol\n       IDENTIFICATION DIVISION.\n       PROGRAM-ID. HELLO.\n```\n"
    assert not _lexer_compiled("cobol")
    messages = [
        *long_session(3),
        Message(role="user", content="and in COBOL?"),
        Message(role="assistant", content=answer),
    ]
    app, _ = resumed_app(tmp_path, messages)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.history is not None and transcript.history.shown)
        segment = screen.query(AnswerSegment).last()
        await until(pilot, lambda: not segment._renderer.drafted)
        await settle(pilot)
        assert _lexer_compiled("cobol")
        shown = segment.visual
        assert "PROGRAM-ID" in str(shown)
        assert segment._renderer.line_kinds.count("code") == 2
