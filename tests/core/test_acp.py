"""`reasonix acp` end to end: the agent-client-protocol package's client over a
real `reasonix acp` subprocess, against the loopback fixture model."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


class RecordingClient:
    """An editor: records every update; answers permission requests from a script."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.answers = list(answers or [])
        self.permissions: list[Any] = []
        self.update_seen = asyncio.Event()

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.permissions.append(tool_call)
        answer = self.answers.pop(0) if self.answers else "reject_once"
        if answer == "never":  # the user does not answer (the turn is cancelled meanwhile)
            await asyncio.Event().wait()
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append((session_id, update))
        self.update_seen.set()

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env[TEST_KEY_ENV] = TEST_KEY
    return env


@asynccontextmanager
async def agent(client: RecordingClient, workspace: Path, *args: str):
    async with spawn_agent_process(
        client, sys.executable, "-m", "reasonix_tui.cli", "acp", *args,
        env=_env(), cwd=workspace,
    ) as (conn, process):  # fmt: skip
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.protocol_version == PROTOCOL_VERSION
        yield conn, process, init


async def test_initialize_new_session_and_a_streamed_turn_with_a_tool(workspace, cfg, home):
    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(
        Reply(reasoning="let me read", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="it says alpha"),
    )
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, init):
        caps = init.agent_capabilities
        assert caps.load_session is True and caps.prompt_capabilities.embedded_context is True
        new = await conn.new_session(cwd=str(workspace))
        assert new.modes.current_mode_id == "ask"
        assert [m.id for m in new.modes.available_modes] == ["ask", "auto", "plan"]
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("read a.txt")])
    assert response.stop_reason == "end_turn"
    assert client.text() == "it says alpha"
    assert client.text("agent_thought_chunk") == "let me read"
    start = client.of("tool_call")[0]
    assert start.title == "Read a.txt" and start.kind == "read"
    assert start.locations[0].path == str(workspace.resolve() / "a.txt")
    assert start.raw_input == {"path": "a.txt"}
    statuses = [u.status for u in client.of("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    usage = client.of("usage_update")
    assert len(usage) == 2 and usage[-1].size == 1000000
    assert usage[-1].used > 0 and usage[-1].cost.amount > 0 and usage[-1].cost.currency == "USD"
    assert usage[-1].field_meta["reasonix"]["cache_hit_tokens"] > 0
    done = client.of("tool_call_update")[-1]
    assert "alpha" in done.content[0].content.text
    # The log went to its file; stdout carried protocol JSON only (the client parsed it).
    assert (home / "logs" / "acp.log").is_file()


async def test_an_allowed_edit_streams_a_diff(workspace, cfg):
    target = workspace / "f.txt"
    target.write_text("one\ntwo\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(
            tool_calls=[
                ToolCallSpec("edit_file", '{"path":"f.txt","old_string":"two","new_string":"TWO"}')
            ]
        ),
        Reply(content="done"),
    )
    client = RecordingClient(["allow_once"])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
    assert response.stop_reason == "end_turn"
    assert target.read_text() == "one\nTWO\n"
    assert len(client.permissions) == 1 and client.permissions[0].kind == "edit"
    edit = [u for u in client.of("tool_call") if u.kind == "edit"][0]
    assert edit.title == "Edit f.txt"
    done = [u for u in client.of("tool_call_update") if u.tool_call_id == edit.tool_call_id][-1]
    assert done.status == "completed"
    diff = [c for c in done.content if c.type == "diff"][0]
    assert diff.path == str(target.resolve())
    assert diff.old_text == "one\ntwo\n" and diff.new_text == "one\nTWO\n"


async def test_a_rejected_edit_leaves_the_file_untouched(workspace, cfg):
    target = workspace / "f.txt"
    target.write_text("keep me\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"f.txt","content":"gone\\n"}')]),
        Reply(content="ok, I will not"),
    )
    client = RecordingClient(["reject_once"])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
    assert response.stop_reason == "end_turn"
    assert target.read_text() == "keep me\n"
    assert len(client.permissions) == 1
    assert [u.status for u in client.of("tool_call_update")][-1] == "failed"
    # The refusal reached the model as the call's result.
    tool_msgs = [m for m in json.loads(cfg.requests[2].body)["messages"] if m["role"] == "tool"]
    assert "denied" in tool_msgs[-1]["content"]


async def test_allow_always_grants_the_scope_for_the_session(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command":"touch one.txt"}')]),
        Reply(content="first"),
        Reply(tool_calls=[ToolCallSpec("bash", '{"command":"touch one.txt two.txt"}')]),
        Reply(content="second"),
    )
    client = RecordingClient(["allow_always"])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("one")])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("two")])
    assert (workspace / "one.txt").exists()
    # Asked once: the second `touch` ran under the session grant (its scope).
    assert len(client.permissions) == 1
    assert (workspace / "two.txt").exists()
    assert client.of("tool_call")[0].kind == "execute"


