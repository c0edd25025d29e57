"""Claude Code's flag spellings on `reasonix run` (and `reasonix -p`): each is
mapped, accepted as harmless, or refused with one line naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def result(proc: Any) -> dict[str, Any]:
    return json.loads(proc.stdout.splitlines()[-1])


def sessions(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*/*.jsonl"))


def tool_results(cfg: Any, request: int = 1) -> list[str]:
    return [m["content"] for m in cfg.requests[request].json["messages"] if m["role"] == "tool"]


def test_allowed_tools_comma_separated_and_disallowed_tools(workspace, cfg):
    cfg.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("write_file", '{"path":"a.txt","content":"a"}'),
                ToolCallSpec("bash", '{"command":"echo hi"}'),
                ToolCallSpec("bash", '{"command":"git status"}'),
            ]
        ),
        Reply(content="done"),
    )
    proc = reasonix(
        workspace, "-p", "go", "--output-format", "json",
        "--allowedTools", "Write,Bash(echo:*)", "--allowedTools=Bash(git status)",
        "--disallowedTools", "Bash(git:*)",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _written, echoed, git = tool_results(cfg)
    assert (workspace / "a.txt").read_text() == "a"
    assert "hi" in echoed
    # The deny rule wins over the allow rule, as in Claude Code.
    assert "denied" in git.lower() and "Bash(git:*)" in git
    assert [d["tool_name"] for d in result(proc)["permission_denials"]] == ["bash"]


def test_a_malformed_rule_names_its_flag(workspace, cfg):
    proc = reasonix(workspace, "run", "x", "--disallowedTools", "Bash(")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: --disallowed-tools: Rule 'Bash('")
    assert len(proc.stderr.splitlines()) == 1 and not cfg.requests


@pytest.mark.parametrize(
    ("word", "preset"),
    [("default", "ask"), ("acceptEdits", "auto"), ("bypassPermissions", "yolo"), ("ask", "ask")],
)
def test_permission_mode_takes_claude_codes_words(workspace, cfg, word, preset):
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(
        workspace, "-p", "hi", "--permission-mode", word, "--output-format", "stream-json",
        "--verbose",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    init = json.loads(proc.stdout.splitlines()[0])
    assert init["permission_preset"] == preset
    assert init["permissionMode"] == {"ask": "default", "auto": "acceptEdits"}.get(
        preset, "bypassPermissions"
    )


def test_permission_mode_plan_and_an_unknown_word(workspace, cfg):
    cfg.enqueue(Reply(content="ok"), Reply(content="the plan"))
    # The global flag (the TUI's, given before -p) takes Claude Code's words too.
    proc = reasonix(
        workspace, "--permission-mode", "bypassPermissions", "-p", "hi", "--output-format",
        "stream-json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[0])["permission_preset"] == "yolo"
    proc = reasonix(workspace, "--permission-mode", "plan", "-p", "plan it", "--json")
    assert proc.returncode == 0, proc.stderr
    proc = reasonix(workspace, "run", "x", "--permission-mode", "dontAsk")
    assert proc.returncode == 2 and "invalid choice: 'dontAsk'" in proc.stderr


def test_system_prompt_replaces_the_base_and_keeps_the_rest(workspace, cfg, tmp_path):
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    cfg.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    proc = reasonix(
        workspace, "run", "x", "--system-prompt", "You review SQL.", "--append-system-prompt",
        "Be brief.", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    system = cfg.requests[0].json["messages"][0]["content"]
    assert system.startswith("You review SQL.")
    assert "You are Reasonix" not in system
    assert "Be brief." in system and "Always answer in haiku." in system
    # Empty (what claude-agent-sdk sends when the program sets none): Reasonix's own.
    proc = reasonix(workspace, "run", "y", "--system-prompt=", "--json")
    assert proc.returncode == 0, proc.stderr
    assert cfg.requests[1].json["messages"][0]["content"].startswith("You are Reasonix")
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("\ufeffFrom a file.\n")
    proc = reasonix(workspace, "run", "z", "--system-prompt-file", str(prompt_file), "--json")
    assert proc.returncode == 0, proc.stderr
    assert cfg.requests[2].json["messages"][0]["content"].startswith("From a file.")
    proc = reasonix(workspace, "run", "z", "--system-prompt-file", str(tmp_path / "none.md"))
    assert proc.returncode == 2 and "--system-prompt-file" in proc.stderr


def test_max_budget_usd_is_max_cost(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("ls", "{}")]),
        Reply(content="never reached"),
    )
    proc = reasonix(workspace, "run", "x", "--max-budget-usd", "0.0000001", "--json")
    assert proc.returncode == 1
    out = result(proc)
    assert out["subtype"] == "error_max_budget" and "cost" in out["result"]
    proc = reasonix(workspace, "run", "x", "--max-budget-usd", "0")
    assert proc.returncode == 2 and "--max-cost must be more than 0" in proc.stderr


def test_session_id_names_the_new_session(workspace, cfg, home):
    cfg.enqueue(Reply(content="one"), Reply(content="two"))
    uid = "0b6e8f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    proc = reasonix(workspace, "run", "x", "--session-id", uid, "--json")
    assert proc.returncode == 0, proc.stderr
    assert result(proc)["session_id"] == uid
    assert [p.stem for p in sessions(home)] == [uid]
    # The id is taken; -r continues it.
    proc = reasonix(workspace, "run", "y", "--session-id", uid)
    assert proc.returncode == 2 and "already exists" in proc.stderr
    proc = reasonix(workspace, "run", "y", "-r", uid, "--json")
    assert proc.returncode == 0 and result(proc)["session_id"] == uid
    for bad in ("../escape", "a/b", ".hidden"):
        proc = reasonix(workspace, "run", "y", "--session-id", bad)
        assert proc.returncode == 2 and "not a plain name" in proc.stderr
    proc = reasonix(workspace, "run", "y", "-c", "--session-id", "fresh")
    assert proc.returncode == 2 and "cannot be given with -c or -r" in proc.stderr


def test_include_partial_messages_needs_stream_json(workspace, cfg):
    proc = reasonix(workspace, "run", "x", "--include-partial-messages")
    assert proc.returncode == 2 and "--include-partial-messages needs" in proc.stderr
    cfg.enqueue(Reply(content="parts", chunk_size=2))
    proc = reasonix(
        workspace, "-p", "x", "--output-format", "stream-json", "--verbose",
        "--include-partial-messages",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    deltas = [
        e["event"]["delta"]["text"] for e in lines
        if e["type"] == "stream_event" and e["event"]["type"] == "content_block_delta"
    ]  # fmt: skip
    assert "".join(deltas) == "parts" and len(deltas) == 3


def test_mcp_config_as_json_text(workspace, cfg, tmp_path):
    cfg.enqueue(Reply(content="ok"))
    declared = {"mcpServers": {"nothing": {"command": str(tmp_path / "no-such-server")}}}
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = reasonix(
        workspace, "-p", "x", "--mcp-config", json.dumps(declared), "--output-format",
        "stream-json", "--verbose", env={"TMPDIR": str(temp)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    init = json.loads(proc.stdout.splitlines()[0])
    assert [s["name"] for s in init["mcp_servers"]] == ["nothing"]
    # The JSON text was a private file for the run only.
    assert not list(temp.glob("reasonix-mcp-config-*"))
    proc = reasonix(workspace, "run", "x", "--mcp-config", "{not json")
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr
    proc = reasonix(workspace, "run", "x", "--mcp-config", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_harmless_flags_are_accepted(workspace, cfg):
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(
        workspace, "-p", "x", "--json", "--verbose", "--setting-sources=user,project,local",
        "--tools", "default", "--include-hook-events",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert result(proc)["result"] == "ok"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--setting-sources", "user,cloud"], "--setting-sources: unknown source 'cloud'"),
        (["--tools", "Read,WebSearch"], "--tools: 'WebSearch' is not a tool Reasonix has"),
        (["--tools="], "--tools with no tool"),
        (["--permission-prompt-tool", "stdio"], "needs --input-format stream-json"),
        (["--fallback-model", "claude-haiku"], "unrecognized arguments: --fallback-model"),
        (["--json-schema", "{}"], "unrecognized arguments: --json-schema"),
        (["--betas", "x"], "unrecognized arguments: --betas"),
    ],
)
def test_a_flag_reasonix_cannot_honour_is_named(workspace, cfg, args, named):
    proc = reasonix(workspace, "run", "x", *args)
    assert proc.returncode == 2
    assert named in proc.stderr.splitlines()[-1]
    assert not cfg.requests


def test_without_a_command_the_print_mode_flags_mean_run(workspace, cfg):
    cfg.enqueue(Reply(reasoning="think", content="ok"))
    proc = reasonix(
        workspace, "--output-format", "stream-json", "--verbose", "--model=deepseek-flash",
        stdin="hello",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    thinking = [
        block for line in lines if line["type"] == "assistant"
        for block in line["message"]["content"] if block["type"] == "thinking"
    ]  # fmt: skip
    assert thinking == [{"type": "thinking", "thinking": "think", "signature": ""}]


def test_claude_codes_tool_names_in_rules():
    from reasonix_core.permission.rules import parse_rule

    for claude, ours in [
        ("TodoWrite", "todo_write"),
        ("NotebookEdit", "notebook_edit"),
        ("MultiEdit", "multi_edit"),
        ("BashOutput", "bash_output"),
        ("KillShell", "kill_shell"),
        ("Glob", "glob"),
        ("Task", "task"),
    ]:
        assert parse_rule(claude).tool == ours
    # A tool Reasonix does not have stays its own name: it matches no call.
    assert parse_rule("WebSearch").tool == "WebSearch"


def test_tools_restricts_the_offered_tools(workspace, cfg):
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(
        workspace, "-p", "x", "--tools", "Read,Grep,Glob", "--output-format", "stream-json",
        "--verbose",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    init = json.loads(proc.stdout.splitlines()[0])
    builtins = {"read_file", "ls", "glob", "grep"}
    assert set(init["tools"]) - {"use_capability"} == builtins
    sent = {t["function"]["name"] for t in cfg.requests[0].json["tools"]}
    assert sent - {"use_capability"} == builtins
