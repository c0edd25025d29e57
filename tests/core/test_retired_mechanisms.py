"""Seed 004's retired mechanisms (issue 32 item 6), against the loopback fixture:
retired tool calls answer ``tool_retired``; recovery queries answer ``retired=true``
and actions ``tool_recovery_retired``; ``guardian_model`` is read and ignored with one
notice; the old threshold keys leave the user's config on a normal start, comments
kept, with one notice."""

from __future__ import annotations

import json

import pytest

from reasonix_core.agent.session import read_session
from reasonix_core.session.recovery import ToolRecoveryRetired
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import TEST_KEY_ENV, provider_toml, reasonix
from tests.core.agent_helpers import run_turn, runtime, session_messages


@pytest.mark.parametrize("name", ["complete_step", "review_report", "read_completion"])
async def test_a_retired_tool_call_answers_tool_retired(workspace, configured, name):
    server = configured
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec(name, '{"step": "1", "result": "done"}')]),
        Reply(content="ok"),
    )
    async with runtime(workspace) as rt:
        await run_turn(rt, "finish")
        messages = session_messages(rt)
    result = next(m for m in messages if m["role"] == "tool")["content"]
    assert result.startswith(f"tool_retired: {name} is retired")
    assert "unknown tool" not in result
    offered = {t["function"]["name"] for t in json.loads(server.requests[0].body)["tools"]}
    assert name not in offered


async def test_recovery_query_is_retired_and_actions_never_replay(workspace, configured):
    server = configured
    server.enqueue(Reply(content="first"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "hello")
        path = rt.agent.session.path
        # A call that started and left no result: the transcript's unknown fact.
        from reasonix_core.agent.transcript import repair_messages
        from reasonix_core.messages import Message, ToolCall

        call = ToolCall(id="c1", name="bash", arguments='{"command": "deploy"}')
        rt.agent.append_message(Message(role="assistant", tool_calls=(call,)))
        for repair in repair_messages(rt.agent.messages):
            rt.agent.append_message(repair)
        before = path.read_bytes()
        facts = rt.recovery()
        assert facts == {
            "retired": True,
            "retry_enabled": False,
            "calls": [{"call_id": "c1", "name": "bash", "state": "unknown"}],
        }
        for action in ("confirm", "reject", "retry", "inspect"):
            with pytest.raises(ToolRecoveryRetired, match=r"^tool_recovery_retired: "):
                rt.resolve_recovery("c1", action)
        assert path.read_bytes() == before  # nothing rewritten, nothing replayed
    assert len(server.requests) == 1
    _, messages = read_session(path)
    assert messages[-1].meta["outcome"] == "unknown"


def _config(home, base_url: str, agent: str) -> str:
    text = (
        "# my settings, hand-written\n"
        + provider_toml(base_url)
        + "\n[agent]\n# keep this comment\n"
        + agent
        + 'retry_base_delay = 0.01  # fast\n\n[sandbox]\nbash = "off"\n'
    )
    (home / "config.toml").write_text(text)
    return text


def test_guardian_model_is_read_and_ignored_with_one_notice(workspace, home, server, monkeypatch):
    monkeypatch.setenv(TEST_KEY_ENV, "sk-test-0123456789")
    _config(home, server.base_url, 'guardian_model = "fixture/deepseek-v4-pro"\n')
    server.enqueue(Reply(content="ok"), Reply(content="ok"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("guardian_model is ignored") == 1
    assert len(server.requests) == 1
    assert json.loads(server.requests[0].body)["model"] == "deepseek-flash"


def test_old_threshold_keys_are_removed_with_comments_kept(workspace, home, server, monkeypatch):
    monkeypatch.setenv(TEST_KEY_ENV, "sk-test-0123456789")
    original = _config(
        home,
        server.base_url,
        "soft_compact_ratio = 0.5\ncompact_force_ratio = 0.9  # old\ncontext_editing = true\n",
    )
    server.enqueue(Reply(content="ok"), Reply(content="again"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    notice = [line for line in proc.stderr.splitlines() if "removed retired [agent]" in line]
    assert len(notice) == 1
    assert "soft_compact_ratio, compact_force_ratio, context_editing" in notice[0]
    text = (home / "config.toml").read_text()
    for key in ("soft_compact_ratio", "compact_force_ratio", "context_editing"):
        assert key not in text
    assert "# my settings, hand-written" in text and "# keep this comment" in text
    assert "retry_base_delay = 0.01  # fast" in text
    assert text == original.replace(
        "soft_compact_ratio = 0.5\ncompact_force_ratio = 0.9  # old\ncontext_editing = true\n", ""
    )
    # The next start has nothing to remove and says nothing.
    again = reasonix(workspace, "run", "hi")
    assert again.returncode == 0 and "removed retired" not in again.stderr


def test_a_project_file_is_never_rewritten(workspace, home, configured):
    (workspace / "reasonix.toml").write_text("[agent]\nsoft_compact_ratio = 0.5\n")
    configured.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "--trust-project", "hi")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "reasonix.toml").read_text() == "[agent]\nsoft_compact_ratio = 0.5\n"
