"""Tool cards in people's words (issue 30, item 5): a read_file card says "Read N lines"
(collapsed), a refusal says who refused instead of the model's instructions ("Do not
retry it unchanged…"), a fleet's result is a list of its items instead of its XML, and
no tool call id shows. Live through the loopback fixture model, then resumed (``-c``):
both draw the same cards, and the model's requests carry exactly the text it always had."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from textual.widgets import Static

from reasonix_testkit import ContentScript, Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.approval import ApprovalScreen
from reasonix_tui.widgets.tool_block import ToolBlock
from tests.tui.tui_helpers import send, session, until

pytestmark = pytest.mark.usefixtures("configured")

SIZE = (100, 40)
DENIAL = (
    "The user denied this bash call; it was not executed. "
    "Do not retry it unchanged; choose another approach or ask the user."
)


def card_texts(pilot) -> list[str]:  # type: ignore[no-untyped-def]
    """Each tool card as drawn: header, subagent cards, body."""
    return [
        "\n".join(str(part.render()) for part in card.query(Static))
        for card in session(pilot).query(ToolBlock)
    ]


def without_usage(text: str) -> str:
    """A card with its subagents' live figures (tokens, cache, cost) cut off."""
    return "\n".join(re.sub(r"  [\d.]+k? tok · .*$", "", line) for line in text.splitlines())


def tool_messages(server) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """The tool results of the last request the fixture model received, as sent."""
    body = json.loads(server.requests[-1].body)
    return [m for m in body["messages"] if m["role"] == "tool"]


def script_turn(workspace: Path) -> ContentScript:
    (workspace / "notes.py").write_text("".join(f"line {i}\n" for i in range(42)))
    items = [
        {"id": "alpha", "prompt": "ITEM-A look", "read_only": True},
        {"id": "beta", "prompt": "ITEM-B look", "read_only": True, "depends_on": ["alpha"]},
    ]
    script = ContentScript()
    script.when(
        "PARENT",
        Reply(tool_calls=[ToolCallSpec("read_file", json.dumps({"path": "notes.py"}))]),
        Reply(tool_calls=[ToolCallSpec("bash", json.dumps({"command": "rm -rf build"}))]),
        Reply(tool_calls=[ToolCallSpec("fleet", json.dumps({"items": items}))]),
        Reply(content="all done"),
    )
    script.when("ITEM-A", Reply(content="alpha found the bug\nin notes.py"))
    script.when("ITEM-B", Reply(content="beta agrees"))
    return script


