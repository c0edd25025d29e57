"""`reasonix acp`: the session's built-in commands (/compact, /effort, /status,
/plan, /goal) offered in ``available_commands_update`` and run from a prompt,
over a real `reasonix acp` subprocess and the package's client."""

from __future__ import annotations

import pytest
from acp import text_block

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import write_config
from tests.core.test_acp import RecordingClient, agent


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


async def test_built_ins_are_offered_beside_custom_commands(workspace, cfg, home):
    (home / "commands").mkdir()
    (home / "commands" / "greet.md").write_text("---\ndescription: Say hello\n---\nHello.\n")
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("/status")])
    (offered,) = client.of("available_commands_update")
    names = {c.name: c for c in offered.available_commands}
    assert {"compact", "effort", "status", "plan", "goal", "greet"} <= set(names)
    assert names["goal"].input.root.hint == "<objective> | status | pause | resume | clear"
    assert "model" not in names and "rewind" not in names  # screens, or config options


async def test_status_effort_and_goal_answer_without_asking_the_model(workspace, cfg):
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        sid = new.session_id
        for text in ("/status", "/effort", "/effort nonsense", "/goal status", "/goal"):
            response = await conn.prompt(session_id=sid, prompt=[text_block(text)])
            assert response.stop_reason == "end_turn"
    said = client.text()
    assert f"session {sid}" in said and "mode ask" in said
    assert "Reasoning effort:" in said
    assert "/effort: unknown level 'nonsense'" in said
    assert "No goal in this session." in said
    assert "Usage: /goal" in said
    assert cfg.requests == []  # none of them reached the model


async def test_compact_folds_the_history_and_the_session_continues(workspace, cfg):
    # The fold itself is test_compaction*'s; here: /compact runs on the session, says
    # what it did, and the conversation goes on.
    cfg.enqueue(Reply(content="first answer " * 40))
    cfg.enqueue(Reply(content="after the fold"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("hello " * 40)])
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("/compact")])
        assert response.stop_reason == "end_turn"
        folded = client.text()
        await conn.prompt(session_id=new.session_id, prompt=[text_block("go on")])
    assert "History folded" in folded or "Nothing to compact yet: " in folded
    assert client.text().endswith("after the fold")


async def test_compact_with_nothing_to_compact_answers_the_terminal_apps_line(workspace, cfg):
    """Issue 30 item 8: a short session's /compact gives the compaction planner's one
    line, as the terminal app does; nothing is sent to the model."""
    cfg.enqueue(Reply(content="short answer"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("hello")])
        before = len(client.text())
        requests = len(cfg.requests)
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("/compact")])
        assert response.stop_reason == "end_turn"
        said = client.text()[before:]
    assert said == (
        "Nothing to compact yet: the conversation is short enough to keep whole.\n"
    )
    assert len(cfg.requests) == requests


async def test_plan_approves_a_waiting_plan_through_a_permission_request(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("exit_plan_mode", '{"plan":"1. add a test"}')]),
        Reply(content="keeping at it"),
        Reply(content="executed the plan"),
    )
    client = RecordingClient(["keep_planning", "approve_plan"])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        await conn.prompt(session_id=new.session_id, prompt=[text_block("plan")])
        before = len(client.updates)
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("/plan")])
    assert response.stop_reason == "end_turn"
    _keep, second = client.permissions
    assert second.title == "Approve the plan" and second.content[0].content.text == "1. add a test"
    said = "".join(
        u.content.text for _, u in client.updates[before:]
        if u.session_update == "agent_message_chunk"
    )  # fmt: skip
    assert said.startswith("Plan approved; executing it.") and said.endswith("executed the plan")
    # Plan mode ended with the approval: the client is told.
    assert [u.current_mode_id for u in client.of("current_mode_update")] == ["plan", "ask"]


async def test_goal_drives_rounds_until_the_goal_is_complete(workspace, cfg):
    from tests.core.test_goal_mode import GoalScript, _update

    cfg.responder = GoalScript(
        Reply(content="I did the first half."),  # a final answer: the goal goes on
        _update("complete", note="verified"),
        Reply(content="Done."),
    )
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(
            session_id=new.session_id, prompt=[text_block("/goal make the tests pass")]
        )
        assert response.stop_reason == "end_turn"
        await conn.prompt(session_id=new.session_id, prompt=[text_block("/goal status")])
    said = client.text()
    assert said.startswith("Goal started: make the tests pass")
    assert "I did the first half." in said and "Goal round 1: active." in said
    assert "Goal round 2: complete." in said
    assert "complete" in said.splitlines()[-1] and len(cfg.requests) == 3


async def test_effort_set_by_command_updates_the_clients_config_options(workspace, cfg):
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        (effort,) = [o for o in new.config_options if o.id == "effort"]
        other = next(o.value for o in effort.options if o.value != effort.current_value)
        await conn.prompt(session_id=new.session_id, prompt=[text_block(f"/effort {other}")])
    assert f"Reasoning effort set to {other}." in client.text()
    (update,) = client.of("config_option_update")
    options = {o.id: o.current_value for o in update.config_options}
    assert options["effort"] == other
