"""``/rewind`` and Esc Esc in the app, over the real engine: a turn runs bash
through the real tool against the loopback fixture, then the picker puts the
file back (code), or the conversation (chat), or forks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.picker import PickerScreen
from reasonix_tui.screens.rewind import RewindScreen
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from tests.tui.tui_helpers import send, session, until

SIZE = (100, 32)


def _bash_turn(server: object, command: str, answer: str) -> None:
    server.enqueue(Reply(tool_calls=[ToolCallSpec("bash", json.dumps({"command": command}))]))  # type: ignore[attr-defined]
    server.enqueue(Reply(content=answer))  # type: ignore[attr-defined]


async def _answered(pilot, server, requests: int) -> None:  # type: ignore[no-untyped-def]
    """Until the fixture saw ``requests`` requests and the turn is over (the
    engine's owner worker runs for the app's life: there is no settling)."""
    screen = session(pilot)
    await until(pilot, lambda: len(server.requests) >= requests and not screen.busy, 30)
    await pilot.pause()


async def _two_turns(pilot, server, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    _bash_turn(server, "echo two > a.txt", "made it two")
    await send(pilot, "make it two")
    await _answered(pilot, server, 2)
    _bash_turn(server, "sed -i 's/two/three/' a.txt && chmod +x a.txt", "made it three")
    await send(pilot, "make it three")
    await _answered(pilot, server, 4)
    assert (workspace / "a.txt").read_text() == "three\n"


def _users(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in session(pilot).transcript.query(UserBlock)]


def _notices(pilot) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(str(b.render()) for b in session(pilot).transcript.query(NoticeBlock))


async def _pick(pilot, turn: int, choice: str) -> RewindScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
    picker = pilot.app.screen
    assert [i.value for i in picker.shown] == ["2", "1"]  # newest first
    assert picker.shown[0].detail.endswith("1 file")
    while picker.shown[picker.query_one("OptionList").highlighted].value != str(turn):
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(pilot.app.screen, RewindScreen))
    rewind = pilot.app.screen
    assert isinstance(rewind, RewindScreen)
    options = rewind.query_one("#choices")
    ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
    while ids[options.highlighted] != choice:
        await pilot.press("down")
    return rewind


@pytest.mark.usefixtures("configured")
async def test_slash_rewind_puts_the_code_back(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    (workspace / "a.txt").write_text("one\n")
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _two_turns(pilot, configured, workspace)
        await send(pilot, "/rewind")
        rewind = await _pick(pilot, 2, "code")
        assert "-three" in rewind.preview.diff and "+two" in rewind.preview.diff
        assert rewind.preview.conflicts == ()
        await pilot.press("enter")
        await until(pilot, lambda: (workspace / "a.txt").read_text() == "two\n")
        assert not (workspace / "a.txt").stat().st_mode & 0o111
        # The ledger forgot the file: the next edit must read it again.
        ledger = services._active.runtime.agent.tool_context.ledger  # type: ignore[union-attr]
        assert ledger is None or (workspace / "a.txt") not in ledger
        assert "rewound" in session(pilot).transcript.query("NoticeBlock").last().text  # type: ignore[attr-defined]


@pytest.mark.usefixtures("configured")
async def test_esc_esc_then_conversation_continues_before_the_turn(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    (workspace / "a.txt").write_text("one\n")
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _two_turns(pilot, configured, workspace)
        before_turn_2 = configured.requests[1]  # turn 1's last request
        await pilot.press("escape")
        assert "Esc again" in str(session(pilot).status.render())
        await pilot.press("escape")
        await _pick(pilot, 2, "chat")
        await pilot.press("enter")
        await until(pilot, lambda: pilot.app.screen is session(pilot))
        await pilot.pause()
        assert (workspace / "a.txt").read_text() == "three\n"  # chat only
        # The kept turn is drawn again (switching sessions cleared the transcript),
        # and the notice speaks plainly.
        await until(pilot, lambda: _users(pilot) == ["make it two"])
        await until(pilot, lambda: "before turn 2" in _notices(pilot))
        assert "Rewound the conversation to before turn 2; files unchanged." in _notices(pilot)
        assert "-c" not in _notices(pilot) and "chat:" not in _notices(pilot)
        count = len(configured.requests)
        configured.enqueue(Reply(content="again"))
        await send(pilot, "try again")
        await _answered(pilot, configured, count + 1)
        new = json.loads(configured.requests[count].body)["messages"]
        old = json.loads(before_turn_2.body)["messages"]
        assert new[: len(old)] == old
        assert new[len(old)]["content"] == "made it two"
        assert new[len(old) + 1]["content"].startswith("try again")


@pytest.mark.usefixtures("configured")
async def test_fork_continues_in_a_new_session(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    (workspace / "a.txt").write_text("one\n")
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _two_turns(pilot, configured, workspace)
        original = session(pilot).runner.session_id
        original_file = next(home.glob(f"sessions/*/{original}.jsonl"))
        original_bytes = original_file.read_bytes()
        await send(pilot, "/rewind")
        await _pick(pilot, 2, "fork")
        await pilot.press("enter")
        await until(pilot, lambda: pilot.app.screen is session(pilot))
        await pilot.pause()
        assert (workspace / "a.txt").read_text() == "three\n"  # a fork leaves the code
        await until(pilot, lambda: _users(pilot) == ["make it two"])
        await until(pilot, lambda: "Forked the conversation from before turn 2" in _notices(pilot))
        count = len(configured.requests)
        configured.enqueue(Reply(content="forked"))
        await send(pilot, "in the fork")
        await _answered(pilot, configured, count + 1)
        assert session(pilot).runner.session_id != original
        assert original_file.read_bytes() == original_bytes
        new = json.loads(configured.requests[count].body)["messages"]
        assert [m["content"] for m in new if m["role"] == "user"][-1].startswith("in the fork")
        assert "make it three" not in json.dumps(new)


async def test_typing_disarms_the_second_escape(make_app) -> None:  # type: ignore[no-untyped-def]
    from reasonix_tui.services import RewindPreview, RewindTurn
    from tests.tui.tui_helpers import type_text

    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\n+one\n"  # the code choice is offered
    app, services = make_app(
        rewind_history=[RewindTurn(number=1, head="first")],
        rewind_previews={1: RewindPreview(diff=diff)},
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        assert "Esc again" in str(session(pilot).status.render())
        await type_text(pilot, "x")
        assert "Esc again" not in str(session(pilot).status.render())
        await pilot.press("backspace")
        await pilot.press("escape")  # armed afresh, not opened
        assert not isinstance(pilot.app.screen, PickerScreen)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, RewindScreen))
        await pilot.press("enter")  # the first choice: code
        await until(pilot, lambda: services.rewinds == [(1, "code")])


@pytest.mark.usefixtures("configured")
async def test_rewind_right_after_resume_lists_the_saved_turns(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """``reasonix -c`` then ``/rewind`` before any prompt: the saved session's turns
    are offered (not "No turns yet."), and the rewind works."""
    (workspace / "a.txt").write_text("one\n")
    first = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with first.run_test(size=SIZE) as pilot:
        await _two_turns(pilot, configured, workspace)
    services = EngineServices(workspace, home=home, permission_mode="yolo", continue_last=True)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: session(pilot).saved_drawn.is_set())
        await send(pilot, "/rewind")
        await _pick(pilot, 2, "code")
        await pilot.press("enter")
        await until(pilot, lambda: (workspace / "a.txt").read_text() == "two\n")


async def test_no_code_choice_when_no_file_changed_since_the_turn(make_app) -> None:  # type: ignore[no-untyped-def]
    from reasonix_tui.services import RewindPreview, RewindTurn

    app, _ = make_app(
        rewind_history=[RewindTurn(number=1, head="first")],
        rewind_previews={1: RewindPreview(diff="", note="no file was changed since that turn")},
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, RewindScreen))
        options = pilot.app.screen.query_one("#choices")
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids == ["chat", "fork"]


async def test_rewind_rows_keep_one_line_at_80_columns(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """A long prompt beside a turn with no edits: each row stays on one line at 80
    columns (the prompt cut with …), the right column short."""
    (workspace / "a.txt").write_text("one\n")
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        long_prompt = "please make it two and then tell me everything about it " * 4
        _bash_turn(configured, "echo two > a.txt", "made it two")
        await send(pilot, long_prompt)
        await _answered(pilot, configured, 2)
        configured.enqueue(Reply(content="nothing to do"))
        await send(pilot, "PLANIT again")
        await _answered(pilot, configured, 3)
        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        picker = pilot.app.screen
        await pilot.pause()
        assert picker.shown[0].detail.endswith("no edits")
        assert picker.shown[1].detail.endswith("1 file")
        assert "…" in picker.shown[1].label
        options = picker.query_one("OptionList")
        await until(pilot, lambda: options.virtual_size.height > 0)
        assert options.virtual_size.height == options.option_count  # one line per row