async def test_modes_switch_and_announce(workspace, cfg):
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        await conn.set_session_mode(session_id=new.session_id, mode_id="auto")
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=new.session_id, mode_id="yolo")
    assert [u.current_mode_id for u in client.of("current_mode_update")] == ["plan", "auto"]


async def test_auto_mode_runs_an_edit_without_asking(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"n.txt","content":"new\\n"}')]),
        Reply(content="written"),
    )
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.set_session_mode(session_id=new.session_id, mode_id="auto")
        await conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
    assert client.permissions == []
    assert (workspace / "n.txt").read_text() == "new\n"


async def _until(predicate, what: str) -> None:
    """Wait for something the agent does in its own process (no time bound: the
    test's own timeout is the bound)."""
    while not predicate():  # noqa: ASYNC110 - a file the child writes: no event to await
        await asyncio.sleep(0.02)


async def test_cancel_stops_a_running_bash_command_and_the_session_continues(workspace, cfg):
    command = {"command": "echo live-line; echo $$ > pid.txt; sleep 300"}
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("bash", json.dumps(command))]))
    client = RecordingClient(["allow_once"])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        turn = asyncio.create_task(
            conn.prompt(session_id=new.session_id, prompt=[text_block("run it")])
        )
        pid_file = workspace / "pid.txt"
        await _until(lambda: pid_file.exists() and pid_file.read_text().strip(), "bash started")
        pid = int(pid_file.read_text())

        def live_output() -> bool:
            return any(
                u.status == "in_progress" and u.content and "live-line" in u.content[0].content.text
                for u in client.of("tool_call_update")
            )

        await _until(live_output, "the command's output while it runs")
        await conn.cancel(session_id=new.session_id)
        response = await turn
        assert response.stop_reason == "cancelled"
        # The running call ends as failed in the client (not left in progress).
        await _until(
            lambda: client.of("tool_call_update")[-1].status == "failed", "the call's end"
        )
        # The command was stopped with the turn.
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    # The transcript stays valid: `reasonix run -c` continues it.
    cfg.enqueue(Reply(content="continued"))
    proc = reasonix(workspace, "run", "-c", "and now?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "continued"
    messages = json.loads(cfg.requests[-1].body)["messages"]
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[0].startswith("run it") and users[-1].startswith("and now?")
    calls = [
        c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()
    ]
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert set(calls) <= answered


async def test_load_replays_the_conversation_then_continues_it_append_only(workspace, cfg):
    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(
        Reply(reasoning="look first", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="it says alpha"),
    )
    first = RecordingClient()
    async with agent(first, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("read a.txt")])
    session_id = new.session_id
    before = json.loads(cfg.requests[-1].body)["messages"]

    cfg.enqueue(Reply(content="still alpha"))
    second = RecordingClient()
    async with agent(second, workspace) as (conn, _, _init):
        loaded = await conn.load_session(cwd=str(workspace), session_id=session_id)
        assert loaded.modes.current_mode_id == "ask"
        replayed = list(second.kinds())
        response = await conn.prompt(session_id=session_id, prompt=[text_block("again?")])
    assert replayed == [
        "user_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]
    assert second.text("user_message_chunk").startswith("read a.txt")
    assert second.of("tool_call")[0].title == "Read a.txt"
    assert "alpha" in second.of("tool_call_update")[0].content[0].content.text
    assert response.stop_reason == "end_turn"
    assert second.text().endswith("still alpha")
    # Append-only: the earlier request's messages are the new request's prefix.
    after = json.loads(cfg.requests[-1].body)["messages"]
    assert after[: len(before)] == before[:1] + after[1 : len(before)]
    assert [m["role"] for m in after[: len(before)]] == [m["role"] for m in before]
    assert after[len(before)]["role"] == "assistant"


async def test_an_unknown_session_and_an_untrusted_project_are_errors(workspace, cfg):
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        with pytest.raises(RequestError):
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
        with pytest.raises(RequestError) as missing:
            await conn.load_session(cwd=str(workspace), session_id="no-such-session")
        assert "no-such-session" in json.dumps(missing.value.data)
        with pytest.raises(RequestError):
            await conn.new_session(cwd="relative/dir")
        (workspace / "reasonix.toml").write_text('[sandbox]\nbash = "off"\n')
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(workspace))
    assert "not trusted" in json.dumps(refused.value.data)
    assert cfg.requests == []


