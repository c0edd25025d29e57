"""The TUI shows hostile tool calls and model text without crashing (issue 10, hole 7):
a 100,000-deep JSON argument string, lone surrogates and NUL bytes in a tool name, its
arguments, its result and the answer, and a 2 MB argument."""

from __future__ import annotations

from tui_helpers import send, session, settle

from reasonix_core.events import TextDelta, ToolCallFinished, ToolCallStarted
from reasonix_testkit.tui import text_steps
from reasonix_tui.widgets.assistant_block import AssistantBlock
from reasonix_tui.widgets.tool_block import ToolBlock

DEEP = 100_000


def call(call_id: str, name: str, arguments: str, result: str) -> list:
    return [
        ToolCallStarted(call_id=call_id, name=name, arguments=arguments),
        ToolCallFinished(call_id=call_id, name=name, result=result, is_error=True, outcome="error"),
    ]


async def test_hostile_calls_render_as_cards(make_app) -> None:
    big = "x" * 2_000_000
    app, _ = make_app(
        [
            [
                TextDelta(text="a \ud800 b \x00 c "),
                *call("deep", "read_file", "[" * DEEP + "]" * DEEP, "nested too deeply"),
                *call("surrogate", "read_file\ud800", '{"path": "\udfff\x00"}', "err \udc80"),
                *call("big", "read_file", '{"path": "' + big + '"}', "cannot access " + big),
                *text_steps("final \udfff answer"),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        screen = session(pilot)
        cards = {c.call_id: c for c in screen.query(ToolBlock)}
        assert [cards[k].status for k in ("deep", "surrogate", "big")] == ["error"] * 3
        assert "final \udfff answer" in screen.query(AssistantBlock).last().text
        assert not screen.busy


async def test_escape_sequences_in_tool_output_are_shown_not_sent(make_app) -> None:
    """A command's live lines and its result may hold terminal escapes (a hostile file
    cat'ed, a repository's log): the card draws them as text (``\\x1b``), so none reaches
    the terminal to set its title, clear it or write the clipboard."""
    from textual.widgets import Static

    from reasonix_core.events import ToolProgress

    hostile = "a \x1b]2;PWNED\x07 b \x1b]52;c;ZXZpbA==\x07 c \x1b[2J d"
    app, _ = make_app(
        [
            [
                ToolCallStarted(call_id="b1", name="bash", arguments='{"command": "cat x"}'),
                ToolProgress(call_id="b1", name="bash", progress=1, output=hostile),
            ],
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        card = next(c for c in session(pilot).query(ToolBlock) if c.call_id == "b1")
        live = str(card.query_one(".live", Static).render())
        assert "\x1b" not in live and "\x07" not in live
        assert "a \\x1b]2;PWNED\\x07 b" in live
        await card.finish(hostile, "ok")
        await settle(pilot)
        result = str(card.query_one(".result", Static).render())
        assert "\x1b" not in result and "\\x1b]52;c;ZXZpbA==\\x07" in result


async def test_escape_sequences_in_model_text_are_shown_not_sent(make_app) -> None:
    """The answer, the reasoning and a notice (a provider's error text) draw their
    control characters spelled out; emoji joiners and right-to-left text stay as they
    are."""
    from textual.widgets import Static

    from reasonix_testkit.tui import reasoning_steps
    from reasonix_tui.widgets.blocks import NoticeBlock
    from reasonix_tui.widgets.reasoning_block import ReasoningBlock

    hostile = "x \x1b]2;PWNED\x07 \x9b2J y 👨\u200d👩\u200d👧 \u05e9\u05dc\u05d5\u05dd"
    app, _ = make_app([[*reasoning_steps(hostile), *text_steps(hostile)]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        screen = session(pilot)
        answer = screen.query(AssistantBlock).last()
        thought = screen.query(ReasoningBlock).last()
        await screen.notice(hostile, "error")
        await settle(pilot)
        notice = screen.query(NoticeBlock).last()
        drawn = [
            answer.source,  # the Markdown drawn
            str(thought.query_one(".body", Static).render()),
            str(notice.render()),
        ]
        for text in drawn:
            assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, text
            assert "\\x1b]2;PWNED\\x07 \\x9b2J" in text, text
            assert "👨\u200d👩\u200d👧" in text and "\u05e9\u05dc\u05d5\u05dd" in text
        assert answer.text.endswith(hostile)  # what /copy copies is the model's own text
