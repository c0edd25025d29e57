"""A hostile model or a hostile command line never crashes a run (issue 10, holes 7 and 8).

Every hostile tool call is scripted on the loopback fixture model and sent through a
real ``reasonix run`` subprocess: the call becomes an error result the model reads, the
run ends normally with its JSON result and its metrics, and the transcript reloads.
Every malformed command-line input is exit 2 with one line, before any request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from reasonix_core import events as ev
from reasonix_core.agent.session import SessionStore, open_session, read_session
from reasonix_core.errors import SessionError, ToolArgumentError
from reasonix_core.messages import Message, ToolCall
from reasonix_core.tool.registry import ToolRegistry
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV, write_config
from tests.core.agent_helpers import run_turn, runtime, session_header

DEEP = 100_000


def reasonix(
    cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY}, **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix_tui.cli", *args],
        cwd=cwd,
        env=full_env,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8"),
        proc.stderr.decode("utf-8", "backslashreplace"),
    )


@pytest.fixture
def cfg(home: Path, server: Any) -> Any:
    write_config(home, server.base_url)
    return server


def tool_results(server: Any, request: int) -> list[dict[str, Any]]:
    messages = json.loads(server.requests[request].body)["messages"]
    return [m for m in messages if m["role"] == "tool"]


def only_session(home: Path) -> Path:
    (path,) = (home / "sessions").glob("*/*.jsonl")
    return path


# --------------------------------------------------------------------------- hostile calls

HOSTILE_CALLS = {
    # NUL bytes and lone surrogates reach the permission check and the file system.
    "nul byte in a read path": ("read_file", '{"path": "a\\u0000b.txt"}'),
    "nul byte in a listed path": ("ls", '{"path": "sub\\u0000"}'),
    "nul byte in a shell command": ("bash", '{"command": "echo a\\u0000b"}'),
    "lone surrogate in a write path": ("write_file", '{"path": "\\ud800.txt", "content": "x"}'),
    "lone surrogate in an edit path": (
        "edit_file",
        '{"path": "\\udfff", "old_string": "a", "new_string": "b"}',
    ),
    "lone surrogate in a grep path": ("grep", '{"pattern": "x", "path": "\\ud800"}'),
    # The argument text itself holds the lone surrogate (not a JSON escape of it).
    "raw lone surrogate in the argument text": ("read_file", '{"path": "a\ud800.txt"}'),
    "100,000-deep JSON arguments": ("read_file", "[" * DEEP + "]" * DEEP),
    "100,000-deep JSON inside an argument": (
        "read_file",
        '{"path": ' + "[" * DEEP + "]" * DEEP + "}",
    ),
    "arguments that are not JSON": ("read_file", "{path: a.txt"),
    "a raw NUL byte in the argument text": ("read_file", '{"path": "a\x00b"}'),
    "a 5,000-digit integer argument": ("read_file", '{"path": "a", "offset": ' + "9" * 5000 + "}"),
    "an infinite number argument": ("read_file", '{"path": "a", "limit": 1e400}'),
    "a NaN argument": ("read_file", '{"path": "a", "offset": NaN}'),
    "a lone surrogate in the tool name": ("read_file\ud800", "{}"),
    "an empty tool name": ("", "{}"),
    "a symlink loop in the path": ("write_file", '{"path": "loop/x", "content": "x"}'),
    "a FIFO as the path": ("read_file", '{"path": "fifo"}'),
    "arguments that are a JSON array": ("read_file", '["a.txt"]'),
    "an unknown tool": ("no_such_tool", "{}"),
    "a 2 MB argument string": ("read_file", json.dumps({"path": "x" * 2_000_000})),
}


@pytest.mark.parametrize("case", list(HOSTILE_CALLS))
def test_hostile_call_is_an_error_result_and_the_run_finishes(
    case: str, workspace: Path, cfg: Any, home: Path, tmp_path: Path
) -> None:
    name, arguments = HOSTILE_CALLS[case]
    os.mkfifo(workspace / "fifo")
    (workspace / "loop").symlink_to("loop")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec(name, arguments)], arg_chunk=0),
        Reply(content="recovered"),
    )
    metrics_path = tmp_path / "metrics.json"
    proc = reasonix(
        workspace, "run", "go", "--output-format", "json", "--metrics", str(metrics_path)
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["subtype"] == "success" and result["result"] == "recovered"
    # The model was asked again and read an error for its call.
    assert len(cfg.requests) == 2
    (tool,) = tool_results(cfg, 1)
    assert tool["content"].strip()
    metrics = json.loads(metrics_path.read_text())
    assert metrics["complete"] is True and metrics["outcome"] == "success"
    assert metrics["tool_calls"] == 1 and metrics["tool_failures"] == 1
    # The transcript reloads, with the call and its result.
    _, messages = read_session(only_session(home))
    assert [m.role for m in messages][-3:] == ["assistant", "tool", "assistant"]
    assert messages[-3].tool_calls[0].arguments == arguments


def test_hostile_calls_in_one_batch_leave_the_good_call_alone(workspace: Path, cfg: Any) -> None:
    (workspace / "good.txt").write_text("the good content\n")
    calls = [
        ToolCallSpec("read_file", '{"path": "a\\u0000"}'),
        ToolCallSpec("read_file", '{"path": "good.txt"}'),
        ToolCallSpec("grep", '{"pattern": "x", "path": "\\ud800"}'),
        ToolCallSpec("read_file", "[" * DEEP + "]" * DEEP),
    ]
    cfg.enqueue(Reply(tool_calls=calls, arg_chunk=0), Reply(content="done"))
    proc = reasonix(workspace, "run", "go", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    results = tool_results(cfg, 1)
    assert len(results) == 4
    assert "the good content" in results[1]["content"]


def test_lone_surrogate_and_nul_in_model_text_survive_output_and_continue(
    workspace: Path, cfg: Any, home: Path
) -> None:
    hostile_text = "before \ud800 nul \x00 after"
    cfg.enqueue(
        Reply(
            content=hostile_text,
            tool_calls=[ToolCallSpec("read_file", '{"path": "x\udc00.txt"}')],
            arg_chunk=0,
        ),
        Reply(content="answer \udfff end"),
    )
    proc = reasonix(workspace, "run", "go")  # text output: the answer streams to stdout
    assert proc.returncode == 0, proc.stderr
    assert "answer \\udfff end" in proc.stdout
    _, messages = read_session(only_session(home))
    assert messages[-3].content == hostile_text  # lossless on disk
    assert messages[-1].content == "answer \udfff end"
    first = json.loads(cfg.requests[1].body)["messages"]

    cfg.enqueue(Reply(content="continued"))
    proc = reasonix(workspace, "run", "-c", "again", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "continued"
    second = json.loads(cfg.requests[2].body)["messages"]
    assert second[: len(first)] == first  # the reloaded history is what was sent


@pytest.mark.parametrize(
    "line",
    ["data: " + "[" * DEEP + "]" * DEEP, "data: " + "9" * 5000],
    ids=["100,000-deep JSON event", "5,000-digit number event"],
)
def test_stream_event_python_cannot_load_is_a_retried_interruption(
    line: str, workspace: Path, cfg: Any
) -> None:
    cfg.enqueue(Reply(content="partial", garbage_line=line), Reply(content="recovered"))
    proc = reasonix(workspace, "run", "go", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["result"] == "recovered"
    assert len(cfg.requests) == 2  # the broken stream was retried once


# --------------------------------------------------------------------------- engine level


def test_deep_arguments_are_an_argument_error() -> None:
    with pytest.raises(ToolArgumentError, match="nested too deeply"):
        ToolRegistry.parse_arguments("[" * DEEP + "]" * DEEP)
    with pytest.raises(ToolArgumentError, match="cannot be used"):
        ToolRegistry.parse_arguments('{"offset": ' + "9" * 5000 + "}")


@pytest.mark.parametrize(
    "boom",
    [RecursionError("deep"), ValueError("bad"), UnicodeEncodeError("utf-8", "x", 0, 1, "no")],
)
def test_an_exception_outside_the_tool_is_the_calls_result(
    boom: Exception, workspace: Path, configured: Any
) -> None:
    """The permission check (or anything else around a tool) raising: the model
    reads it as that call's error and the turn goes on."""
    (workspace / "a.txt").write_text("alpha\n")
    configured.enqueue(  # type: ignore[attr-defined]
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "a.txt"}')]),
        Reply(content="fine"),
    )

    async def main() -> list[ev.Event]:
        async with runtime(workspace) as rt:

            def explode(*args: Any, **kwargs: Any) -> Any:
                raise boom

            rt.agent.gate.policy.decide = explode
            return await run_turn(rt, "go")

    events = anyio.run(main)
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].is_error
    assert finished[0].result.startswith(f"internal error in read_file: {type(boom).__name__}")
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "fine"