def test_bad_json_rpc_gets_errors_and_eof_exits_cleanly(workspace, cfg):
    lines = [
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such_method", "params": {}}),
        json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}
        ),
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", "acp"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, cwd=workspace,
        env=_env(), timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["error"]["code"] == -32601
    assert by_id[2]["result"]["protocolVersion"] == 1
    assert any(r.get("error", {}).get("code") == -32700 for r in replies)


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"), [("length", "max_tokens"), ("content_filter", "refusal")]
)
async def test_a_cut_or_filtered_answer_has_its_stop_reason(
    workspace, cfg, finish_reason, stop_reason
):
    cfg.enqueue(Reply(content="partial", finish_reason=finish_reason))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert response.stop_reason == stop_reason


async def test_max_steps_answers_max_turn_requests(workspace, cfg, monkeypatch):
    monkeypatch.setenv("REASONIX_AGENT__MAX_STEPS", "1")
    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
    assert response.stop_reason == "max_turn_requests"


async def test_list_sessions_names_this_folders_saved_sessions(workspace, cfg):
    cfg.enqueue(Reply(content="hello"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, init):
        assert init.agent_capabilities.session_capabilities.list is not None
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("greet me")])
        listed = await conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in listed.sessions] == [new.session_id]
    assert listed.sessions[0].title == "greet me"


async def test_todo_write_becomes_the_plan(workspace, cfg):
    todos = {
        "todos": [
            {"content": "Read the code", "status": "completed", "active_form": "Reading"},
            {"content": "Fix the bug", "status": "in_progress", "active_form": "Fixing"},
        ]
    }
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("todo_write", json.dumps(todos))]),
        Reply(content="planned"),
    )
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("plan it")])
    (plan,) = client.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
    ]
    assert client.of("tool_call")[0].kind == "think"


@pytest.mark.parametrize(("answer", "approved"), [("approve_plan", True), ("keep_planning", False)])
async def test_plan_mode_plan_approval_is_a_permission_request(workspace, cfg, answer, approved):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("exit_plan_mode", '{"plan":"1. add a test"}')]),
        Reply(content="on it"),
    )
    client = RecordingClient([answer])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("plan")])
    assert response.stop_reason == "end_turn"
    (asked,) = client.permissions
    assert asked.title == "Approve the plan"
    assert asked.tool_call_id == client.of("tool_call")[0].tool_call_id
    assert asked.content[0].content.text == "1. add a test"
    modes = [u.current_mode_id for u in client.of("current_mode_update")]
    assert modes == (["plan", "ask"] if approved else ["plan"])
    tool_msgs = [m for m in json.loads(cfg.requests[1].body)["messages"] if m["role"] == "tool"]
    assert ("approved the plan" in tool_msgs[-1]["content"]) is approved


