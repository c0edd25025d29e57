"""The TUI's sessions read instruction files through the core (issue 31 item 1): an
import from outside the project is asked about through the app's approver, and what
was refused is said once, at the first turn."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import ApprovalDecision
from reasonix_testkit import Reply, ScriptedApprover
from reasonix_tui.engine import EngineServices

pytestmark = pytest.mark.usefixtures("configured")


async def test_an_outside_import_is_asked_about_and_a_refusal_shown(
    workspace: Path, home: Path, server
) -> None:
    user_home = Path.home()
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "team.md").write_text("team-rules-31", encoding="utf-8")
    (user_home / ".ssh").mkdir()
    (user_home / ".ssh" / "id_rsa").write_text("PRIVATE", encoding="utf-8")
    (workspace / "CLAUDE.md").write_text("@~/team.md @~/.ssh/id_rsa", encoding="utf-8")
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    server.enqueue(Reply(content="ok"), Reply(content="again"))
    services = EngineServices(workspace, home=home)
    first: list[ev.Event] = []
    second: list[ev.Event] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(approver)
        first += [e async for e in runner.run("hi")]
        second += [e async for e in runner.run("more")]
        tg.cancel_scope.cancel()
    assert [r.summary for r in approver.seen] == [
        "Include ~/team.md in the standing instructions "
        "(outside the project, imported by CLAUDE.md)"
    ]
    notices = [e.text for e in first if isinstance(e, ev.Notice)]
    assert notices == [
        "@~/.ssh/id_rsa (imported by CLAUDE.md): a protected path (keys and credentials); "
        "not included"
    ]
    assert not [e for e in second if isinstance(e, ev.Notice)]
    system = json.loads(server.requests[0].body)["messages"][0]["content"]
    assert "team-rules-31" in system and "PRIVATE" not in system