def test_transcript_with_lone_surrogates_and_nul_round_trips(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "sessions", tmp_path, session_header("s1"))
    hostile = [
        Message(role="user", content="prompt \x00 \ud800"),
        Message(
            role="assistant",
            content="é \udfff",
            tool_calls=(ToolCall(id="c1", name="read_file", arguments='{"path":"\udc80"}'),),
        ),
        Message(role="tool", tool_call_id="c1", content="no such file: \udc80 \x00"),
    ]
    for message in hostile:
        store.append(message)
    store.write_checkpoint({"note": "\ud800"})
    store.close()
    _, messages = read_session(store.path)
    assert messages == hostile
    assert store.read_checkpoint() == {"note": "\ud800"}


@pytest.mark.parametrize("bad", ["../../../x", "../*/x", "a/b", "*", ".hidden", " "])
def test_resume_id_is_a_name_not_a_path(tmp_path: Path, bad: str) -> None:
    # A valid-looking session outside the sessions folder, reachable by "../../../x"
    # (it would be opened and appended to).
    (tmp_path / "x.jsonl").write_text('{"type":"session","id":"x"}\n')
    (tmp_path / "home" / "sessions" / "w").mkdir(parents=True)
    with pytest.raises(SessionError, match="is not a session id"):
        open_session(tmp_path / "home" / "sessions", tmp_path / "ws", bad)


