"""Prompt → stream → widgets; cancellation; queue; history; keys."""

from __future__ import annotations

import asyncio

from textual.geometry import Offset
from textual.selection import Selection
from tui_helpers import send, session, settle, type_text, until

from reasonix_core.events import Notice, TurnFailed, UsageReported
from reasonix_core.usage import Usage
from reasonix_testkit.tui import Hold, WaitFor, reasoning_steps, text_steps, tool_steps
from reasonix_tui.widgets.assistant_block import AssistantBlock
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from reasonix_tui.widgets.diff_view import DiffView
from reasonix_tui.widgets.reasoning_block import ReasoningBlock
from reasonix_tui.widgets.tool_block import ToolBlock

DIFF = """--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
-print("hi")
+print("hello")
 x = 1
"""


async def test_prompt_streams_markdown(make_app) -> None:
    app, services = make_app(
        [[*reasoning_steps("Consider the file first."), *text_steps("Hello **there**, friend.")]]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hi there")
        await settle(pilot)
        screen = session(pilot)
        assert [b.text for b in screen.query(UserBlock)] == ["hi there"]
        assistant = screen.query_one(AssistantBlock)
        assert assistant.text == "Hello **there**, friend."
        assert "Hello" in assistant.source
        reasoning = screen.query_one(ReasoningBlock)
        assert reasoning.text == "Consider the file first."
        assert reasoning.has_class("-done")
        assert services.runners[0].prompts == ["hi there"]
        assert not screen.busy


async def test_tool_cards_show_status_and_diff(make_app) -> None:
    app, _ = make_app(
        [
            [
                *tool_steps("c1", "read_file", {"path": "src/app.py"}, "1\n2\n3\n4\n5\n6\n7\n8"),
                *tool_steps("c2", "bash", {"command": "pytest -q"}, "boom", outcome="error"),
                *tool_steps("c3", "edit_file", {"path": "app.py"}, "edited\n" + DIFF),
                *tool_steps("c4", "write_file", {"path": "x"}, "denied by user", outcome="denied"),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")
        await settle(pilot)
        cards = {c.call_id: c for c in session(pilot).query(ToolBlock)}
        assert [cards[k].status for k in ("c1", "c2", "c3", "c4")] == [
            "ok",
            "error",
            "ok",
            "denied",
        ]
        assert cards["c3"].diff is not None and cards["c3"].query_one(DiffView)
        assert not cards["c1"].query(DiffView)
        assert "2 more lines" in str(cards["c1"].query_one(".result").render())
        await cards["c1"].toggle()
        await pilot.pause()
        assert "more lines" not in str(cards["c1"].query_one(".result").render())


async def test_usage_updates_status_bar(make_app) -> None:
    usage = Usage(prompt_tokens=2000, completion_tokens=500, cache_hit_tokens=1500)
    app, _ = make_app([[UsageReported(usage=usage, model="m", cost=0.25)]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hi")
        await settle(pilot)
        state = session(pilot).status.state
        assert state.context_tokens == 2500
        assert state.last_cache_pct == 75
        assert state.cost == 0.25


async def test_notices_and_failures_are_inline(make_app) -> None:
    app, _ = make_app([[Notice(level="warning", text="careful"), TurnFailed(error="HTTP 500")]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hi")
        await settle(pilot)
        texts = [(n.level, n.text) for n in session(pilot).query(NoticeBlock)]
        assert ("warning", "careful") in texts
        assert any(level == "error" and "HTTP 500" in t for level, t in texts)


async def test_escape_cancels_mid_stream_and_session_stays_usable(make_app) -> None:
    app, services = make_app([[*text_steps("partial answer"), Hold()], text_steps("second")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "first")
        await pilot.pause(0.1)
        screen = session(pilot)
        assert screen.busy
        await pilot.press("escape")
        await settle(pilot)
        assert not screen.busy
        assert services.runners[0].cancelled == 1
        assert any("cancelled" in n.text for n in screen.query(NoticeBlock))
        await send(pilot, "again")
        await settle(pilot)
        assert [b.text for b in screen.query(AssistantBlock)] == ["partial answer", "second"]


async def test_ctrl_c_cancels_then_clears_then_quits(make_app) -> None:
    app, _ = make_app([[Hold()]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "first")
        await pilot.pause(0.1)
        screen = session(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not screen.busy
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert screen.composer.text == ""
        await pilot.press("ctrl+c")
        assert app.is_running
        assert "again" in screen.status.state.hint
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_ctrl_c_copies_selected_answer_text_instead_of_interrupting(make_app) -> None:
    app, _ = make_app([text_steps("Run `ruff check` before you commit.", chunk=6), [Hold()]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "how?")
        await settle(pilot)
        screen = session(pilot)
        segment = screen.query_one(AssistantBlock).segments[0]
        await send(pilot, "and then?")  # a turn is running while the user copies
        await pilot.pause(0.1)
        screen.selections = {segment: Selection(Offset(4, 0), Offset(14, 0))}
        await pilot.press("ctrl+c")
        assert app.clipboard == "ruff check"
        assert screen.busy  # not cancelled
        assert "Copied 10 characters" in screen.status.state.hint
        assert not screen.selections
        await pilot.press("ctrl+c")  # nothing selected now: interrupts as usual
        await settle(pilot)
        assert not screen.busy


async def test_ctrl_c_copies_the_composer_selection_and_keeps_the_draft(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await type_text(pilot, "draft text")
        screen.composer.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "draft text"
        assert screen.composer.text == "draft text"
        assert not screen.ctrl_c_armed


async def test_enter_while_busy_queues_a_follow_up(make_app) -> None:
    gate = asyncio.Event()
    app, services = make_app([[WaitFor(gate), *text_steps("one")], text_steps("two")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "first")
        await send(pilot, "second")
        screen = session(pilot)
        assert screen.queue == ["second"]
        assert screen.status.state.queued == 1
        gate.set()
        await settle(pilot)
        await settle(pilot)
        assert services.runners[0].prompts == ["first", "second"]
        assert screen.queue == []


async def test_history_up_down(make_app) -> None:
    app, _ = make_app([text_steps("a"), text_steps("b")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "one")
        await settle(pilot)
        await send(pilot, "two")
        await settle(pilot)
        composer = session(pilot).composer
        await type_text(pilot, "dra")
        await pilot.press("up")
        assert composer.text == "two"
        await pilot.press("up")
        assert composer.text == "one"
        await pilot.press("up")
        assert composer.text == "one"
        await pilot.press("down")
        assert composer.text == "two"
        await pilot.press("down")
        assert composer.text == "dra"


async def test_shift_enter_and_ctrl_j_insert_newlines(make_app) -> None:
    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        await type_text(pilot, "a")
        await pilot.press("ctrl+j")
        await type_text(pilot, "b")
        assert session(pilot).composer.text == "a\nb"
        await pilot.press("enter")
        await settle(pilot)
        assert services.runners[0].prompts == ["a\nb"]


async def test_shift_tab_cycles_permission_mode(make_app) -> None:
    app, services = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            seen.append(screen.status.state.mode)
        assert seen == ["auto", "plan", "ask"]
        assert services.permission_mode == "ask"


async def test_mentions_are_expanded_off_loop(make_app, tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember me")
    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "read @notes.txt and mail a@b.com")
        await settle(pilot)
        prompt = services.runners[0].prompts[0]
        assert prompt.startswith("read @notes.txt and mail a@b.com")
        assert '<file path="notes.txt">\nremember me' in prompt
        assert session(pilot).query(UserBlock).first().text == "read @notes.txt and mail a@b.com"


async def test_fast_key_burst_submits_the_whole_text(make_app) -> None:
    """Typed keys and Enter arriving in one burst (paste, tmux) stay in order."""
    from textual import events

    app, services = make_app([text_steps("ok")])
    async with app.run_test(size=(100, 32)) as pilot:
        for char in "please list files":
            key = "space" if char == " " else char
            app.post_message(events.Key(key, char))
        app.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        assert services.runners[0].prompts == ["please list files"]
        assert session(pilot).composer.text == ""


async def test_retry_takes_back_the_failed_attempts_text(make_app) -> None:
    from reasonix_core.events import Retrying, StepStarted, TextDelta, TurnFinished

    app, _ = make_app(
        [
            [
                StepStarted(step=1, model="m"),
                TextDelta(text="half an ans"),
                Retrying(attempt=1, delay=0.0, reason="stream ended before the response finished"),
                TextDelta(text="The whole answer."),
                TurnFinished(stop_reason="stop", text="The whole answer.", steps=1),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "q")
        await settle(pilot)
        texts = [b.text for b in session(pilot).query(AssistantBlock)]
        assert texts == ["The whole answer."]
        notices = [str(b.render()) for b in session(pilot).query(NoticeBlock)]
        assert any("Retrying" in n for n in notices)


async def test_tool_progress_updates_the_running_card(make_app) -> None:
    from reasonix_core.events import ToolCallStarted, ToolProgress

    gate = asyncio.Event()
    app, _ = make_app(
        [
            [
                ToolCallStarted(
                    call_id="c1", name="use_capability", arguments='{"name": "mcp__fx__slow"}'
                ),
                ToolProgress(
                    call_id="c1", name="mcp__fx__slow", progress=1, total=2, message="half way"
                ),
                WaitFor(gate),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "go")

        def progressed() -> bool:
            cards = session(pilot).query(ToolBlock)
            return bool(cards) and bool(cards.first().progress)

        await until(pilot, progressed)
        card = session(pilot).query_one(ToolBlock)
        assert card.progress == "1/2 half way"
        assert "1/2 half way" in str(card.query_one(".header").render())
        gate.set()
        await settle(pilot)


async def test_escape_cancels_and_puts_the_queue_back_in_the_composer(make_app) -> None:
    """Issue 14, item 10: the queued prompts do not run at once after Esc."""
    app, services = make_app([[Hold()], text_steps("two")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "first")
        await send(pilot, "second")
        await send(pilot, "third")
        screen = session(pilot)
        assert screen.queue == ["second", "third"]
        await pilot.press("escape")
        await settle(pilot)
        assert services.runners[0].prompts == ["first"]  # nothing else ran
        assert screen.queue == [] and not screen.busy
        assert screen.composer.text == "second\n\nthird"
        assert "put back in the prompt box" in screen.query(NoticeBlock).last().text
        await pilot.press("enter")  # sending them is one key away
        await settle(pilot)
        assert services.runners[0].prompts == ["first", "second\n\nthird"]


async def test_ctrl_d_with_a_draft_asks_first(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await type_text(pilot, "half a thought")
        await pilot.press("ctrl+d")
        await pilot.pause()
        screen = session(pilot)
        assert app.is_running
        assert "Ctrl+D again" in screen.status.state.hint
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_a_running_command_shows_its_live_output(make_app) -> None:
    from textual.widgets import Static

    from reasonix_core.events import ToolCallFinished, ToolCallStarted, ToolProgress

    gate = asyncio.Event()
    app, _ = make_app(
        [
            [
                ToolCallStarted(call_id="c1", name="bash", arguments='{"command": "make"}'),
                ToolProgress(
                    call_id="c1", name="bash", progress=20, output="compiling a.c\nlinking"
                ),
                WaitFor(gate),
                ToolCallFinished(call_id="c1", name="bash", result="done\n[exit code 0]"),
            ]
        ]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "build")
        screen = session(pilot)
        await until(pilot, lambda: bool(screen.query(".live")))
        card = screen.query_one(ToolBlock)
        assert "linking" in str(card.query_one(".live", Static).render())
        gate.set()
        await settle(pilot)
        assert not card.query(".live")  # the result replaces it
        assert "done" in str(card.query_one(".result").render())
