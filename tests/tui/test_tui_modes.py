"""Plan mode, ``/plan`` and ``/goal`` in the app, over the real engine at the
loopback fixture: Shift+Tab puts the session in plan mode, a write is refused
until the user approves the plan in the dialog, a kept plan can be approved later
with ``/plan``, and ``/goal`` arms the core's goal driver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.plan_approval import PlanApprovalScreen
from tests.tui.tui_helpers import send, session, until

SIZE = (100, 32)
PLAN = "1. Write notes.txt with the word hello"

pytestmark = pytest.mark.usefixtures("configured")


def _call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ToolCallSpec(name, json.dumps(arguments))])


def _tool_results(server: object) -> list[str]:
    body = server.requests[-1].json  # type: ignore[attr-defined]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def _idle(pilot, server, requests: int) -> None:  # type: ignore[no-untyped-def]
    screen = session(pilot)
    await until(pilot, lambda: len(server.requests) >= requests and not screen.busy, 30)
    await pilot.pause()


async def _dialog(pilot) -> PlanApprovalScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(pilot.app.screen, PlanApprovalScreen), 30)
    dialog = pilot.app.screen
    assert isinstance(dialog, PlanApprovalScreen)
    return dialog


async def _enter_plan_mode(pilot) -> None:  # type: ignore[no-untyped-def]
    screen = session(pilot)
    for _ in range(3):
        if screen.status.state.mode == "plan":
            break
        await pilot.press("shift+tab")
    assert screen.status.state.mode == "plan"
    assert "approval" in screen.status.state.hint


async def test_shift_tab_cycles_ask_auto_plan_and_never_reaches_yolo(
    workspace: Path, home: Path
) -> None:
    services = EngineServices(workspace, home=home)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = session(pilot)
        seen = []
        for _ in range(6):
            await pilot.press("shift+tab")
            seen.append(screen.status.state.mode)
        assert seen == ["auto", "plan", "ask", "auto", "plan", "ask"]
        await pilot.press("shift+tab", "shift+tab")
        assert screen.status.state.hint.startswith("plan: read-only tools")
        assert "● plan" in str(screen.status.render())


async def test_the_mode_hint_goes_soon_and_at_the_next_key(workspace: Path, home: Path) -> None:
    """Issue 30: the Shift+Tab hint hides the cache gauge, so it stays only briefly
    (a few seconds) and goes at once when the user types."""
    services = EngineServices(workspace, home=home)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = session(pilot)
        await pilot.press("shift+tab")
        assert screen.status.state.hint.startswith("auto")
        await until(pilot, lambda: not screen.status.state.hint)
        assert " · cache " in screen.status.render().plain
        await pilot.press("shift+tab")
        assert screen.status.state.hint.startswith("plan")
        await pilot.press("x")
        await pilot.pause()
        assert not screen.status.state.hint  # the key cleared it, no timer needed


async def test_plan_mode_blocks_a_write_until_the_user_approves(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    target = workspace / "notes.txt"
    configured.enqueue(_call("write_file", path="notes.txt", content="hello\n"))
    configured.enqueue(_call("exit_plan_mode", plan=PLAN))
    configured.enqueue(_call("write_file", path="notes.txt", content="hello\n"))
    configured.enqueue(Reply(content="done"))
    async with app.run_test(size=SIZE) as pilot:
        await _enter_plan_mode(pilot)
        assert services.permission_mode == "plan"
        await send(pilot, "write hello to notes.txt")
        dialog = await _dialog(pilot)
        assert dialog.plan == PLAN
        # The write before the approval was refused, and nothing is on disk.
        assert not target.exists()
        assert "plan mode is on" in _tool_results(configured)[0]
        await pilot.press("a")
        await _idle(pilot, configured, 4)
        assert target.read_text() == "hello\n"
        # The approval ended plan mode: the session is back on its preset.
        assert services.permission_mode == "auto"
        assert session(pilot).status.state.mode == "auto"


async def test_leaving_plan_mode_with_shift_tab_lets_writes_through(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    configured.enqueue(_call("write_file", path="a.txt", content="one\n"))
    configured.enqueue(Reply(content="refused"))
    configured.enqueue(_call("write_file", path="a.txt", content="two\n"))
    configured.enqueue(Reply(content="written"))
    async with app.run_test(size=SIZE) as pilot:
        await _enter_plan_mode(pilot)
        await send(pilot, "write a.txt")
        await _idle(pilot, configured, 2)
        assert not (workspace / "a.txt").exists()
        await pilot.press("shift+tab")  # plan -> ask
        await pilot.press("shift+tab")  # ask -> auto
        assert services.permission_mode == "auto"
        await send(pilot, "write a.txt now")
        await _idle(pilot, configured, 4)
        assert (workspace / "a.txt").read_text() == "two\n"


async def test_slash_plan_reopens_a_kept_plan_and_approving_executes_it(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    configured.enqueue(_call("exit_plan_mode", plan=PLAN))
    configured.enqueue(Reply(content="I will keep planning."))
    async with app.run_test(size=SIZE) as pilot:
        await _enter_plan_mode(pilot)
        await send(pilot, "write hello to notes.txt")
        await _dialog(pilot)
        await pilot.press("k")  # keep planning: nothing executes, the plan waits
        await _idle(pilot, configured, 2)
        assert not (workspace / "notes.txt").exists()
        assert services.permission_mode == "plan"

        configured.enqueue(_call("write_file", path="notes.txt", content="hello\n"))
        configured.enqueue(Reply(content="written"))
        await send(pilot, "/plan")
        dialog = await _dialog(pilot)
        assert dialog.plan == PLAN and dialog.title_text == "Plan waiting for approval"
        await pilot.press("a")
        await _idle(pilot, configured, 4)
        assert (workspace / "notes.txt").read_text() == "hello\n"
        # The executor's turn carries the plan in its user turn (the prefix only grows).
        users = [m for m in configured.requests[2].json["messages"] if m["role"] == "user"]
        assert f"<plan>\n{PLAN}\n</plan>" in users[-1]["content"]
        assert services.permission_mode == "auto"  # approving ended plan mode
        # Executed at most once: nothing waits any more.
        await send(pilot, "/plan")
        await until(pilot, lambda: "No plan is waiting" in _notices(pilot)[-1])
    # Resumed, the host's execution prompt is not the user's message (as live), and
    # /resume counts only the user's prompt (issue 30 N6).
    from reasonix_core.agent.session import list_sessions, open_session
    from reasonix_tui.replay import NoticeEntry, UserEntry, replay_entries

    saved = replay_entries(open_session(home / "sessions", workspace, None).messages)
    assert [e.text for e in saved if isinstance(e, UserEntry)] == ["write hello to notes.txt"]
    assert any(isinstance(e, NoticeEntry) and "Plan approved" in e.text for e in saved)
    (listed,) = list_sessions(home / "sessions", workspace)
    assert listed.prompts == 1


async def test_slash_plan_reject_discards_the_plan(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    configured.enqueue(_call("exit_plan_mode", plan=PLAN))
    configured.enqueue(Reply(content="kept"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/plan")
        await until(pilot, lambda: "No plan is waiting" in _notices(pilot)[-1], 30)
        await _enter_plan_mode(pilot)
        await send(pilot, "plan it")
        await _dialog(pilot)
        await pilot.press("escape")  # Esc keeps planning
        await _idle(pilot, configured, 2)
        await send(pilot, "/plan")
        await _dialog(pilot)
        await pilot.press("r")
        await until(pilot, lambda: "Plan rejected" in _notices(pilot)[-1])
        await send(pilot, "/plan")
        await until(pilot, lambda: "No plan is waiting" in _notices(pilot)[-1])
        assert len(configured.requests) == 2  # nothing was executed


def _notices(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    from reasonix_tui.widgets.blocks import NoticeBlock

    return [n.text for n in session(pilot).query(NoticeBlock)]


async def test_goal_rounds_run_until_the_model_completes_the_goal(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    from tests.core.test_goal_mode import GoalScript, _update

    configured.responder = GoalScript(
        Reply(content="I did the first half."),  # a final answer: the goal goes on
        _update("complete", note="verified"),
        Reply(content="Done."),
    )
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(120, 32)) as pilot:
        await send(pilot, "/goal make the tests pass")
        await until(pilot, lambda: "The goal is complete." in _notices(pilot), 30)
        await _idle(pilot, configured, 3)
        texts = _notices(pilot)
        assert "Goal round 1 done (active)." in texts
        assert "Goal round 2 done (complete)." in texts
        users = [m for m in configured.requests[1].json["messages"] if m["role"] == "user"]
        assert users[0]["content"].startswith("make the tests pass")
        assert users[-1]["content"].startswith("Continue working toward the active goal.")
        # The host's rounds are not shown as typed by the user.
        from reasonix_tui.widgets.blocks import UserBlock

        shown = [str(b.text) for b in session(pilot).query(UserBlock)]
        assert not any("Continue working" in t for t in shown)
        bar = str(session(pilot).status.render())
        assert "goal: make the tests pass · round 2 · " in bar and "complete" in bar
        # Round 2 is the host's turn: marked in the session (never sent), listed as such.
        from reasonix_core.agent.session import open_session

        saved = open_session(home / "sessions", workspace, None).messages
        marks = [m.meta.get("host_turn") for m in saved if m.role == "user"]
        assert marks == [None, True]
        assert all("meta" not in m for m in configured.requests[-1].json["messages"])
        heads = [t.head for t in session(pilot).runner.rewind_turns()]
        assert heads[0].startswith("make the tests pass")
        assert heads[1].startswith("(goal round) Continue working")


async def test_goal_pause_stops_admission_then_resume_and_clear(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    import threading

    from tests.core.test_goal_mode import GoalScript, _update

    gate = threading.Event()

    def held(goal_id: str, revision: int) -> Reply:
        gate.wait(30)
        return Reply(content="first round's answer")

    configured.responder = GoalScript(
        held, _update("complete", note="verified"), Reply(content="Done.")
    )
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(120, 32)) as pilot:
        screen = session(pilot)
        await send(pilot, "/goal refactor the loader")
        await until(pilot, lambda: len(configured.requests) >= 1 or screen.busy, 30)
        assert screen.busy
        await send(pilot, "/goal pause")  # runs while the round does
        await until(pilot, lambda: "Goal paused" in _notices(pilot)[-1])
        assert "paused" in str(screen.status.render())
        gate.set()
        await _idle(pilot, configured, 1)
        assert len(configured.requests) == 1  # no second round was admitted
        await send(pilot, "/goal status")
        await until(pilot, lambda: _notices(pilot)[-1].startswith("Goal: refactor the loader"))
        assert "paused · 1 round · " in _notices(pilot)[-1]

        await send(pilot, "/goal resume")
        await until(pilot, lambda: "The goal is complete." in _notices(pilot), 30)
        await _idle(pilot, configured, 3)
        assert "round 2" in str(screen.status.render())

        await send(pilot, "/goal clear")
        await until(pilot, lambda: _notices(pilot)[-1] == "Goal cleared.")
        assert "goal" not in str(screen.status.render())


def test_a_saved_goal_round_is_drawn_as_the_hosts_not_the_users() -> None:
    from reasonix_core.messages import HOST_TURN, Message
    from reasonix_tui.replay import NoticeEntry, UserEntry, replay_entries

    entries = replay_entries(
        [
            Message(role="user", content="make the tests pass"),
            Message(role="assistant", content="half"),
            Message(
                role="user",
                content="Continue working toward the active goal.",
                meta={HOST_TURN: True},
            ),
            Message(role="assistant", content="done"),
        ]
    )
    assert isinstance(entries[0], UserEntry)
    assert isinstance(entries[2], NoticeEntry) and "goal round" in entries[2].text.lower()
    assert not any(isinstance(e, UserEntry) and "Continue" in e.text for e in entries)


async def test_esc_during_a_goal_round_disarms_the_goal(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    import threading

    from tests.core.test_goal_mode import GoalScript

    gate = threading.Event()

    def held(goal_id: str, revision: int) -> Reply:
        gate.wait(30)
        return Reply(content="late answer")

    configured.responder = GoalScript(held, Reply(content="never asked"))
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(120, 32)) as pilot:
        screen = session(pilot)
        await send(pilot, "/goal tidy the imports")
        await until(pilot, lambda: len(configured.requests) >= 1, 30)
        await pilot.press("escape")
        await until(pilot, lambda: not screen.busy, 30)
        gate.set()
        await send(pilot, "/goal status")
        await until(pilot, lambda: _notices(pilot)[-1].startswith("Goal: tidy the imports"))
        assert "active · not driven (/goal resume)" in _notices(pilot)[-1]
        await pilot.pause(0.3)
        assert len(configured.requests) == 1  # no round after the cancelled one


async def test_launched_in_plan_mode_blocks_writes_over_the_configured_preset(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    # `reasonix --permission-mode plan`: plan mode from the first turn, on top of the
    # config's preset (ask here), which an approved plan returns to.
    services = EngineServices(workspace, home=home, permission_mode="plan")
    app = ReasonixApp(services, cursor_blink=False)
    target = workspace / "notes.txt"
    configured.enqueue(_call("write_file", path="notes.txt", content="hello\n"))
    configured.enqueue(_call("exit_plan_mode", plan=PLAN))
    configured.enqueue(Reply(content="planned"))
    async with app.run_test(size=SIZE) as pilot:
        assert services.permission_mode == "plan"
        assert session(pilot).status.state.mode == "plan"
        await send(pilot, "write hello to notes.txt")
        dialog = await _dialog(pilot)
        assert dialog.plan == PLAN
        assert not target.exists()
        assert "plan mode is on" in _tool_results(configured)[0]
        await pilot.press("a")
        await _idle(pilot, configured, 3)
        assert services.permission_mode == "ask"
        assert session(pilot).status.state.mode == "ask"


async def test_the_goal_objective_shows_as_the_users_words_live_and_resumed(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 3: the objective is the user's message; the host's goal block
    (``<active-goal …>``, "Work toward this goal…") is never drawn as user text."""
    from reasonix_core.agent.session import open_session
    from reasonix_tui.replay import UserEntry, replay_entries
    from reasonix_tui.widgets.blocks import UserBlock
    from tests.core.test_goal_mode import GoalScript, _update

    configured.responder = GoalScript(
        Reply(content="First half."), _update("complete", note="ok"), Reply(content="Done.")
    )
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(120, 32)) as pilot:
        await send(pilot, "/goal make the tests pass")
        await until(pilot, lambda: "The goal is complete." in _notices(pilot), 30)
        await _idle(pilot, configured, 3)
        shown = [str(b.text) for b in session(pilot).query(UserBlock)]
        assert shown == ["make the tests pass"]
    saved = open_session(home / "sessions", workspace, None).messages
    users = [e.text for e in replay_entries(saved) if isinstance(e, UserEntry)]
    assert users == ["make the tests pass"]


