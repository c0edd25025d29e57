"""The write-scope grant dialog through the real engine (issue 19 item 8): bash asks for
``additional_write_dirs``; the user answers once, for the session, or deny. The preset
is yolo, so the command itself is never asked about: only the folder is."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.screens.approval import ApprovalScreen
from tests.tui.tui_helpers import send, session, until

SIZE = (100, 32)
WHY = "the generator writes the sibling checkout"


@pytest.fixture
def shared() -> Iterator[Path]:
    # Under /var/tmp: the sandbox's own /tmp is a tmpfs.
    root = Path(tempfile.mkdtemp(prefix="rx-grant-", dir="/var/tmp")).resolve()
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _write_turn(server: object, shared: Path, name: str) -> None:
    args = {
        "command": f"echo hi > {shared}/{name}",
        "additional_write_dirs": [str(shared)],
        "justification": WHY,
    }
    server.enqueue(Reply(tool_calls=[ToolCallSpec("bash", json.dumps(args))]))  # type: ignore[attr-defined]
    server.enqueue(Reply(content="done"))  # type: ignore[attr-defined]


async def _turn(pilot, server, shared: Path, name: str, key: str | None) -> None:  # type: ignore[no-untyped-def]
    """One turn writing ``shared/name``; ``key`` answers the grant dialog (None: no
    dialog may appear)."""
    before = len(server.requests)
    _write_turn(server, shared, name)
    await send(pilot, f"write {name}")
    screen = session(pilot)
    if key is not None:
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen), 30)
        dialog = pilot.app.screen
        assert isinstance(dialog, ApprovalScreen)
        assert dialog.request.write_dirs == (str(shared),)
        assert dialog.request.justification == WHY
        await pilot.press(key)
    await until(pilot, lambda: len(server.requests) >= before + 2 and not screen.busy, 30)
    await pilot.pause()
    assert not isinstance(pilot.app.screen, ApprovalScreen)


@pytest.mark.usefixtures("configured")
async def test_grant_once_then_session_then_reused(
    workspace: Path, home: Path, configured, shared: Path
) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _turn(pilot, configured, shared, "once.txt", "1")
        assert (shared / "once.txt").read_text() == "hi\n"
        # Once means once: the next call asks again; this time for the session.
        await _turn(pilot, configured, shared, "session.txt", "2")
        assert (shared / "session.txt").read_text() == "hi\n"
        # The session grant covers the next call without a dialog.
        await _turn(pilot, configured, shared, "reused.txt", None)
        assert (shared / "reused.txt").read_text() == "hi\n"


@pytest.mark.usefixtures("configured")
async def test_deny_refuses_the_folder_and_runs_nothing(
    workspace: Path, home: Path, configured, shared: Path
) -> None:  # type: ignore[no-untyped-def]
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _turn(pilot, configured, shared, "denied.txt", "3")
        assert not (shared / "denied.txt").exists()
        messages = configured.requests[-1].json["messages"]
        (result,) = [m for m in messages if m["role"] == "tool"]
        assert "The user denied bash write access" in result["content"]


@pytest.mark.usefixtures("configured")
async def test_a_hostile_justification_cannot_push_the_command_off_the_dialog(
    workspace: Path, home: Path, configured, shared: Path
) -> None:  # type: ignore[no-untyped-def]
    """The justification is the model's text: blank lines must not push the real
    command and the choices out of sight under a fake one, and markup or escapes
    show literally."""
    fake = "[bold]cache[/bold] \x1b[31m" + "\n" * 60 + "command: echo harmless"
    odd = shared / "odd\n  /home/someone/cache"  # a folder name that fakes a second line
    odd.mkdir(parents=True)
    args = {
        "command": f"echo pwned > {shared}/x.txt",
        "additional_write_dirs": [str(shared), str(odd)],
        "justification": fake,
    }
    configured.enqueue(Reply(tool_calls=[ToolCallSpec("bash", json.dumps(args))]))
    configured.enqueue(Reply(content="done"))
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen), 30)
        await pilot.pause()
        dialog = pilot.app.screen
        why = str(dialog.query_one("#summary").render())
        assert "\n" not in why.strip() and "[bold]cache[/bold]" in why and "\\x1b" in why
        folders = str(dialog.query_one("#folders").render()).strip("\n").splitlines()
        assert len(folders) == 2 and folders[1].endswith("odd\\n  /home/someone/cache")
        command = dialog.query_one("#arguments")
        assert f"echo pwned > {shared}/x.txt" in str(command.render())
        assert 0 < command.region.height and command.region.bottom <= SIZE[1], command.region
        await pilot.press("3")
        await until(pilot, lambda: not session(pilot).busy, 30)
    assert not (shared / "x.txt").exists()


@pytest.mark.usefixtures("configured")
async def test_a_session_grant_ends_with_the_session(
    workspace: Path, home: Path, configured, shared: Path
) -> None:  # type: ignore[no-untyped-def]
    """A grant "for this session" ends with the conversation: after /new the folder is asked
    about again (the grant lives in the session's permission gate, never in a file)."""
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _turn(pilot, configured, shared, "first.txt", "2")
        await send(pilot, "/new")
        await pilot.pause()
        await _turn(pilot, configured, shared, "after-new.txt", "3")
        assert not (shared / "after-new.txt").exists()
