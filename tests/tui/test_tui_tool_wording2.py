"""The model's instructions stay off the cards (issue 30, item 5): an edit that did not
apply says so in people's words (the model reads where the text was not found and to
read the file again), and a bash card says a failure's exit code in its header, not as
the model's "[exit code N]" line. Live and resumed (``-c``) draw the same; the model's
requests carry the text they always had."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from tests.tui.test_tui_tool_wording import SIZE, card_texts, tool_messages
from tests.tui.tui_helpers import send, session
from tests.tui.tui_helpers import until as _until


async def until(pilot, predicate, within: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    try:
        await _until(pilot, predicate, within)
    except AssertionError:
        raise AssertionError(card_texts(pilot)) from None


pytestmark = pytest.mark.usefixtures("configured")


async def _live_then_resumed(
    workspace: Path, home: Path, configured, calls: list[ToolCallSpec], expected: list[str]
) -> None:  # type: ignore[no-untyped-def]
    configured.enqueue(*(Reply(tool_calls=[call]) for call in calls), Reply(content="ok"))
    app = ReasonixApp(EngineServices(workspace, home=home, permission_mode="yolo"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await until(
            pilot, lambda: not session(pilot).busy and len(configured.requests) > len(calls)
        )
        await until(pilot, lambda: card_texts(pilot) == expected, within=30)
    resumed = ReasonixApp(EngineServices(workspace, home=home, continue_last=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: card_texts(pilot) == expected)


async def test_an_edit_that_did_not_apply_says_so_in_peoples_words(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    (workspace / "notes.py").write_text("x = 1\n")
    read = ToolCallSpec("read_file", json.dumps({"path": "notes.py"}))
    edit = {"path": "notes.py", "old_string": "y = 1", "new_string": "y = 2"}
    many = {"path": "notes.py", "edits": [{"old_string": "z", "new_string": "w"}]}
    await _live_then_resumed(
        workspace,
        home,
        configured,
        [
            read,
            ToolCallSpec("edit_file", json.dumps(edit)),
            ToolCallSpec("multi_edit", json.dumps(many)),
        ],
        [
            "read_file  notes.py  ✓ ok\nRead 1 line · click to expand",
            "edit_file  notes.py  ✗ error\nNot changed: the text to replace is not in the file.",
            "multi_edit  notes.py  ✗ error\nNot changed: edit 1 of 1 did not apply.",
        ],
    )
    sent = [str(m["content"]) for m in tool_messages(configured)]
    assert sent[1].startswith("old_string was not found in notes.py.")
    assert sent[1].endswith(
        "Read the relevant part again with read_file and retry with the exact text."
    )
    assert sent[2].startswith("edits[0] failed: old_string was not found in notes.py.")
    assert (workspace / "notes.py").read_text() == "x = 1\n"


async def test_a_bash_card_says_the_exit_code_in_its_header(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    ok = ToolCallSpec("bash", json.dumps({"command": "echo hi"}))
    failed = ToolCallSpec("bash", json.dumps({"command": "echo oops; exit 3"}))
    quiet = ToolCallSpec("bash", json.dumps({"command": "true"}))
    await _live_then_resumed(
        workspace,
        home,
        configured,
        [ok, failed, quiet],
        [
            "bash  echo hi  ✓ ok\nhi",
            "bash  echo oops; exit 3  ✗ exit code 3\noops",
            "bash  true  ✓ ok\n(no output)",
        ],
    )
    sent = [str(m["content"]) for m in tool_messages(configured)]
    assert sent == ["hi\n[exit code 0]", "oops\n[exit code 3]", "(no output)\n[exit code 0]"]


async def _dialog_text(make_app, request) -> str:  # type: ignore[no-untyped-def]

    from reasonix_tui.screens.approval import ApprovalScreen

    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        dialog = ApprovalScreen(request)
        app.push_screen(dialog)
        await pilot.pause()
        return "\n".join(str(w.render()) for w in dialog.query("#summary, #arguments"))


async def test_an_edit_approval_shows_the_diff_not_the_strings(make_app) -> None:  # type: ignore[no-untyped-def]
    from reasonix_core.permission.approver import ApprovalRequest

    request = ApprovalRequest(
        tool="edit_file",
        arguments={
            "path": "a.py",
            "old_string": "x = 1",
            "new_string": "x = 2",
            "replace_all": True,
        },
        call_id="c1",
        read_only=False,
        scope=None,
        summary="Edit a.py",
        preview="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
    )
    shown = await _dialog_text(make_app, request)
    assert "old_string" not in shown and "new_string" not in shown
    assert "replace_all: yes" in shown


async def test_structured_arguments_read_as_lines_not_a_repr(make_app) -> None:  # type: ignore[no-untyped-def]
    from reasonix_core.permission.approver import ApprovalRequest

    request = ApprovalRequest(
        tool="mcp__db__query",
        arguments={"tables": ["users", "orders"], "options": {"deep": True, "limit": 5}},
        call_id="c1",
        read_only=False,
        scope=None,
    )
    shown = await _dialog_text(make_app, request)
    assert shown.splitlines() == [
        "tables:",
        "  • users",
        "  • orders",
        "options:",
        "  deep: yes",
        "  limit: 5",
    ]
