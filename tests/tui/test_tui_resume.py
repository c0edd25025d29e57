"""Resume redraws the saved conversation (issue 14, item 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from tui_helpers import send, session, settle, until

from reasonix_core.agent.session import SessionHeader, SessionStore
from reasonix_core.agent.transcript import FAILED_MARK
from reasonix_core.messages import Message, ToolCall
from reasonix_testkit.tui import ScriptedServices
from reasonix_tui.app import ReasonixApp
from reasonix_tui.replay import (
    AnswerEntry,
    NoticeEntry,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
    replay_entries,
)
from reasonix_tui.services import SessionSummary
from reasonix_tui.widgets.assistant_block import AssistantBlock
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from reasonix_tui.widgets.diff_view import DiffView
from reasonix_tui.widgets.history import BATCH_ENTRIES, LIVE_ENTRIES, EarlierMarker
from reasonix_tui.widgets.reasoning_block import ReasoningBlock
from reasonix_tui.widgets.tool_block import ToolBlock

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print('hi')\n+print('hello')\n"


def exchange(n: int) -> list[Message]:
    """One turn: a prompt (with the context the agent appends), reasoning, an edit, an answer."""
    call = ToolCall(id=f"c{n}", name="edit_file", arguments=json.dumps({"path": f"app{n}.py"}))
    return [
        Message(
            role="user",
            content=f"question {n}\n\n<workspace-context>\ncwd: /x\n</workspace-context>",
        ),
        Message(role="assistant", reasoning_content=f"thinking {n}", tool_calls=(call,)),
        Message(
            role="tool",
            tool_call_id=f"c{n}",
            content="edited",
            meta={"outcome": "ok", "diff": DIFF},
        ),
        Message(role="assistant", content=f"Answer **{n}**."),
    ]


def conversation(turns: int) -> list[Message]:
    return [m for n in range(turns) for m in exchange(n)]


def test_entries_follow_the_saved_turns() -> None:
    messages = [
        Message(role="user", content='fix @app.py\n\n<file path="app.py">\nx = 1\n</file>'),
        *exchange(1)[1:],
        Message(role="user", content="again"),
        Message(role="assistant", content="Half an answer\n\n[interrupted by the user]"),
        Message(role="user", content="third"),
        Message(role="assistant", content=FAILED_MARK),
    ]
    assert replay_entries(messages) == [
        UserEntry("fix @app.py"),
        ReasoningEntry("thinking 1"),
        ToolEntry(
            call_id="c1",
            name="edit_file",
            arguments='{"path": "app1.py"}',
            result="edited",
            outcome="ok",
            diff=DIFF,
        ),
        AnswerEntry("Answer **1**."),
        UserEntry("again"),
        AnswerEntry("Half an answer"),
        NoticeEntry("Turn cancelled.", "warning"),
        UserEntry("third"),
        NoticeEntry("The request failed; there was no answer.", "error"),
    ]


def test_replaying_a_session_loads_no_provider() -> None:
    """A resumed session is drawn before the engine exists: turning its messages into
    blocks loads neither a provider nor httpx (only an answer that kept provider-side
    searches needs its provider to read them)."""
    code = (
        "import sys\n"
        "from reasonix_core.messages import Message\n"
        "from reasonix_tui.replay import replay_entries\n"
        "signed = Message(role='assistant', content='Hi.', meta={'reasoning_signature': 's'})\n"
        "entries = replay_entries([Message(role='user', content='hello'), signed])\n"
        "assert len(entries) == 2, entries\n"
        "heavy = ('httpx', 'reasonix_core.provider.anthropic', 'reasonix_core.provider.openai')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def resumed_app(tmp_path: Path, messages: list[Message]) -> tuple[ReasonixApp, ScriptedServices]:
    services = ScriptedServices(
        workspace=tmp_path / "ws",
        config_home=tmp_path / "home",
        saved={"old-1": messages},
        continue_session="old-1",
    )
    return ReasonixApp(services, cursor_blink=False), services


async def test_continue_draws_the_conversation_scrolled_to_the_bottom(tmp_path: Path) -> None:
    app, _ = resumed_app(tmp_path, conversation(3))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await until(pilot, lambda: len(screen.query(AssistantBlock)) == 3)
        await settle(pilot)
        assert [b.text for b in screen.query(UserBlock)] == [f"question {n}" for n in range(3)]
        answers = [b.text for b in screen.query(AssistantBlock)]
        assert answers == [f"Answer **{n}**." for n in range(3)]
        assert all("Answer" in b.source for b in screen.query(AssistantBlock))
        reasoning = screen.query(ReasoningBlock)
        assert [r.text for r in reasoning] == [f"thinking {n}" for n in range(3)]
        assert all(r.has_class("-done") and not r.expanded for r in reasoning)
        tools = screen.query(ToolBlock)
        assert [t.status for t in tools] == ["ok"] * 3
        assert len(screen.query(DiffView)) == 3
        transcript = screen.transcript
        await until(pilot, lambda: transcript.max_scroll_y > 0)
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert not screen.query_one(EarlierMarker).display  # everything is drawn

        await send(pilot, "/status")
        await settle(pilot)
        status = screen.query(NoticeBlock).last()
        assert "session old-1" in status.text


async def test_a_long_session_draws_its_newest_blocks_then_more_on_scroll_up(
    tmp_path: Path,
) -> None:
    messages = conversation(125)  # 500 messages, 500 blocks
    app, _ = resumed_app(tmp_path, messages)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: "earlier" in str(screen.query_one(EarlierMarker).render()))
        marker = screen.query_one(EarlierMarker)
        await until(pilot, lambda: transcript.history is not None and transcript.history.shown)
        await until(pilot, lambda: transcript.max_scroll_y > 0)
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        drawn = len(transcript.blocks)
        assert drawn <= LIVE_ENTRIES + 2  # welcome + the newest blocks, not 500 widgets
        assert transcript.history is not None
        assert transcript.history.pending == 500 - LIVE_ENTRIES
        assert f"{500 - LIVE_ENTRIES} earlier blocks" in str(marker.render())
        assert [b.text for b in screen.query(UserBlock)][-1] == "question 124"

        # The top of the view draws the previous batch above it, keeping what was shown.
        last_user = screen.query(UserBlock).first()
        transcript.scroll_home(animate=False, immediate=True)
        await until(pilot, lambda: transcript.history.pending == 500 - LIVE_ENTRIES - BATCH_ENTRIES)
        await settle(pilot)
        assert len(transcript.blocks) > drawn
        await until(pilot, lambda: transcript.scroll_y > 0)
        assert last_user.region.y >= transcript.region.y  # still on screen, not pushed away


async def test_resume_picker_draws_the_picked_session(tmp_path: Path) -> None:
    services = ScriptedServices(
        workspace=tmp_path / "ws",
        config_home=tmp_path / "home",
        saved={"old-1": conversation(2)},
        sessions=[SessionSummary(session_id="old-1", title="question 0", updated=datetime.now())],
    )
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/resume")
        await settle(pilot)
        await pilot.press("enter")
        screen = session(pilot)
        await until(pilot, lambda: len(screen.query(AssistantBlock)) == 2)
        await until(
            pilot, lambda: "Resumed session old-1." in screen.query(NoticeBlock).last().text
        )
        assert [b.text for b in screen.query(UserBlock)] == ["question 0", "question 1"]


@pytest.mark.usefixtures("configured")
def test_engine_services_read_the_session_that_continue_reopens(
    workspace: Path, home: Path
) -> None:
    from reasonix_tui.engine import EngineServices

    header = SessionHeader(
        id="20250101-000000-abcdef",
        workspace=str(workspace),
        created="2025-01-01T00:00:00",
        model="deepseek-flash",
        effort="auto",
        system_prompt="",
        tools_fingerprint="",
    )
    store = SessionStore.create(home / "sessions", workspace, header)
    for message in conversation(2):
        store.append(message)
    store.close()

    fresh = EngineServices(workspace, home=home)
    assert list(fresh.new_runner(approver=None).saved_messages()) == []  # type: ignore[arg-type]

    services = EngineServices(workspace, home=home, continue_last=True)
    runner = services.new_runner(approver=None)  # type: ignore[arg-type]
    assert runner.session_id == "(new session)"
    saved = runner.saved_messages()
    assert [m.content for m in saved if m.role == "assistant" and m.content] == [
        "Answer **0**.",
        "Answer **1**.",
    ]
    assert runner.session_id == header.id  # /status names it before the first turn
    # /resume counts the prompts (2), not messages / 2 (4: each turn has a tool step).
    assert [s.turns for s in services.list_sessions()] == [2]


def test_the_launch_session_is_read_without_building_the_engine(
    workspace: Path, home: Path
) -> None:
    from reasonix_tui.deferred import DeferredServices
    from reasonix_tui.saved_session import SavedSession

    header = SessionHeader(
        id="20250101-000000-abcdef",
        workspace=str(workspace),
        created="2025-01-01T00:00:00",
        model="m",
        effort="auto",
        system_prompt="",
        tools_fingerprint="",
    )
    store = SessionStore.create(home / "sessions", workspace, header)
    for message in conversation(1):
        store.append(message)
    store.close()

    def never() -> ScriptedServices:
        raise AssertionError("the engine must not be built to draw the saved session")

    saved = SavedSession(home / "sessions", workspace, None)  # -c: the newest
    services = DeferredServices(never, workspace=workspace, config_home=home, saved=saved)
    runner = services.new_runner(approver=None)  # type: ignore[arg-type]
    assert [m.role for m in runner.saved_messages()] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert saved.session_id == header.id  # what the engine is then told to reopen
    fresh = DeferredServices(never, workspace=workspace, config_home=home)
    assert fresh.new_runner(approver=None).saved_messages() == ()  # type: ignore[arg-type]


async def test_ctrl_home_reaches_the_first_message_in_one_press(tmp_path: Path) -> None:
    """Issue 30 item 7: on a 342-message session, one Ctrl+Home shows the first prompt
    (it drew one batch per press before: 4-16 presses)."""
    messages = conversation(86)[:342]
    app, _ = resumed_app(tmp_path, messages)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.history is not None and transcript.history.shown)
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0)
        await pilot.press("ctrl+home")
        await until(pilot, lambda: transcript.history is not None and not transcript.history.pending)
        await until(pilot, lambda: not transcript.history.drawing)
        await settle(pilot)
        assert transcript.scroll_y == 0
        first = screen.query(UserBlock).first()
        assert first.text == "question 0"
        assert first.region.y >= transcript.region.y and first.region.height > 0


async def test_resumed_gauges_show_the_saved_figures_before_any_request(tmp_path: Path) -> None:
    """Issue 30 item 7: ctx, cache and cost of the saved session, before any request,
    and again after the session is reopened (a chat rewind, /resume)."""
    from reasonix_core.agent.cache_report import build_report

    records = [
        {"request": 1, "source": "executor", "prompt_tokens": 10000, "cache_hit_tokens": 0,
         "completion_tokens": 500, "cost": 0.01, "currency": "USD"},
        {"request": 2, "source": "executor", "prompt_tokens": 20000, "cache_hit_tokens": 15000,
         "completion_tokens": 700, "cost": 0.02, "currency": "USD"},
        {"request": 3, "source": "executor", "agent_path": ["explore"], "prompt_tokens": 90000,
         "cache_hit_tokens": 0, "completion_tokens": 10, "cost": 0.5, "currency": "USD"},
    ]  # fmt: skip
    app, services = resumed_app(tmp_path, conversation(2))
    services.report = build_report("old-1", records)
    services.sessions = [
        SessionSummary(session_id="old-1", title="q", updated=datetime(2025, 1, 1), turns=2)
    ]
    async with app.run_test(size=(140, 32)) as pilot:
        screen = session(pilot)
        await until(pilot, lambda: screen.status.state.cost > 0)
        state = screen.status.state
        assert state.context_tokens == 20700  # the session's own last request
        assert state.last_cache_pct == 75
        assert (state.cache_hit_tokens, state.prompt_tokens) == (15000, 30000)
        assert round(state.cost, 4) == 0.53  # the subagent's request was paid too
        bar = str(screen.status.render())
        assert "ctx 20.7k" in bar and "cache 75%" in bar
        assert await screen.continue_session("old-1")
        assert screen.status.state.context_tokens == 20700
        assert round(screen.status.state.cost, 4) == 0.53


def test_a_resumed_failed_request_keeps_its_error() -> None:
    """Issue 30 item 7: the resumed card says what failed, as the live one did."""
    from reasonix_core.agent.transcript import FAILURE

    entries = replay_entries(
        [
            Message(role="user", content="hi"),
            Message(
                role="assistant", content=FAILED_MARK, meta={FAILURE: "HTTP 402: Insufficient Balance"}
            ),
        ]
    )
    assert entries[-1] == NoticeEntry("Turn failed: HTTP 402: Insufficient Balance", "error")


async def test_no_new_output_marker_when_nothing_new_arrived(tmp_path: Path) -> None:
    """Issue 30 item 7: reading a resumed session upward (older blocks drawn, answers
    laid out) is not "new output below"; a notice added meanwhile is."""
    from reasonix_tui.widgets.transcript import NewOutputMarker

    app, _ = resumed_app(tmp_path, conversation(40))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.history is not None and transcript.history.shown)
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0)
        marker = screen.query_one(NewOutputMarker)
        for _ in range(12):
            await pilot.press("pageup")
            await pilot.pause(0.05)
        await until(pilot, lambda: transcript.history is not None and not transcript.history.drawing)
        await settle(pilot)
        for _ in range(10):
            await pilot.pause(0.05)
        assert transcript.scroll_y < transcript.max_scroll_y
        assert not transcript.unseen and not marker.has_class("-shown")
        await screen.notice("something new")
        await until(pilot, lambda: transcript.unseen)


async def test_ctrl_end_right_after_ctrl_home_stays_at_the_bottom(tmp_path: Path) -> None:
    """Ctrl+Home draws the rest of a resumed session, then goes to the top once it is
    laid out; a Ctrl+End (or End, or a prompt) pressed before that wins: the view ends at
    the bottom, not back at the top (seen in a real terminal: Home then End landed on
    the first message)."""
    messages = conversation(86)[:342]
    app, _ = resumed_app(tmp_path, messages)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.history is not None and transcript.history.shown)
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y > 0)
        await pilot.press("ctrl+home")
        # The rest is mounted; the trip to the top waits for its layout.
        await until(pilot, lambda: transcript.history is not None and not transcript.history.pending)
        await pilot.press("ctrl+end")
        await until(pilot, lambda: not transcript.history.drawing)
        await settle(pilot)
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        last = screen.query(AssistantBlock).last()
        assert last.region.y >= transcript.region.y and last.region.height > 0


def multi_step_turn(prompt: str) -> list[Message]:
    """A turn that thinks before each of two tool steps and before its answer."""
    out = [Message(role="user", content=prompt)]
    for n, thought in enumerate(["First I list the files.", "Now I read them."]):
        call = ToolCall(id=f"{prompt}-{n}", name="ls", arguments="{}")
        out += [
            Message(role="assistant", reasoning_content=thought, tool_calls=(call,)),
            Message(role="tool", tool_call_id=call.id, content="a.py", meta={"outcome": "ok"}),
        ]
    out.append(Message(role="assistant", reasoning_content="Done.", content="Three files."))
    return out


def _kinds(screen) -> list[str]:  # type: ignore[no-untyped-def]
    shown = (ReasoningBlock, ToolBlock, AssistantBlock, UserBlock)
    return [type(b).__name__ for b in screen.transcript.query("*") if isinstance(b, shown)]


async def test_a_resumed_turn_shows_one_thought_line_as_live_did(make_app, tmp_path: Path) -> None:
    """Live, later reasoning in a turn folds into the turn's first "thought" line;
    resumed, the same turn draws the same: one thought line, above its cards."""
    from reasonix_testkit.tui import reasoning_steps, text_steps, tool_steps

    live_app, _ = make_app(
        [
            [
                *reasoning_steps("First I list the files."),
                *tool_steps("c1", "ls", {}, "a.py"),
                *reasoning_steps("Now I read them."),
                *tool_steps("c2", "ls", {}, "a.py"),
                *reasoning_steps("Done."),
                *text_steps("Three files."),
            ]
        ]
    )
    async with live_app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "list")
        await settle(pilot)
        live = _kinds(session(pilot))
        live_text = session(pilot).query_one(ReasoningBlock).text
    messages = multi_step_turn("list") + multi_step_turn("again")
    entries = replay_entries(messages)
    assert sum(isinstance(e, ReasoningEntry) for e in entries) == 2  # one per turn
    app, _ = resumed_app(tmp_path, messages)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await until(pilot, lambda: len(screen.query(AssistantBlock)) == 2)
        await settle(pilot)
        resumed = _kinds(screen)
        blocks = list(screen.query(ReasoningBlock))
    assert resumed[: len(live)] == live, (live, resumed)
    assert len(blocks) == 2
    for part in ("First I list", "Now I read them.", "Done."):
        assert part in blocks[0].text and part in live_text
