"""Dialogs never hide the transcript, in a real terminal at 80×24 (issue 30, item 1):
tmux runs ``python -m reasonix_tui`` against the loopback fixture. The ask question,
the plan approval (a plan longer than the screen), the pickers (/model, /rewind,
/resume, Ctrl+R, /cache, /login) and the rewind preview of a long diff each open with
the transcript's last lines still drawn above them, and their choices and key hints on
screen. (The long write_file approval is in test_tui_docked_dialogs_tmux.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from tmux_screens import docked_in_view, wait_until
from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec

pytestmark = tmux_test_marks

WIDTH, HEIGHT = 80, 24
ASK_LEAD_IN = "Let me ask you one thing first."
PLAN_LEAD_IN = "Here is my plan for the change."
PLAN = "# The plan\n\n" + "".join(f"{n}. Step number {n} of the plan\n" for n in range(1, 41))
QUESTION = {
    "questions": [
        {"question": "Which database should the tests use?", "options": ["SQLite", "Postgres"]}
    ]
}


def dialog_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        answer = messages[-1].get("content") or ""
        return Reply(content=f"Noted: {answer.splitlines()[-1][:50]}")
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    last = users[-1] if users and isinstance(users[-1], str) else ""
    if "ASK-ME" in last:
        return Reply(content=ASK_LEAD_IN, tool_calls=[ToolCallSpec("ask", json.dumps(QUESTION))])
    if "PLAN-IT" in last:
        call = ToolCallSpec("exit_plan_mode", json.dumps({"plan": PLAN}))
        return Reply(content=PLAN_LEAD_IN, tool_calls=[call])
    return Reply(content=f"You said: {last.splitlines()[0] if last else ''}")


def fits(screen: str) -> None:
    assert len(screen.splitlines()) <= HEIGHT, screen


def test_a_question_and_a_long_plan_keep_the_lead_in_and_the_choices_in_view(
    tmp_path: Path,
) -> None:
    with (
        fixture_provider(tmp_path, responder=dialog_responder) as provider,
        reasonix_in_tmux(
            provider,
            name="reasonix-asked",
            args="--permission-mode plan",
            width=WIDTH,
            height=HEIGHT,
        ) as pane,
    ):
        pane.wait_for("plan  ready")
        pane.send_keys("ASK-ME about the database", "Enter")
        screen = wait_until(
            pane,
            docked_in_view(
                ASK_LEAD_IN,
                "Which database should the tests use?",
                "SQLite",
                "Postgres",
                "Esc decline to answer",
            ),
            "the question never showed under the lead-in with its options and keys",
        )
        fits(screen)
        pane.send_keys("Down", "Enter")  # the second option
        pane.wait_for("Noted: A: Postgres")

        pane.send_keys("PLAN-IT for the change", "Enter")
        screen = wait_until(
            pane,
            docked_in_view(
                PLAN_LEAD_IN,
                "Plan ready for approval",
                "Step number 1 of the plan",
                "approve and execute",
                "keep planning",
                "reject",
            ),
            "the plan approval never showed under the lead-in with its keys",
        )
        fits(screen)
        assert "Step number 40 of the plan" not in screen  # the plan scrolls inside
        pane.send_keys("Enter")  # approve
        pane.wait_for("ask  ready")
        pane.send_keys("C-d")


PICKERS = [
    # (keys, the dialog's title, what is pinned on screen)
    (("/model", "Enter"), "Model", ("fixture/deepseek-flash", "Enter pick", "Esc close")),
    (("/rewind", "Enter"), "Rewind to the start of a turn", ("hello there", "Esc close")),
    (("/resume", "Enter"), "Resume a session", ("hello there", "· 1 turn ", "Esc close")),
    (("C-r",), "Search prompt history", ("hello there", "Esc close")),
    (("/cache", "Enter"), "Prompt cache", ("executor", "Esc close")),
    (("/login", "Enter"), "API key", ("FIXTURE_API_KEY", "Esc cancel")),
]


def test_every_picker_keeps_the_answer_above_it_at_80x24(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=dialog_responder) as provider,
        reasonix_in_tmux(provider, name="reasonix-pickers", width=WIDTH, height=HEIGHT) as pane,
    ):
        pane.wait_for("ask  ready")
        pane.send_and_await_echo("hello there")
        for keys, title, pinned in PICKERS:
            pane.send_keys(*keys)
            screen = wait_until(
                pane,
                docked_in_view("You said: hello there", title, *pinned),
                f"{title!r} never showed under the last answer with its choices and keys",
            )
            fits(screen)
            pane.send_keys("Escape")
            pane.wait_for_gone(title if title != "Model" else "Enter pick")
            pane.wait_for("Ask Reasonix")
        pane.send_keys("C-d")


REPORT = "".join(f"line {n} of the report\n" for n in range(1, 81))


def report_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return Reply(content="The report is written.")
    call = ToolCallSpec("write_file", json.dumps({"path": "REPORT.md", "content": REPORT}))
    return Reply(content="Let me write the report.", tool_calls=[call])


def test_a_rewind_preview_pins_its_choices_under_a_long_diff_at_80x24(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=report_responder) as provider,
        reasonix_in_tmux(
            provider,
            name="reasonix-rewound",
            args="--permission-mode yolo",
            width=WIDTH,
            height=HEIGHT,
        ) as pane,
    ):
        pane.wait_for("ready")
        pane.send_keys("Write the report", "Enter")
        pane.wait_for("The report is written.")
        pane.send_keys("/rewind", "Enter")
        pane.wait_for("1 file")
        pane.send_keys("Enter")
        screen = wait_until(
            pane,
            docked_in_view(
                "The report is written.",
                "Rewind to turn 1",
                "-line 1 of the report",
                "Code: put the files back",
                "Conversation: continue from just before this turn",
                "Fork: a new session",
                "Esc close",
            ),
            "the rewind preview never showed under the answer with its choices and keys",
        )
        fits(screen)
        assert "-line 80 of the report" not in screen  # the diff scrolls inside
        pane.send_keys("Enter")  # Code: the file goes back to before the turn
        wait_until(pane, lambda _: not (provider.workspace / "REPORT.md").exists(), "never rewound")
        pane.send_keys("C-d")
