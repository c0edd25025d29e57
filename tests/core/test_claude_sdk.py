"""Programs built on claude-agent-sdk drive Reasonix as their CLI: the real SDK
(``query()``, ``ClaudeSDKClient``, ``can_use_tool``, ``interrupt``) over a real
``reasonix`` subprocess (``ClaudeAgentOptions(cli_path=...)``), against the
loopback fixture model. The SDK's bundled Claude binary is never run."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from reasonix_testkit import Reply, ToolCallSpec  # noqa: E402
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config  # noqa: E402

DEADLINE = 60.0


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


@pytest.fixture(autouse=True)
def _sdk_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Reasonix is not Claude Code: its init line names no claude_code_version.
    monkeypatch.setenv("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1")
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)


@pytest.fixture
def cli(tmp_path: Path) -> Path:
    """An executable that is `reasonix` (what a user's cli_path points at)."""
    path = tmp_path / "bin" / "reasonix"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reasonix_tui.cli "$@"\n')
    path.chmod(0o755)
    return path


def options(cli: Path, workspace: Path, **kwargs: Any) -> ClaudeAgentOptions:
    stderr: list[str] = kwargs.pop("stderr_lines", [])
    return ClaudeAgentOptions(
        cli_path=str(cli), cwd=str(workspace), stderr=stderr.append, **kwargs
    )


def session_files(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*/*.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


async def test_query_runs_a_turn_with_thinking_and_a_tool(workspace, cfg, cli, home):
    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(
        Reply(reasoning="let me read", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(reasoning="it is read", content="It says alpha."),
    )
    messages = await collect("What does a.txt say?", options(cli, workspace))
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["model"] == "deepseek-flash" and init.data["permissionMode"] == "default"
    blocks = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content]
    assert [type(b) for b in blocks] == [ThinkingBlock, ToolUseBlock, ThinkingBlock, TextBlock]
    assert blocks[0].thinking == "let me read" and blocks[0].signature == ""
    assert blocks[1].name == "read_file" and blocks[1].input == {"path": "a.txt"}
    assert blocks[3].text == "It says alpha."
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert "alpha" in str(results[0].content) and results[0].is_error is False
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert result.subtype == "success" and not result.is_error
    assert result.result == "It says alpha." and result.session_id == init.data["session_id"]
    assert result.num_turns == 2 and result.total_cost_usd and result.total_cost_usd > 0
    # The user's prompt reached the model.
    sent = cfg.requests[0].json["messages"]
    assert "What does a.txt say?" in sent[-1]["content"]
    assert len(session_files(home)) == 1


async def test_a_client_session_keeps_its_history_across_two_queries(workspace, cfg, cli, home):
    cfg.enqueue(Reply(content="Noted: the colour is teal."), Reply(content="It was teal."))
    async with ClaudeSDKClient(options(cli, workspace)) as client:
        await client.query("Remember: the colour is teal.")
        first = [m async for m in client.receive_response()]
        await client.query("Which colour did I say?")
        second = [m async for m in client.receive_response()]
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "Noted: the colour is teal."
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "It was teal."
    assert first[-1].session_id == second[-1].session_id
    # The second request carries the first turn: one session, one prefix.
    later = cfg.requests[1].json["messages"]
    assert any("the colour is teal" in str(m.get("content")) for m in later[:-1])
    assert "Which colour did I say?" in later[-1]["content"]
    (path,) = session_files(home)
    assert path.stem == first[-1].session_id
    users = [r for r in records(path) if r.get("message", {}).get("role") == "user"]
    assert len(users) == 2


def _png() -> bytes:
    """A real 1x1 PNG."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    )  # fmt: skip


def _message(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": list(blocks)},
        "parent_tool_use_id": None,
        "session_id": "default",
    }


async def _one(message: dict[str, Any]):
    yield message


async def test_an_image_block_in_a_client_message_reaches_the_model(workspace, cfg, cli, home):
    """Issue 32 item 1: Claude's base64 image block goes through the core's image
    entry point into the turn, and the request carries it as an image part."""
    import base64

    data = base64.b64encode(_png()).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    cfg.enqueue(Reply(content="a red pixel"), Reply(content="still red"))
    async with ClaudeSDKClient(options(cli, workspace)) as client:
        await client.query(_one(_message({"type": "text", "text": "What is this?"}, image)))
        first = [m async for m in client.receive_response()]
        await client.query("And now?")
        second = [m async for m in client.receive_response()]
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "a red pixel"
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "still red"
    sent = cfg.requests[0].json["messages"][-1]
    assert sent["role"] == "user" and sent["content"][0]["type"] == "text"
    assert sent["content"][0]["text"].startswith("What is this?")
    assert sent["content"][1] == {
        "type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}
    }  # fmt: skip
    # Persisted in the turn: the next request carries it again, unchanged.
    later = cfg.requests[1].json["messages"]
    assert sent in later[:-1] and later[-1]["content"].startswith("And now?")
    (path,) = session_files(home)
    assert data in path.read_text()


@pytest.mark.parametrize(
    ("block", "error"),
    [
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "@@"}},
            "image block 2: not valid base64",
        ),
        (
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            'image block 2: source type "url" is not taken (only "base64", inline)',
        ),
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                         "data": "iVBORw0KGgoAAAANSUhEUg=="}},
            "image block 2: said to be image/jpeg, but the bytes are image/png",
        ),
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "TVqQAAMAAAAEAAAA"}},  # a Windows executable
            "image block 2: not a PNG, JPEG, GIF or WebP image",
        ),
    ],
)
async def test_a_bad_image_block_fails_the_turn_naming_it(workspace, cfg, cli, block, error):
    cfg.enqueue(Reply(content="never sent"))
    async with ClaudeSDKClient(options(cli, workspace)) as client:
        await client.query(_one(_message({"type": "text", "text": "look"}, block)))
        messages = [m async for m in client.receive_response()]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.result is not None and result.result.startswith(error)
    assert cfg.requests == []


async def test_can_use_tool_allows_a_write(workspace, cfg, cli):
    asked: list[tuple[str, dict[str, Any]]] = []

    async def allow(name: str, data: dict[str, Any], context: Any) -> PermissionResultAllow:
        asked.append((name, data))
        return PermissionResultAllow()

    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"out.txt","content":"made"}')]),
        Reply(content="written"),
    )
    async with ClaudeSDKClient(options(cli, workspace, can_use_tool=allow)) as client:
        await client.query("write out.txt")
        messages = [m async for m in client.receive_response()]
    assert asked == [("write_file", {"path": "out.txt", "content": "made"})]
    assert (workspace / "out.txt").read_text() == "made"
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "written"


async def test_can_use_tool_denies_and_the_model_gets_the_refusal(workspace, cfg, cli):
    async def deny(name: str, data: dict[str, Any], context: Any) -> PermissionResultDeny:
        assert context.tool_use_id and context.suggestions  # "allow for this session" offered
        return PermissionResultDeny(message="not on a Friday")

    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"keep.txt","content":"changed"}')]),
        Reply(content="I was not allowed."),
    )
    async with ClaudeSDKClient(options(cli, workspace, can_use_tool=deny)) as client:
        await client.query("change keep.txt")
        messages = [m async for m in client.receive_response()]
    assert not (workspace / "keep.txt").exists()
    tool_result = cfg.requests[1].json["messages"][-1]
    assert tool_result["role"] == "tool" and "not on a Friday" in tool_result["content"]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "I was not allowed."
    assert [d["tool_name"] for d in result.permission_denials or []] == ["write_file"]


async def test_an_allow_that_changes_the_input_is_refused(workspace, cfg, cli):
    async def rewrite(name: str, data: dict[str, Any], context: Any) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={**data, "path": "elsewhere.txt"})

    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"w.txt","content":"x"}')]),
        Reply(content="refused"),
    )
    async with ClaudeSDKClient(options(cli, workspace, can_use_tool=rewrite)) as client:
        await client.query("write w.txt")
        messages = [m async for m in client.receive_response()]
    assert not (workspace / "w.txt").exists() and not (workspace / "elsewhere.txt").exists()
    assert "changed the call's input" in cfg.requests[1].json["messages"][-1]["content"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "refused"


async def test_an_allow_for_the_session_applies_the_suggested_rule(workspace, cfg, cli):
    calls = 0

    async def allow_always(name: str, data: dict[str, Any], context: Any) -> Any:
        nonlocal calls
        calls += 1
        return PermissionResultAllow(updated_permissions=context.suggestions)

    write = '{"path":"n.txt","content":"%s"}'
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", write % "one")]),
        Reply(tool_calls=[ToolCallSpec("write_file", write % "two")]),
        Reply(content="twice"),
    )
    async with ClaudeSDKClient(options(cli, workspace, can_use_tool=allow_always)) as client:
        await client.query("write n.txt twice")
        messages = [m async for m in client.receive_response()]
    assert calls == 1 and (workspace / "n.txt").read_text() == "two"
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error


def running(marker: str) -> bool:
    """Whether a process whose command line holds ``marker`` is still alive."""
    for proc in Path("/proc").iterdir():
        try:
            if marker.encode() in (proc / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


async def until(condition: Any) -> None:
    """Poll ``condition`` until it holds (the generous deadline fails the test)."""
    async with asyncio.timeout(DEADLINE):
        while not condition():  # noqa: ASYNC110 - a /proc scan, nothing to wait on
            await asyncio.sleep(0.05)


async def test_interrupt_stops_a_running_bash_command(workspace, cfg, cli, home):
    marker = f"slow-{os.getpid()}-{id(cfg)}"
    command = json.dumps({"command": f"sleep 120; echo {marker} > late.txt"})
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", command)]),
        Reply(content="after the interrupt"),
    )
    opts = options(cli, workspace, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(opts) as client:
        await client.query("run the slow command")
        seen: list[Any] = []
        async with asyncio.timeout(DEADLINE):
            async for message in client.receive_messages():
                seen.append(message)
                if isinstance(message, SystemMessage) and message.data.get("subtype") == "tool_call_started":
                    break
            await until(lambda: running(marker))  # the command has started
        await client.interrupt()
        async with asyncio.timeout(DEADLINE):
            rest = [m async for m in client.receive_response()]
        result = rest[-1]
        assert isinstance(result, ResultMessage) and result.is_error
        assert "interrupted" in (result.result or "")
        await until(lambda: not running(marker))  # killed with the turn
        # The session goes on: the next query continues it.
        await client.query("go on")
        after = [m async for m in client.receive_response()]
    assert isinstance(after[-1], ResultMessage) and after[-1].result == "after the interrupt"
    assert not (workspace / "late.txt").exists()
    # The interrupted call has its result in the history the model sees.
    sent = cfg.requests[-1].json["messages"]
    call_ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = {m["tool_call_id"] for m in sent if m["role"] == "tool"}
    assert call_ids and set(call_ids) <= answered


async def test_set_permission_mode_and_set_model(workspace, cfg, cli):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"m.txt","content":"x"}')]),
        Reply(content="done"),
    )
    async with ClaudeSDKClient(options(cli, workspace)) as client:
        await client.set_permission_mode("acceptEdits")
        await client.set_model("deepseek-v4-pro")
        with pytest.raises(Exception, match="not one Reasonix has"):
            await client.set_permission_mode("dontAsk")
        with pytest.raises(Exception, match=r"unknown model|no model"):
            await client.set_model("claude-opus-9")
        await client.query("write m.txt")
        messages = [m async for m in client.receive_response()]
    assert (workspace / "m.txt").read_text() == "x"
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert cfg.requests[0].json["model"] == "deepseek-v4-pro"


async def test_hooks_and_unknown_control_requests_fail_clearly(workspace, cfg, cli):
    from claude_agent_sdk import HookMatcher

    async def hook(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        return {}

    opts = options(cli, workspace, hooks={"PreToolUse": [HookMatcher(hooks=[hook])]})
    with pytest.raises(Exception, match="hooks given to claude-agent-sdk"):
        async with ClaudeSDKClient(opts):
            pass
    async with ClaudeSDKClient(options(cli, workspace)) as client:
        with pytest.raises(Exception, match="'rewind_files' is not supported"):
            await client.rewind_files("some-id")
        status = await client.get_mcp_status()
        assert status == {"mcpServers": []}


async def test_partial_messages_stream_as_stream_events(workspace, cfg, cli):
    from claude_agent_sdk import StreamEvent

    cfg.enqueue(Reply(reasoning="hmm", content="streamed answer", chunk_size=4))
    opts = options(cli, workspace, include_partial_messages=True)
    messages = await collect("stream it", opts)
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    text = "".join(
        e["delta"]["text"] for e in events if e["type"] == "content_block_delta"
        and e["delta"]["type"] == "text_delta"
    )  # fmt: skip
    assert text == "streamed answer"
    assert any(e.get("delta", {}).get("type") == "thinking_delta" for e in events)


async def test_flags_the_sdk_passes(workspace, cfg, cli, home):
    """system_prompt, allowed/disallowed tools, max_turns, max_budget_usd, session_id,
    setting_sources, tools preset, add_dirs and an inline mcp_servers map."""
    (workspace / "s.txt").write_text("s\n")
    cfg.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("read_file", '{"path":"s.txt"}'),
                ToolCallSpec("bash", '{"command":"echo hi"}'),
            ]
        ),
        Reply(content="ok"),
    )
    opts = options(
        cli,
        workspace,
        system_prompt="You are a terse test agent.",
        allowed_tools=["Read", "Bash(echo:*)"],
        disallowed_tools=["Bash(echo hi)"],
        max_turns=5,
        max_budget_usd=3.0,
        session_id="3f2b0c4e-8a1d-4c5e-9f00-123456789abc",
        setting_sources=["user", "project"],
        tools={"type": "preset", "preset": "claude_code"},
        add_dirs=[str(workspace)],
    )
    messages = await collect("read it", opts)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "ok"
    assert result.session_id == "3f2b0c4e-8a1d-4c5e-9f00-123456789abc"
    system = cfg.requests[0].json["messages"][0]["content"]
    assert system.startswith("You are a terse test agent.")
    tool_results = [m for m in cfg.requests[1].json["messages"] if m["role"] == "tool"]
    assert "s" in tool_results[0]["content"]
    assert "denied" in tool_results[1]["content"].lower()  # the deny rule beats the allow


async def test_a_flag_reasonix_cannot_honour_fails_with_one_line(workspace, cfg, cli):
    lines: list[str] = []
    opts = options(cli, workspace, stderr_lines=lines, fallback_model="claude-haiku")
    with pytest.raises(Exception):  # noqa: B017 - the SDK's ProcessError
        await collect("hi", opts)
    assert any("--fallback-model" in line for line in lines)
    lines.clear()
    opts = options(
        cli, workspace, stderr_lines=lines,
        mcp_servers={"calc": {"type": "sdk", "name": "calc", "instance": object()}},
    )  # fmt: skip
    with pytest.raises(Exception):  # noqa: B017
        await collect("hi", opts)
    assert any("in-process SDK server" in line for line in lines), lines


# -- the protocol by hand: hostile or broken programs ---------------------------


def run_stream(workspace: Path, lines: list[Any], *args: str, timeout: float = DEADLINE):
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    return reasonix(
        workspace, "--output-format", "stream-json", "--verbose", "--input-format",
        "stream-json", *args, stdin=text, timeout=timeout,
    )  # fmt: skip


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, "session_id": ""}


def test_malformed_lines_are_skipped_and_named(workspace, cfg):
    cfg.enqueue(Reply(content="first"), Reply(content="second"))
    proc = run_stream(
        workspace,
        [
            "this is not json",
            "[1, 2]",
            {"type": "weird"},
            user("one"),
            {"type": "user", "message": {"role": "user", "content": [{"type": "image"}]}},
            {"type": "control_request", "request_id": "r1", "request": {"subtype": "fly"}},
            {"type": "control_request", "request": {"subtype": "interrupt"}},
            {"type": "control_response", "response": {"request_id": "nobody", "subtype": "success"}},
            {"type": "keep_alive"},
            "[" * 100_000,
            '{"type": "user", "message": {"role": "user", "content": "\\ud800"}}',
            user("two"),
        ],
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    problems = [(o["line"], o["error"]) for o in out if o.get("subtype") == "input_error"]
    assert [n for n, _ in problems] == [1, 2, 3, 7, 8, 10]
    assert "not JSON" in problems[0][1] and "unknown message type" in problems[2][1]
    assert "line 1: not JSON; skipped" in proc.stderr
    answers = [o["response"] for o in out if o["type"] == "control_response"]
    assert answers == [
        {"subtype": "error", "request_id": "r1", "error": "control request 'fly' is not supported by Reasonix"}
    ]
    results = [o for o in out if o["type"] == "result"]
    assert [(r["is_error"], r["result"]) for r in results] == [
        (False, "first"),
        (True, 'image block 1: needs a "source" object'),
        (True, "the user message is not valid UTF-8 (a lone surrogate)"),
        (False, "second"),
    ]
    from claude_agent_sdk._internal.message_parser import parse_message

    for line in out:
        if line["type"] != "control_response":
            parse_message(line)  # every line parses with the SDK's own parser


def test_closing_stdin_mid_turn_leaves_a_session_run_c_continues(workspace, cfg, home):
    """The program closes its input while a call waits for its approval: the call is
    refused, the turn ends, the session file stays valid and `run -c` goes on."""
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"w.txt","content":"x"}')]),
        Reply(content="could not write"),
        Reply(content="continued"),
    )
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "reasonix_tui.cli", "--output-format", "stream-json",
         "--input-format", "stream-json", "--permission-prompt-tool", "stdio"],
        cwd=workspace, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(user("write w.txt")) + "\n")
    proc.stdin.flush()
    out = []
    for line in proc.stdout:  # until Reasonix asks the program, which never answers
        out.append(json.loads(line))
        if out[-1]["type"] == "control_request":
            break
    assert out[-1]["request"]["subtype"] == "can_use_tool"
    proc.stdin.close()  # mid-turn
    rest = proc.stdout.read()
    assert proc.wait(timeout=DEADLINE) == 0, proc.stderr.read() if proc.stderr else ""
    out += [json.loads(line) for line in rest.splitlines()]
    assert out[-1]["type"] == "result" and out[-1]["result"] == "could not write"
    refusal = cfg.requests[1].json["messages"][-1]["content"]
    assert "closed its input" in refusal
    assert not (workspace / "w.txt").exists()
    (path,) = session_files(home)
    for record in records(path):
        assert isinstance(record, dict)
    again = reasonix(workspace, "run", "-c", "and now?", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["result"] == "continued"
    assert session_files(home) == [path]


def test_stream_json_input_refuses_what_it_cannot_do(workspace, cfg):
    proc = reasonix(workspace, "run", "--input-format", "stream-json", stdin="")
    assert proc.returncode == 2
    assert "needs --output-format stream-json" in proc.stderr
    proc = run_stream(workspace, [], "--metrics", "m.json")
    assert proc.returncode == 2 and "--metrics cannot be used" in proc.stderr
    proc = run_stream(workspace, [], "--permission-prompt-tool", "mcp__x__approve")
    assert proc.returncode == 2 and "only stdio" in proc.stderr
    proc = run_stream(workspace, [], "--tools", "Read,Teleport")
    assert proc.returncode == 2 and "'Teleport' is not a tool" in proc.stderr
    proc = run_stream(workspace, [user("hi")], "--model", "claude-opus-9")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("reasonix: error: ") and "claude-opus-9" in proc.stderr
    assert os.listdir(workspace) == []


async def test_a_second_query_resumes_the_first_session(workspace, cfg, cli, home):
    cfg.enqueue(Reply(content="first answer"), Reply(content="second answer"))
    first = await collect("one", options(cli, workspace))
    session_id = first[-1].session_id
    second = await collect("two", options(cli, workspace, resume=session_id))
    assert second[-1].session_id == session_id and second[-1].result == "second answer"
    assert "first answer" in json.dumps(cfg.requests[1].json["messages"])
    assert [p.stem for p in session_files(home)] == [session_id]


async def test_a_client_that_disconnects_mid_turn_leaves_a_valid_session(workspace, cfg, cli, home):
    """disconnect() closes stdin while a command runs; the SDK sends SIGTERM 5 s later:
    the turn stops, the session closes valid, and `reasonix run -c` continues it."""
    marker = f"hang-{os.getpid()}-{id(cfg)}"
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", json.dumps({"command": f"sleep 300; echo {marker}"}))]),
        Reply(content="continued"),
    )
    opts = options(cli, workspace, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(opts) as client:
        await client.query("hang")
        await until(lambda: running(marker))
    await until(lambda: not running(marker))
    (path,) = session_files(home)
    messages = [r["message"] for r in records(path) if r["type"] == "message"]
    # The stopped call got its result before the session closed (SIGTERM was handled).
    assert messages[-1]["role"] == "tool" and "interrupted" in messages[-1]["content"]
    again = reasonix(workspace, "run", "-c", "go on", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["result"] == "continued"
    sent = cfg.requests[-1].json["messages"]
    calls = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert calls and set(calls) <= {m["tool_call_id"] for m in sent if m["role"] == "tool"}


async def test_plan_mode_asks_the_program_to_approve_the_plan(workspace, cfg, cli):
    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(name: str, data: dict[str, Any], context: Any) -> Any:
        asked.append((name, data))
        return PermissionResultAllow()

    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"p.txt","content":"early"}')]),
        Reply(tool_calls=[ToolCallSpec("exit_plan_mode", '{"plan":"1. write p.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"p.txt","content":"planned"}')]),
        Reply(content="done"),
    )
    opts = options(cli, workspace, permission_mode="plan", can_use_tool=decide)
    async with ClaudeSDKClient(opts) as client:
        await client.query("plan, then write p.txt")
        messages = [m async for m in client.receive_response()]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    # Blocked while planning (nobody asked); the plan asked; the write then asked too.
    assert asked == [
        ("exit_plan_mode", {"plan": "1. write p.txt"}),
        ("write_file", {"path": "p.txt", "content": "planned"}),
    ]
    assert (workspace / "p.txt").read_text() == "planned"


async def test_a_failed_turn_is_an_error_result_and_the_sdk_raises_it(workspace, cfg, cli):
    from claude_agent_sdk import ResultError

    from reasonix_testkit import HttpError

    cfg.enqueue(HttpError(400, "bad request: the model is unwell"))
    lines: list[str] = []
    seen: list[Any] = []
    with pytest.raises(ResultError, match="the model is unwell"):
        async for message in query(prompt="hi", options=options(cli, workspace, stderr_lines=lines)):
            seen.append(message)
    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.subtype == "error_during_execution"
    errors = [line for line in lines if line.startswith("reasonix: error:")]
    assert len(errors) == 1 and "the model is unwell" in errors[0]


async def test_message_ids_are_unique_across_turns(workspace, cfg, cli):
    cfg.enqueue(Reply(content="a"), Reply(content="b"))
    async with ClaudeSDKClient(options(cli, workspace)) as client:
        ids = []
        for prompt in ("one", "two"):
            await client.query(prompt)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    ids.append(message.message_id)
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(i and i.startswith("msg_") for i in ids)


def test_an_image_alone_is_a_turn(workspace, cfg):
    import base64

    data = base64.b64encode(_png()).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    cfg.enqueue(Reply(content="a pixel"))
    proc = run_stream(workspace, [_message(image)])
    assert proc.returncode == 0, proc.stderr
    (result,) = [o for o in map(json.loads, proc.stdout.splitlines()) if o["type"] == "result"]
    assert result["result"] == "a pixel" and not result["is_error"]
    parts = cfg.requests[0].json["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}} in parts
