"""The real AppServices over the core engine (no Textual needed for these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix_tui.engine import EngineServices

pytestmark = pytest.mark.usefixtures("configured")


def test_shift_tab_cycle_is_ask_auto_plan(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home)
    assert services.permission_mode == "ask"
    assert services.permission_modes == ("ask", "auto", "plan")


def test_a_session_started_in_yolo_can_cycle_back_to_it(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    assert services.permission_modes == ("ask", "auto", "plan", "yolo")


def test_models_efforts_and_key_state(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home)
    assert services.models() == ["fixture/deepseek-flash", "fixture/deepseek-v4-pro"]
    assert "max" in services.efforts() and "disabled" in services.efforts()
    assert services.needs_api_key() is False
    with pytest.raises(ValueError):
        services.set_effort("ludicrous")
    services.set_model("deepseek-v4-pro")
    assert services.model == "deepseek-v4-pro"
    with pytest.raises(ValueError):
        services.set_model("no-such-model")


async def test_sessions_start_from_the_apps_skills(workspace: Path, home: Path, server) -> None:
    import json

    import anyio

    from reasonix_core import events as ev
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_testkit import Reply
    from tests.core.test_skills import skill_md, write_skill

    root = workspace / ".reasonix" / "skills"
    write_skill(root, "tidy", skill_md("tidy", "Tidy the imports"))
    services = EngineServices(workspace, home=home)
    assert services.skills is not None and [n for n, _, _ in services.skills.commands()] == ["tidy"]
    # Added after the app started: not in this app's sessions (one snapshot per app).
    write_skill(root, "later", skill_md("later", "Added later"))
    server.enqueue(Reply(content="ok"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        turn = [e async for e in runner.run("hi")]
        tg.cancel_scope.cancel()
    assert isinstance(turn[-1], ev.TurnFinished)
    body = json.loads(server.requests[0].body)
    system = body["messages"][0]["content"]
    assert "- tidy: Tidy the imports" in system and "later" not in system
    assert "run_skill" in [t["function"]["name"] for t in body["tools"]]