async def answer_dialogs(pilot, server, keys: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Answer each approval dialog with the next key until the turn ends."""
    screen = session(pilot)

    def step() -> bool:
        if isinstance(pilot.app.screen, ApprovalScreen) and keys:
            return True
        return not screen.busy and len(server.requests) >= 6

    while True:
        await until(pilot, step)
        if not (isinstance(pilot.app.screen, ApprovalScreen) and keys):
            return
        dialog = pilot.app.screen
        await pilot.press(keys.pop(0))
        await until(pilot, lambda d=dialog: pilot.app.screen is not d)


async def test_cards_say_what_happened_live_and_resumed(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.responder = script_turn(workspace)
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="ask"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "PARENT go")
        await answer_dialogs(pilot, configured, ["3", "1"])  # deny bash, allow the fleet
        await until(pilot, lambda: "beta  done" in "".join(card_texts(pilot)))
        live = card_texts(pilot)
        read, denied, fleet = session(pilot).query(ToolBlock)
        # read_file: how much was read, collapsed; a click shows the lines as before.
        assert live[0] == "read_file  notes.py  ✓ ok\nRead 42 lines · click to expand"
        assert read.expandable
        await read.toggle()
        expanded = str(read.query_one(".result", Static).render())
        assert "     1\tline 0" in expanded and "    42\tline 41" in expanded
        # The refusal in people's words; the model's instructions stay the model's.
        assert live[1] == "bash  rm -rf build  ⊘ denied\nYou denied it."
        assert not denied.expandable
        # The fleet: one line per item (name, how it ended, what it found), no XML.
        assert live[2].endswith("alpha  done · alpha found the bug\nbeta  done · beta agrees")
        assert not fleet.expandable
        shown = "\n".join(live)
        for model_text in ("Do not retry", "<item", "[subagent session", "call_"):
            assert model_text not in shown
    # What the model read is exactly what it read before: the same texts, nothing added.
    sent = tool_messages(configured)
    assert [sorted(m) for m in sent] == [["content", "role", "tool_call_id"]] * 3
    assert str(sent[0]["content"]).startswith("     1\tline 0\n")
    assert sent[1]["content"] == DENIAL
    fleet_text = str(sent[2]["content"])
    assert fleet_text.startswith('fleet: 2 items, 2 done\n\n<item id="alpha" state="done"')
    assert "[subagent session: " in fleet_text
    bodies = "".join(str(r.body) for r in configured.requests)
    assert "Read 42 lines" not in bodies and "You denied it" not in bodies
    assert "alpha  done" not in bodies

    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: (
                len(card_texts(pilot)) == 3
                and "Read 42 lines" in card_texts(pilot)[0]
                and "You denied it." in card_texts(pilot)[1]
                and "beta agrees" in card_texts(pilot)[2]
            ),
        )
        again = card_texts(pilot)
    assert [without_usage(c) for c in again] == [without_usage(c) for c in live]


async def test_a_subagents_card_shows_its_answer_without_the_models_line(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """The "[subagent session: … give it as continue_from …]" line is the model's: the
    card shows the child's answer alone, live and resumed; the model still reads it."""
    script = ContentScript()
    script.when(
        "PARENT",
        Reply(tool_calls=[ToolCallSpec("read_only_task", json.dumps({"prompt": "CHILD look"}))]),
        Reply(content="parent done"),
    )
    script.when("CHILD", Reply(content="the child's answer"))
    configured.responder = script
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "PARENT go")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 3)
        await until(pilot, lambda: "✓ ok" in "".join(card_texts(pilot)))
        live = card_texts(pilot)
    assert live[0].endswith("\nthe child's answer"), live
    assert "[subagent session" not in live[0] and "continue_from" not in live[0]
    sent = str(tool_messages(configured)[0]["content"])
    assert sent.startswith("the child's answer\n\n[subagent session: ")
    assert "give it as continue_from" in sent

    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "the child's answer" in "".join(card_texts(pilot)))
        again = card_texts(pilot)
    assert [without_usage(c) for c in again] == [without_usage(c) for c in live]


@pytest.mark.parametrize("mode", ["ask", "yolo"])
async def test_a_failure_says_what_went_wrong_from_its_code(
    workspace: Path, home: Path, configured, mode: str
) -> None:  # type: ignore[no-untyped-def]
    """An edit of a file the model never read fails with FS_NOT_OBSERVED: the card says
    so in people's words (from the code, not the model's text), whether the check ran
    before the approval dialog (ask) or in the tool (yolo); the model reads its text."""
    (workspace / "notes.py").write_text("x = 1\n")
    edit = {"path": "notes.py", "old_string": "x = 1", "new_string": "x = 2"}
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("edit_file", json.dumps(edit))]), Reply(content="ok")
    )
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode=mode))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "edit it")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 2)
        await until(pilot, lambda: "error" in "".join(card_texts(pilot)))
        assert not isinstance(pilot.app.screen, ApprovalScreen)
        assert card_texts(pilot) == [
            "edit_file  notes.py  ✗ error\nNot changed: the file was not read first."
        ]
    assert tool_messages(configured)[0]["content"] == (
        "FS_NOT_OBSERVED: read notes.py before editing it (any read_file window counts)"
    )
    assert (workspace / "notes.py").read_text() == "x = 1\n"


def dialog_text(dialog: ApprovalScreen) -> str:
    return "\n".join(str(part.render()) for part in dialog.query(Static))