async def test_goal_status_and_the_bar_count_the_running_round(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 3: mid-round, /goal status and the status bar say the same round
    and tokens (as update_goal does); the round in progress counts."""
    import threading

    from tests.core.test_goal_mode import GoalScript, _update

    gate = threading.Event()

    def held(goal_id: str, revision: int) -> Reply:
        gate.wait(30)
        return Reply(content="second round's answer")

    configured.responder = GoalScript(
        Reply(content="first round's answer"),
        held,
        _update("complete", note="verified"),
        Reply(content="Done."),
    )
    services = EngineServices(workspace, home=home, permission_mode="auto")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(140, 32)) as pilot:
        screen = session(pilot)
        await send(pilot, "/goal refactor the loader")
        await until(pilot, lambda: len(configured.requests) >= 2, 30)
        await until(pilot, lambda: "round 2" in str(screen.status.render()), 30)
        await send(pilot, "/goal status")
        await until(pilot, lambda: _notices(pilot)[-1].startswith("Goal: refactor the loader"))
        status = _notices(pilot)[-1]
        bar_goal = screen.status.state.goal
        assert bar_goal is not None and bar_goal.rounds == 2
        assert " 2 rounds · " in status
        assert f"{fmt_tokens(bar_goal.tokens)} tokens" in status
        gate.set()
        await until(pilot, lambda: "The goal is complete." in _notices(pilot), 30)
        await _idle(pilot, configured, 4)
        final = screen.status.state.goal
        assert final is not None and final.rounds == 3


def fmt_tokens(tokens: int) -> str:
    from reasonix_tui import format as fmt

    return fmt.tokens(tokens)