# --------------------------------------------------------------------------- command line


def assert_usage_error(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reasonix: error: "), proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize(
    ("rules", "bad"),
    [
        ("Bash((", "Bash(("),
        ("Edit Bash(git status", "Bash(git status"),
        ("Nope(x)", "Nope(x)"),
        (")(", ")("),
        ("Read(.env) Bash()", "Bash()"),
    ],
)
def test_malformed_allowed_tools_rule_is_exit_2_naming_it(
    rules: str, bad: str, workspace: Path, cfg: Any
) -> None:
    proc = reasonix(workspace, "run", "hi", "--allowed-tools", rules)
    assert_usage_error(proc, "--allowed-tools", repr(bad))
    assert cfg.requests == []


def test_malformed_rule_in_the_project_file_is_exit_2_naming_the_file(
    workspace: Path, cfg: Any
) -> None:
    (workspace / "reasonix.toml").write_text('[permissions]\ndeny = ["Read("]\n')
    proc = reasonix(workspace, "run", "hi")
    assert_usage_error(proc, "reasonix.toml", "permissions.deny", "'Read('")
    assert cfg.requests == []


def test_deleted_current_directory_is_exit_2(tmp_path: Path, cfg: Any) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    for args in (["run", "hi"], ["permissions", "check", "bash", "ls"], ["compact"]):
        proc = subprocess.run(
            [
                *("sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone)),
                *(sys.executable, "-m", "reasonix_tui.cli", *args),
            ],
            env=dict(os.environ, **{TEST_KEY_ENV: TEST_KEY}),
            capture_output=True,
            text=True,
            timeout=60,
        )
        gone.mkdir()
        assert_usage_error(proc, "the current directory no longer exists")
    assert cfg.requests == []


def test_stdin_that_is_not_utf8_is_exit_2(workspace: Path, cfg: Any) -> None:
    proc = reasonix(workspace, "run", stdin=b"fix \xff\xfe this")
    assert_usage_error(proc, "standard input is not valid UTF-8")
    assert cfg.requests == []


def test_prompt_argument_that_is_not_utf8_is_exit_2(workspace: Path, cfg: Any) -> None:
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"reasonix_tui.cli", b"run", b"fix \xff this"],
        cwd=workspace,
        env=dict(os.environ, **{TEST_KEY_ENV: TEST_KEY}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_usage_error(proc, "the prompt is not valid UTF-8")
    assert cfg.requests == []


@pytest.mark.parametrize("where", ["a directory", "a missing folder", "under a file"])
def test_unwritable_metrics_path_is_exit_2(
    where: str, workspace: Path, cfg: Any, tmp_path: Path
) -> None:
    (tmp_path / "plain").write_text("")
    path = {
        "a directory": tmp_path,
        "a missing folder": tmp_path / "missing" / "m.json",
        "under a file": tmp_path / "plain" / "m.json",
    }[where]
    proc = reasonix(workspace, "run", "hi", "--metrics", str(path))
    assert_usage_error(proc, "--metrics", str(path))
    assert cfg.requests == []


@pytest.mark.parametrize("value", ["-1", "0"])
def test_max_steps_below_one_is_exit_2(value: str, workspace: Path, cfg: Any) -> None:
    proc = reasonix(workspace, "run", "hi", "--max-steps", value)
    assert_usage_error(proc, "--max-steps")
    assert cfg.requests == []


@pytest.mark.parametrize("which", ["project", "user"])
def test_config_file_that_is_a_directory_is_exit_2(
    which: str, workspace: Path, cfg: Any, home: Path
) -> None:
    path = workspace / "reasonix.toml" if which == "project" else home / "config.toml"
    if path.exists():
        path.unlink()
    path.mkdir()
    proc = reasonix(workspace, "run", "hi")
    assert_usage_error(proc, str(path), "cannot read")
    assert cfg.requests == []


@pytest.mark.parametrize("which", ["project", "user"])
@pytest.mark.parametrize("trust", [False, True])
def test_config_with_a_number_python_will_not_load_is_exit_2(
    which: str, trust: bool, workspace: Path, cfg: Any, home: Path
) -> None:
    # Valid TOML, but int() refuses more than 4,300 digits (ValueError, not a decode error).
    path = workspace / "reasonix.toml" if which == "project" else home / "config.toml"
    path.write_text("[agent]\nmax_steps = " + "9" * 5000 + "\n")
    proc = reasonix(workspace, "run", *(["--trust-project"] if trust else []), "hi")
    assert_usage_error(proc, str(path), "invalid TOML")
    assert cfg.requests == []


def test_mcp_json_with_a_number_python_will_not_load_is_a_reported_problem(
    workspace: Path,
) -> None:
    (workspace / ".mcp.json").write_text(
        '{"mcpServers": {"a": {"command": "x", "timeout": ' + "9" * 5000 + "}}}"
    )
    from reasonix_core.mcp.config import load_mcp_setup

    setup = load_mcp_setup(workspace, workspace / "home", trust_project=True)
    assert [p.message.split(" (")[0] for p in setup.problems] == ["invalid JSON: Exceeds the limit"]


def test_uncreatable_session_folder_is_exit_2(workspace: Path, cfg: Any, home: Path) -> None:
    (home / "sessions").write_text("not a folder")
    proc = reasonix(workspace, "run", "hi")
    assert_usage_error(proc, "cannot create the session file")
    assert cfg.requests == []


def test_resume_id_that_is_a_path_is_exit_2(workspace: Path, cfg: Any) -> None:
    proc = reasonix(workspace, "run", "-r", "../../../etc/x", "hi")
    assert_usage_error(proc, "is not a session id")
    assert cfg.requests == []


@pytest.mark.parametrize("where", ["user", "project"])
def test_provider_without_base_url_is_a_config_error(
    where: str, workspace: Path, home: Path, server: Any
) -> None:
    provider = f'[[providers]]\nname = "nowhere"\nmodels = ["m1"]\napi_key_env = "{TEST_KEY_ENV}"\n'
    if where == "user":
        (home / "config.toml").write_text(provider)
        path = home / "config.toml"
    else:
        write_config(home, server.base_url)
        (workspace / "reasonix.toml").write_text('default_model = "nowhere"\n' + provider)
        path = workspace / "reasonix.toml"
    # A project's providers count only in a trusted folder (test_project_trust.py).
    trust = ["--trust-project"] if where == "project" else []
    proc = reasonix(workspace, "run", "hi", *trust)
    assert_usage_error(proc, str(path), "'nowhere'", "base_url")
    assert server.requests == []


def test_a_failure_outside_any_tool_still_ends_with_result_and_metrics(
    workspace: Path, configured: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last resort: an engine bug between steps leaves exit 1, the JSON result and
    the metrics instead of a traceback."""
    import io

    from reasonix_core.agent.context import ContextManager
    from reasonix_core.headless import HeadlessOptions, run_headless
    from reasonix_core.session.settings import RunSettings

    (workspace / "a.txt").write_text("a\n")
    configured.enqueue(  # type: ignore[attr-defined]
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "a.txt"}')]),
    )
    real_view = ContextManager.view
    calls = {"n": 0}

    def view_then_break(self: ContextManager, messages: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("boom \ud800")
        return real_view(self, messages)

    monkeypatch.setattr(ContextManager, "view", view_then_break)
    out, err = io.StringIO(), io.StringIO()
    metrics_path = tmp_path / "m.json"
    options = HeadlessOptions(
        prompt="go",
        settings=RunSettings(workspace=workspace),
        output_format="json",
        metrics_path=metrics_path,
    )
    outcome = anyio.run(lambda: run_headless(options, stdout=out, stderr=err))
    assert not outcome.ok
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["is_error"] is True
    assert result["result"] == "internal error: RuntimeError: boom \ud800"
    metrics = json.loads(metrics_path.read_text())
    assert metrics["complete"] is True and metrics["outcome"] == "error"
    assert metrics["steps"] == 1 and metrics["tool_calls"] == 1


# --------------------------------------------------------------------------- hostile repository


def test_instruction_file_linking_out_of_the_workspace_is_not_sent(
    workspace: Path, cfg: Any, home: Path
) -> None:
    """A cloned repository's AGENTS.md -> ~/.reasonix/.env would put the user's keys into
    the system prompt of every request; a link inside the workspace still works."""
    (home / ".env").write_text("OTHER_API_KEY=sk-secret-from-dotenv\n")
    (workspace / "AGENTS.md").symlink_to(home / ".env")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "claude.md").write_text("Run the tests with make check.\n")
    (workspace / "CLAUDE.md").symlink_to("docs/claude.md")
    cfg.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    body = cfg.requests[0].body.decode()
    assert "sk-secret-from-dotenv" not in body
    assert "Run the tests with make check." in body