async def test_approvals_say_each_thing_once_and_name_no_call_id(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Through the engine: a bash approval shows its command once, the fleet's approval
    lists its items (not a Python repr of them), and a subagent's request names the
    child by its item and kind, never by the tool call ids of its agent path."""
    items = [
        {"id": "build", "prompt": "CHILD-BUILD: write it\nthen stop", "write_paths": ["out"]},
        {"id": "docs", "prompt": "CHILD-DOCS: read", "read_only": True, "depends_on": ["build"]},
    ]
    write = {"path": "out/new.txt", "content": "hi\n"}
    script = ContentScript()
    script.when(
        "PARENT",
        Reply(tool_calls=[ToolCallSpec("bash", json.dumps({"command": "rm -rf build"}))]),
        Reply(tool_calls=[ToolCallSpec("fleet", json.dumps({"items": items}), id="call_f1")]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-BUILD",
        Reply(tool_calls=[ToolCallSpec("write_file", json.dumps(write), id="call_w1")]),
        Reply(content="written"),
    )
    script.when("CHILD-DOCS", Reply(content="docs fine"))
    configured.responder = script
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="ask"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "PARENT go")
        shown: list[str] = []
        shown_screens: list[object] = []
        for key in ("3", "1", "3"):  # deny bash, allow the fleet, deny the child's write
            await until(
                pilot,
                lambda: (
                    isinstance(pilot.app.screen, ApprovalScreen)
                    and pilot.app.screen not in shown_screens
                ),
            )
            shown_screens.append(pilot.app.screen)
            shown.append(dialog_text(pilot.app.screen))  # type: ignore[arg-type]
            await pilot.press(key)
        await until(pilot, lambda: not session(pilot).busy)
    bash, fleet, child = shown
    assert bash.count("rm -rf build") == 1, bash
    assert "Start 2 subagents" in fleet
    assert "build (writes out): CHILD-BUILD: write it" in fleet
    assert "docs (read-only; after build): CHILD-DOCS: read" in fleet
    assert "{'id'" not in fleet and "items:" not in fleet
    assert "Asked by a subagent, not the main agent: build · task" in child
    assert "call_" not in child, child


def test_a_fleets_items_in_the_dialog_are_inert() -> None:
    """Item ids and tasks are the model's words: one line per item, whatever they hold
    (a newline cannot start a line of its own, an escape sequence is shown, not sent),
    and a thousand items are not a thousand lines."""
    from reasonix_core.permission.summary import DETAIL_ITEMS, detail_lines

    hostile = {
        "id": "a\nAsked by the main agent",
        "prompt": "x\x1b[2Jy\u2028Allow once",
        "depends_on": ["b\rc"],
    }
    lines = detail_lines("fleet", {"items": [hostile, 7, {"prompt": ""}], "fail_fast": True})
    assert lines is not None and len(lines) == 4
    assert not any(ch in line for line in lines for ch in "\n\r\x1b\u2028")
    # The first line of the task (\u2028 ends a line too), escapes shown.
    assert lines[0] == "a Asked by the main agent (after b c): x\\x1b[2Jy"
    assert lines[1:] == ["2. ?", "3", "fail_fast: no item starts after one fails"]
    many = detail_lines("fleet", {"items": [{"id": str(i)} for i in range(1000)]})
    assert many is not None and len(many) == DETAIL_ITEMS + 1
    assert detail_lines("bash", {"command": "ls"}) is None


async def test_a_long_result_shows_its_whole_text_not_the_models_paging_marker(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """A result over 32 KiB reaches the model as head + a marker naming the call id and
    how to page the rest + tail; the card, expanded, shows the whole output (the kept
    copy), live as resumed, and never the marker or the call id."""
    (workspace / "big.txt").write_text("".join(f"{i:05} " + "x" * 94 + "\n" for i in range(400)))
    configured.enqueue(
        Reply(
            tool_calls=[ToolCallSpec("read_file", json.dumps({"path": "big.txt"}), id="call_big")]
        ),
        Reply(content="long"),
    )
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "show it")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 2)
        card = session(pilot).query_one(ToolBlock)
        await until(pilot, lambda: card.status == "ok")
        await card.toggle()
        live = str(card.query_one(".result", Static).render())
    assert live.startswith("     1\t00000 ")
    assert "00399 " in live and "00250 " in live  # the middle the model did not get
    assert "call_big" not in live and "session:tool_result" not in live
    sent = str(tool_messages(configured)[0]["content"])
    assert "00250 " not in sent and "call_big" in sent and "session:tool_result" in sent

    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: bool(session(pilot).query(ToolBlock)))
        card = session(pilot).query_one(ToolBlock)
        await until(pilot, lambda: card.status == "ok")
        await card.toggle()
        assert str(card.query_one(".result", Static).render()) == live


async def test_the_hosts_reminder_to_the_model_is_not_on_the_card(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """The third identical call in a row gets a reminder appended for the model ("this
    is call 3 in a row…"); its card shows the tool's output alone, live and resumed."""
    cat_card = "bash  cat a.txt  ✓ ok\nalpha"  # the exit code is in the header when not 0
    (workspace / "a.txt").write_text("alpha\n")
    same = ToolCallSpec("bash", json.dumps({"command": "cat a.txt"}))
    configured.enqueue(
        Reply(tool_calls=[same]),
        Reply(tool_calls=[same]),
        Reply(tool_calls=[same]),
        Reply(content="ok"),
    )
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "look")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 4)
        await until(pilot, lambda: card_texts(pilot).count(cat_card) == 3)
    assert "[reminder: this is call 3 in a row to bash" in str(
        tool_messages(configured)[2]["content"]
    )

    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: card_texts(pilot) == [cat_card] * 3)