async def test_custom_commands_and_skills_are_offered_and_expand(workspace, cfg, home):
    (home / "commands").mkdir()
    (home / "commands" / "greet.md").write_text(
        "---\ndescription: Say hello\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS.\n"
    )
    cfg.enqueue(Reply(content="hello, world"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=new.session_id, prompt=[text_block("/greet world")])
    (offered,) = client.of("available_commands_update")
    greet = [c for c in offered.available_commands if c.name == "greet"][0]
    assert greet.description == "Say hello" and greet.input.root.hint == "NAME"
    user = [m for m in json.loads(cfg.requests[0].body)["messages"] if m["role"] == "user"][0]
    assert user["content"].startswith("Say hello to world.")


async def test_a_client_passed_mcp_server_joins_the_session(workspace, cfg):
    from acp.schema import McpServerStdio

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_stdio_server.py"
    call = {"action": "call", "name": "mcp__editor__echo", "arguments": {"text": "from the editor"}}
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("use_capability", json.dumps(call))]),
        Reply(content="echoed"),
    )
    client = RecordingClient(["allow_once"] * 3)
    editor = McpServerStdio(
        name="editor", command=sys.executable, args=[str(fixture), "serve"], env=[]
    )
    async with agent(client, workspace) as (conn, _, init):
        assert init.agent_capabilities.mcp_capabilities.http is True
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[editor])
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("echo")])
    assert response.stop_reason == "end_turn"
    tool_msgs = [m for m in json.loads(cfg.requests[1].body)["messages"] if m["role"] == "tool"]
    assert "from the editor" in tool_msgs[-1]["content"]


async def test_a_client_gone_mid_turn_leaves_a_session_that_continues(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command":"echo $$ > pid.txt; sleep 300"}')]),
    )
    client = RecordingClient(["allow_once"])
    async with agent(client, workspace) as (conn, process, _init):
        new = await conn.new_session(cwd=str(workspace))
        turn = asyncio.create_task(
            conn.prompt(session_id=new.session_id, prompt=[text_block("run it")])
        )
        pid_file = workspace / "pid.txt"
        await _until(lambda: pid_file.exists() and pid_file.read_text().strip(), "bash started")
        process.stdin.close()  # the editor went away
        assert await process.wait() == 0
        turn.cancel()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
    cfg.enqueue(Reply(content="continued"))
    proc = reasonix(workspace, "run", "-c", "still there?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "continued"


async def test_model_and_effort_are_config_options(workspace, cfg):
    cfg.enqueue(Reply(content="from pro"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        options = {o.id: o for o in new.config_options}
        model = options["model"]
        assert model.current_value == "deepseek-flash"
        assert [o.value for o in model.options] == ["deepseek-flash", "deepseek-v4-pro"]
        changed = await conn.set_config_option(
            config_id="model", session_id=new.session_id, value="deepseek-v4-pro"
        )
        assert {o.id: o for o in changed.config_options}["model"].current_value == (
            "deepseek-v4-pro"
        )
        with pytest.raises(RequestError):
            await conn.set_config_option(
                config_id="model", session_id=new.session_id, value="gpt-nope"
            )
        await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
    assert json.loads(cfg.requests[0].body)["model"] == "deepseek-v4-pro"


async def test_cancel_while_a_permission_is_asked_runs_nothing(workspace, cfg):
    target = workspace / "f.txt"
    target.write_text("keep me\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"f.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"f.txt","content":"gone\\n"}')]),
    )
    client = RecordingClient(["never"])
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        turn = asyncio.create_task(
            conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
        )
        await _until(lambda: client.permissions, "the permission request")
        await conn.cancel(session_id=new.session_id)
        assert (await turn).stop_reason == "cancelled"
    assert target.read_text() == "keep me\n"


async def test_a_resource_link_attaches_the_file_and_a_selection_is_context(workspace, cfg):
    (workspace / "notes.txt").write_text("the secret word is plover\n")
    cfg.enqueue(Reply(content="plover"))
    client = RecordingClient()
    from acp import embedded_text_resource, resource_block, resource_link_block

    link = resource_link_block(name="notes.txt", uri=(workspace / "notes.txt").resolve().as_uri())
    selection = resource_block(embedded_text_resource("file:///elsewhere/sel.py", "x = 1"))
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(
            session_id=new.session_id, prompt=[text_block("what is in"), link, selection]
        )
    user = [m for m in json.loads(cfg.requests[0].body)["messages"] if m["role"] == "user"][0]
    assert "plover" in user["content"]  # attached by the @notes.txt mention
    assert "x = 1" in user["content"] and "file:///elsewhere/sel.py" in user["content"]
