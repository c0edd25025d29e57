"""`reasonix run` end to end: a real subprocess against the loopback fixture server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from reasonix_testkit import HttpError, Reply, ToolCallSpec, count_tokens
from reasonix_testkit.dialects.chat import render_prompt
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def test_text_output_streams_the_answer(workspace, cfg):
    cfg.enqueue(Reply(content="Hello there."))
    proc = reasonix(workspace, "run", "say hello")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Hello there."


def test_prompt_from_stdin(workspace, cfg):
    cfg.enqueue(Reply(content="from stdin"))
    proc = reasonix(workspace, "run", stdin="what is up")
    assert proc.returncode == 0, proc.stderr
    user = [m for m in json.loads(cfg.requests[0].body)["messages"] if m["role"] == "user"][0]
    assert user["content"].startswith("what is up")


def test_json_result_and_metrics_reconcile_with_provider_usage(workspace, cfg, tmp_path):
    (workspace / "a.txt").write_text("alpha\n")
    cfg.enqueue(
        Reply(reasoning="let me read", tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="it says alpha"),
    )
    metrics_path = tmp_path / "m.json"
    proc = reasonix(
        workspace, "run", "read a.txt", "--output-format", "json", "--metrics", str(metrics_path)
    )
    assert proc.returncode == 0, proc.stderr
    result = last_json(proc.stdout)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["result"] == "it says alpha"
    assert result["num_turns"] == 2
    metrics = json.loads(metrics_path.read_text())
    assert not metrics_path.with_name("m.json.partial").exists()
    assert metrics["complete"] is True and metrics["outcome"] == "success"
    # Reconcile with what the server computed for each request.
    expected_prompt = sum(count_tokens(render_prompt(json.loads(r.body))) for r in cfg.requests)
    usage = result["usage"]
    # Claude Code's convention: input_tokens is the uncached part only.
    assert usage["input_tokens"] == metrics["cache_miss_tokens"] == usage["cache_miss_input_tokens"]
    assert metrics["prompt_tokens"] == expected_prompt
    assert expected_prompt == usage["input_tokens"] + usage["cache_read_input_tokens"]
    assert metrics["cache_hit_tokens"] + metrics["cache_miss_tokens"] == metrics["prompt_tokens"]
    assert metrics["steps"] == 2 and metrics["tool_calls"] == 1
    assert metrics["tool_calls_by_name"] == {"read_file": 1}
    assert metrics["usage_by_source"]["executor"]["calls"] == 2
    assert metrics["cost"] > 0 and metrics["currency"] == "USD"
    for key in (
        "subagent_runs",
        "subagent_nested_runs",
        "false_completions",
        "write_scope_violations",
    ):
        assert metrics[key] == 0


def test_stream_json_prints_events_then_result(workspace, cfg):
    cfg.enqueue(Reply(content="streamed"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    kinds = [(line["type"], line.get("subtype")) for line in lines]
    assert kinds[0] == ("system", "init") and kinds[1] == ("system", "turn_started")
    assert ("system", "text_delta") in kinds and ("system", "usage") in kinds
    assert kinds[-3:] == [("assistant", None), ("system", "turn_finished"), ("result", "success")]
    assert lines[-3]["message"]["content"] == [{"type": "text", "text": "streamed"}]


def test_provider_error_exits_1_with_its_message(workspace, cfg):
    cfg.enqueue(HttpError(402, "Insufficient Balance", type="unknown_error"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "json")
    assert proc.returncode == 1
    assert "Insufficient Balance" in proc.stderr or "Insufficient Balance" in proc.stdout
    assert last_json(proc.stdout)["is_error"] is True
    assert "Traceback" not in proc.stderr


def test_retries_exhausted_exit_1(workspace, cfg):
    cfg.enqueue(*[HttpError(503, "Server Overloaded", type="server_error")] * 4)
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 1
    assert "Server Overloaded" in proc.stderr
    assert len(cfg.requests) == 4


def test_malformed_toml_exits_2_naming_file_and_line(workspace, cfg):
    (workspace / "reasonix.toml").write_text('default_model = "x"\n[agent\n')
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 2
    assert "reasonix.toml:2" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert cfg.requests == []


def test_unknown_model_exits_2_listing_models_and_sends_nothing(workspace, cfg):
    proc = reasonix(workspace, "run", "hi", "--model", "gpt-nope")
    assert proc.returncode == 2
    assert (
        "gpt-nope" in proc.stderr and "deepseek-flash" in proc.stderr and "fixture" in proc.stderr
    )
    assert cfg.requests == []


def test_effort_from_flag_and_config_is_checked_the_same_way(workspace, cfg):
    # `medium` was accepted by --effort and refused by [agent] effort; both now
    # ask the provider (DeepSeek maps medium to high).
    for args, project in ((("--effort", "medium"), ""), ((), '[agent]\neffort = "medium"\n')):
        (workspace / "reasonix.toml").write_text(project)
        cfg.requests.clear()
        cfg.enqueue(Reply(content="ok"))
        proc = reasonix(workspace, "run", "hi", *args)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(cfg.requests[0].body)["reasoning_effort"] == "high"


def test_effort_the_provider_does_not_accept_exits_2_naming_its_levels(workspace, home, server):
    write_config(home, server.base_url, protocol="openai")  # chat reasoning_effort: no "ultra"
    errors = []
    for args, project in ((("--effort", "ultra"), ""), ((), '[agent]\neffort = "ultra"\n')):
        (workspace / "reasonix.toml").write_text(project)
        proc = reasonix(workspace, "run", "hi", *args)
        assert proc.returncode == 2, proc.stderr
        errors.append(proc.stderr)
    assert errors[0] == errors[1]
    assert "'ultra' is not accepted by provider 'fixture'" in errors[0]
    assert "it accepts: auto, disabled, none, off, minimal, low, medium, high, max" in errors[0]
    assert server.requests == []


def test_missing_key_exits_2_naming_the_variable(workspace, cfg):
    proc = reasonix(workspace, "run", "hi", key=False)
    assert proc.returncode == 2
    assert TEST_KEY_ENV in proc.stderr and ".env" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert cfg.requests == []


def test_key_from_dotenv(workspace, cfg, home):
    (home / ".env").write_text(f"{TEST_KEY_ENV}={TEST_KEY}\n")
    cfg.enqueue(Reply(content="keyed"))
    proc = reasonix(workspace, "run", "hi", key=False)
    assert proc.returncode == 0, proc.stderr


def test_empty_prompt_is_a_usage_error(workspace, cfg):
    proc = reasonix(workspace, "run", "   ")
    assert proc.returncode == 2


def test_continue_is_an_append_only_extension(workspace, cfg):
    cfg.enqueue(Reply(reasoning="r1", content="first answer"))
    assert reasonix(workspace, "run", "first").returncode == 0
    cfg.enqueue(Reply(content="second answer"))
    proc = reasonix(workspace, "run", "-c", "second", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(r.body) for r in cfg.requests)
    n = len(first["messages"])
    assert second["messages"][:n] == first["messages"]
    assert second["messages"][n]["role"] == "assistant"
    assert second["messages"][n]["content"] == "first answer"
    # Byte level: the earlier messages serialise identically.
    enc = lambda ms: json.dumps(ms, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    assert enc(second["messages"][:n]) == enc(first["messages"])
    # And the server saw a cache hit covering the whole first exchange.
    first_session = last_json(proc.stdout)["session_id"]
    proc3 = reasonix(workspace, "run", "-r", first_session, "third")
    assert proc3.returncode == 1  # queue empty -> fixture 500s, retried then failed
    assert "no scripted reply" in proc3.stderr


def test_resume_unknown_session_is_exit_2(workspace, cfg):
    proc = reasonix(workspace, "run", "-r", "nope", "hi")
    assert proc.returncode == 2
    assert "nope" in proc.stderr


def test_torn_last_line_is_tolerated_on_continue(workspace, cfg, home):
    cfg.enqueue(Reply(content="one"))
    assert reasonix(workspace, "run", "first").returncode == 0
    path = next((home / "sessions").glob("*/*.jsonl"))
    with path.open("a") as fh:
        fh.write('{"type":"message","message":{"role":"user","cont')
    cfg.enqueue(Reply(content="two"))
    proc = reasonix(workspace, "run", "-c", "again")
    assert proc.returncode == 0, proc.stderr
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)


def test_run_never_imports_textual(workspace, cfg):
    cfg.enqueue(Reply(content="light"))
    code = (
        "import sys\n"
        "from reasonix_tui.cli import main\n"
        "rc = main(['run', 'hi'])\n"
        "assert 'textual' not in sys.modules, 'textual was imported'\n"
        "assert 'reasonix_tui.app' not in sys.modules, 'the TUI app was imported'\n"
        "assert 'rich' not in sys.modules, 'rich was imported (httpx CLI module?)'\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_run_loads_only_what_it_uses(workspace, cfg):
    # Start-up (issue 11): with no MCP server declared anywhere the MCP package is
    # not imported, a built-in tool's module waits for its first call, the shell
    # lexer for the first bash rule or command, memory for the first fact.
    cfg.enqueue(Reply(content="light"))
    lazy = (
        "reasonix_core.mcp",
        "reasonix_core.tool.builtin.read_file",
        "reasonix_core.tool.builtin.bash",
        "html.parser",
        "reasonix_core.permission.shell_lexer",
        "tokenizers",
        # Memory is built on first use: no fact was ever saved here.
        "reasonix_core.memory.facts",
        "reasonix_core.memory.history",
        "reasonix_core.memory.recall",
        "reasonix_core.memory.bm25",
        # No skills folder anywhere: nothing that reads a SKILL.md is imported.
        "reasonix_core.skills.discovery",
    )
    code = (
        "import sys\n"
        "from reasonix_tui.cli import main\n"
        "rc = main(['run', 'hi'])\n"
        f"loaded = [m for m in {lazy!r} if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "light" in proc.stdout


def test_run_with_a_project_file_but_no_server_skips_mcp(workspace, cfg):
    # A reasonix.toml that declares no [mcp] (here: only a safe setting) is no reason
    # to import the MCP package; a trusted [mcp] would show in the loaded config.
    (workspace / "reasonix.toml").write_text("[agent]\nmax_steps = 5\n", encoding="utf-8")
    cfg.enqueue(Reply(content="light"))
    code = (
        "import sys\n"
        "from reasonix_tui.cli import main\n"
        "rc = main(['run', 'hi'])\n"
        "assert 'reasonix_core.mcp' not in sys.modules, 'the MCP package was imported'\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "light" in proc.stdout


def test_run_collects_no_garbage_while_it_starts(workspace, cfg):
    # Start-up (issue 11): the engine's imports and the runtime are long-lived, so
    # no collection runs while they are built; then they are frozen and collection
    # resumes (a collector left off would keep every cycle of a long run).
    cfg.enqueue(Reply(content="light"))
    code = (
        "import gc, sys\n"
        "from reasonix_tui.cli import main\n"
        "early = []\n"
        "def seen(phase, info):\n"
        "    if phase == 'start' and 'reasonix_core.headless' in sys.modules:\n"
        "        early.append(gc.get_freeze_count() == 0)\n"
        "gc.callbacks.append(seen)\n"
        "rc = main(['run', 'hi'])\n"
        "assert not any(early), f'{sum(early)} collections while starting'\n"
        "assert gc.isenabled() and gc.get_freeze_count() > 10_000, gc.get_freeze_count()\n"
        "assert main(['run', '--max-steps', '0', 'hi']) == 2\n"
        "assert gc.isenabled(), 'a failed start left the collector off'\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "light" in proc.stdout


def test_importing_core_never_loads_ui_libraries():
    code = (
        "import sys, reasonix_core, reasonix_core.agent.loop, reasonix_core.session.build, "
        "reasonix_core.headless, reasonix_core.tool.builtin, reasonix_core.permission\n"
        # (rich may arrive through httpx's optional CLI module; textual never may)
        "bad = [m for m in ('textual', 'reasonix_tui') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_version_is_fast_path():
    code = (
        "import sys\nfrom reasonix_tui.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('textual', 'pydantic', 'httpx', 'mcp', 'regex', 'tokenizers')\n"
        "         if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "reasonix" in proc.stdout


def test_version_answers_without_building_the_parser(monkeypatch, capsys):
    # Start-up (issue 11): building the parser and its every subcommand was most of
    # `reasonix --version`'s own time; the answer is the version action's text.
    from reasonix_tui import cli

    def no_parser():
        raise AssertionError("the parser was built for --version")

    monkeypatch.setattr(cli, "_parser", no_parser)
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"{cli.VERSION}\n"


def test_max_steps_stops_and_reports_error(workspace, cfg):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
    )
    proc = reasonix(workspace, "run", "loop", "--max-steps", "1", "--output-format", "json")
    assert proc.returncode == 1
    result = last_json(proc.stdout)
    assert result["subtype"] == "error_max_turns"  # Claude Code's word
    assert len(cfg.requests) == 1


def test_metrics_partial_is_refreshed_while_running(workspace, cfg, tmp_path):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="slow " * 60, chunk_size=5, delay=0.05),
    )
    metrics_path = tmp_path / "run.json"
    partial = tmp_path / "run.json.partial"
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.Popen(
        [sys.executable, "-m", "reasonix_tui.cli", "run", "go", "--metrics", str(metrics_path)],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen_partial = None
    import time

    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        if partial.exists():
            try:
                seen_partial = json.loads(partial.read_text())
            # Half-written, or already removed by the run finishing between the two calls.
            except (json.JSONDecodeError, FileNotFoundError):
                pass
        time.sleep(0.02)
    proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert seen_partial is not None and seen_partial["complete"] is False
    assert seen_partial["steps"] >= 1
    final = json.loads(metrics_path.read_text())
    assert final["complete"] is True and final["steps"] == 2
    assert not partial.exists()


def test_permissions_check_explains_the_decision(workspace, home):
    (workspace / "reasonix.toml").write_text(
        '[permissions]\ndeny = ["Bash(git push*)"]\nallow = ["Bash(pytest:*)"]\n'
    )
    # The project's allow rule loosens: it counts once the folder is trusted.
    assert reasonix(workspace, "trust", key=False).returncode == 0
    proc = reasonix(workspace, "permissions", "check", "bash", "git push origin main", key=False)
    assert proc.returncode == 0, proc.stderr
    assert "deny" in proc.stdout and "Bash(git push*)" in proc.stdout
    proc = reasonix(workspace, "permissions", "check", "bash", "pytest -q", key=False)
    assert "allow" in proc.stdout and "Bash(pytest:*)" in proc.stdout
    proc = reasonix(workspace, "permissions", "check", "read_file", "src/x.py", key=False)
    assert "allow" in proc.stdout


def test_allowed_tools_flag_allows_writes_headless(workspace, cfg):
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path": "out.txt", "content": "hi"}')]),
        Reply(content="written"),
    )
    proc = reasonix(workspace, "run", "write", "--allowed-tools", "Edit")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "out.txt").read_text() == "hi"


def test_allowed_tools_literal_rule_is_one_rule(workspace, cfg):
    # `Bash=<literal>` takes the rest of the string: one rule allowing exactly
    # this command (a CLI splitter of its own used to make three of it).
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command": "echo a b"}')]),
        Reply(content="done"),
    )
    proc = reasonix(workspace, "run", "x", "--allowed-tools", "Bash=echo a b")
    assert proc.returncode == 0, proc.stderr
    tool_msg = [m for m in json.loads(cfg.requests[1].body)["messages"] if m["role"] == "tool"][0]
    assert tool_msg["content"].startswith("a b"), tool_msg["content"]


def test_deny_rule_beats_yolo(workspace, cfg):
    (workspace / "reasonix.toml").write_text('[permissions]\ndeny = ["Bash(touch*)"]\n')
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("bash", '{"command": "touch hacked"}')]),
        Reply(content="denied"),
    )
    proc = reasonix(workspace, "run", "x", "--permission-mode", "yolo")
    assert proc.returncode == 0, proc.stderr
    assert not (workspace / "hacked").exists()
    tool_msg = [m for m in json.loads(cfg.requests[1].body)["messages"] if m["role"] == "tool"][0]
    assert "denied" in tool_msg["content"].lower()
