"""The session's frozen environment (tool/env.py) and how a child derives its own."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.sandbox import SandboxPolicy


def _env(tmp_path: Path) -> SessionEnv:
    ws, tmp = tmp_path / "ws", tmp_path / "tmp"
    return SessionEnv(
        workspace=ws,
        temp_dir=tmp,
        home=tmp_path / "home",
        sandbox=SandboxPolicy(workspace=ws, temp_dir=tmp),
        approver=FailClosedApprover(),
        secret_env=frozenset({"DEEPSEEK_API_KEY"}),
        bash_timeout_seconds=7.0,
        session_id="parent",
    )


def test_the_environment_is_frozen(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.workspace = tmp_path  # type: ignore[misc]


def test_a_child_keeps_the_session_facts_and_gets_its_own_transcript_and_sandbox(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    claim = (env.workspace / "src",)
    assert env.sandbox is not None
    bound = dataclasses.replace(env.sandbox, allow_write=(), claim=claim)
    child = env.child(session_id="child", sandbox=bound)
    assert (child.session_id, child.sandbox) == ("child", bound)
    kept = ("workspace", "temp_dir", "home", "approver", "gate", "read_denied", "secret_env")
    assert all(getattr(child, name) == getattr(env, name) for name in kept)
    assert child.bash_timeout_seconds == 7.0
    assert env.session_id == "parent"  # the parent's is unchanged


def test_the_tool_context_reads_its_facts_from_the_environment(tmp_path: Path) -> None:
    env = _env(tmp_path)
    ctx = ToolContext(env=env)
    assert (ctx.workspace, ctx.temp_dir, ctx.sandbox, ctx.secret_env, ctx.session_id) == (
        env.workspace,
        env.temp_dir,
        env.sandbox,
        env.secret_env,
        "parent",
    )
    with pytest.raises(AttributeError):
        ctx.workspace = tmp_path  # type: ignore[misc]


# -- the built session -------------------------------------------------------------


@pytest.mark.usefixtures("configured")
async def test_the_built_session_is_whole_and_every_agent_fact_comes_from_one_env(
    workspace: Path, server
) -> None:
    from reasonix_core.subagent.delegation import Delegation
    from reasonix_testkit import Reply
    from tests.core.agent_helpers import runtime

    server.enqueue(Reply(content="done"))
    async with runtime(workspace) as session:
        ctx = session.agent.tool_context
        env = ctx.env
        assert env.session_id == session.session_id == session.agent.session.id
        assert env.gate is session.agent.gate  # the one gate, given at construction
        assert ctx.plan_mode is session.plan_mode and ctx.goals is session.goals
        assert session.agent.checkpoints is session.checkpoints is not None
        delegation = ctx.subagents
        assert isinstance(delegation, Delegation)
        assert delegation.services.env is env  # the children derive theirs from it
        with pytest.raises(dataclasses.FrozenInstanceError):
            session.agent = session.agent  # type: ignore[misc]
        events = [e async for e in session.prompt("hi")]
    assert events[-1].text == "done"  # type: ignore[attr-defined]