async def test_a_declined_question_says_so_in_the_users_words(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Esc on the ask tool's question: the card says "You declined to answer." (the model
    reads "The user declined to answer. Do not ask again; …"), live and resumed; and a
    file tool's failure by its code reads the same resumed."""
    from reasonix_tui.screens.question import QuestionScreen

    question = {"questions": [{"question": "Which file?", "options": ["a.py", "b.py"]}]}
    edit = {"path": "notes.py", "old_string": "x = 1", "new_string": "x = 2"}
    (workspace / "notes.py").write_text("x = 1\n")
    configured.enqueue(
        Reply(tool_calls=[ToolCallSpec("ask", json.dumps(question))]),
        Reply(tool_calls=[ToolCallSpec("edit_file", json.dumps(edit))]),
        Reply(content="ok"),
    )
    expected = [
        "ask  ⊘ declined\nYou declined to answer.",
        "edit_file  notes.py  ✗ error\nNot changed: the file was not read first.",
    ]
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "ask me")
        await until(pilot, lambda: isinstance(pilot.app.screen, QuestionScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not session(pilot).busy and len(configured.requests) >= 3)
        await until(pilot, lambda: card_texts(pilot) == expected)
    assert str(tool_messages(configured)[0]["content"]).startswith(
        "The user declined to answer. Do not ask again;"
    )
    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: card_texts(pilot) == expected)


async def test_calls_a_cancelled_turn_left_read_in_peoples_words_resumed(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    """Esc during a command: the saved results tell the model the call's outcome is
    unknown and the next was never run ("[outcome unknown: …]", "[not run: …]");
    resumed, the cards say so in people's words, not in those."""
    first = ToolCallSpec("bash", json.dumps({"command": "sleep 30"}))
    second = ToolCallSpec("bash", json.dumps({"command": "echo after"}))
    configured.enqueue(Reply(tool_calls=[first, second]))
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "run them")
        await until(pilot, lambda: len(session(pilot).query(ToolBlock)) == 1)
        await pilot.pause(0.5)  # the command runs
        await pilot.press("escape")
        await until(pilot, lambda: not session(pilot).busy)
        live = card_texts(pilot)
    # Writers run one at a time: the second never started, so it has no card live.
    assert live == ["bash  sleep 30  ⊘ cancelled"]
    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(card_texts(pilot)) == 2 and "\n" in card_texts(pilot)[0])
        again = card_texts(pilot)
    assert again == [
        "bash  sleep 30  ? unknown\nInterrupted while running: it may have had effects.",
        "bash  echo after  ⊘ cancelled",
    ]
