"""Stop and UserPromptSubmit around the turns Reasonix drives itself: goal rounds
and the execution of an approved plan (docs/HOOKS.md#turns-reasonix-drives), with
real Python hook scripts through real `reasonix run` subprocesses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reasonix_testkit import Reply
from tests.conftest import reasonix
from tests.core.coordinator_helpers import call, configure
from tests.core.test_goal_mode import GoalScript, _configure


@pytest.fixture(autouse=True)
def _no_claude_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


def _logging_hooks(home: Path, log: Path, block_first_stop: bool = False) -> None:
    """A UserPromptSubmit and a Stop hook that log what they were given; the Stop
    hook optionally blocks once (when ``stop_hook_active`` is false and the log
    says it has not blocked yet)."""
    script = log.parent / "log_hook.py"
    script.write_text(f"""#!{sys.executable}
import json, os, sys
d = json.load(sys.stdin)
log = {str(log)!r}
seen = open(log).read() if os.path.exists(log) else ""
with open(log, "a") as f:
    f.write(json.dumps({{k: d.get(k) for k in ("hook_event_name", "prompt", "stop_hook_active")}}) + "\\n")
if {block_first_stop!r} and d["hook_event_name"] == "Stop" and "blocked-once" not in seen:
    with open(log, "a") as f:
        f.write("blocked-once\\n")
    print("check the docs too", file=sys.stderr)
    sys.exit(2)
""")
    script.chmod(0o755)
    hook = [{"matcher": "", "hooks": [{"type": "command", "command": str(script)}]}]
    (home / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": hook, "Stop": hook}})
    )


def _entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def test_goal_rounds_run_stop_each_round_and_user_prompt_submit_once(
    workspace, home, server, monkeypatch, tmp_path
):
    log = tmp_path / "hooks.log"
    _configure(home, server, monkeypatch, GoalScript(
        Reply(content="first half"), Reply(content="checked"), Reply(content="second half"),
    ))  # fmt: skip
    _logging_hooks(home, log, block_first_stop=True)
    proc = reasonix(
        workspace, "run", "--goal", "refactor the parser", "--max-goal-rounds", "2",
        "--output-format", "json",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # the bound stops the goal
    entries = _entries(log)
    # The user's objective is a prompt the user submitted; the host-made
    # "continue" rounds are not.
    prompts = [e for e in entries if e["hook_event_name"] == "UserPromptSubmit"]
    assert [e["prompt"] for e in prompts] == ["refactor the parser"]
    # Stop at the end of every main-agent turn: round one (blocked once, so the
    # model went on with stop_hook_active), then round two.
    stops = [e["stop_hook_active"] for e in entries if e["hook_event_name"] == "Stop"]
    assert stops == [False, True, False]
    users = [m["content"] for m in server.requests[1].json["messages"] if m["role"] == "user"]
    assert users[-1].startswith("A Stop hook asks you to continue: check the docs too")
    assert len(server.requests) == 3


def test_an_approved_plan_runs_stop_but_not_user_prompt_submit(
    workspace, home, server, monkeypatch, tmp_path
):
    script = configure(home, server, monkeypatch, planner="")
    script.executor(call("exit_plan_mode", plan="# Plan\ncreate out.txt"), Reply(content="Saved."))
    proc = reasonix(workspace, "run", "--permission-mode", "plan", "create out.txt")
    assert proc.returncode == 0, proc.stderr
    log = tmp_path / "hooks.log"
    _logging_hooks(home, log, block_first_stop=True)
    script.executor(
        call("write_file", path="out.txt", content="made"),
        Reply(content="made it"),
        Reply(content="docs checked"),
    )
    proc = reasonix(workspace, "run", "-c", "--approve-plan", "-y", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "out.txt").read_text() == "made"
    entries = _entries(log)
    # Approving is not a prompt (Claude Code runs none when a plan is accepted).
    assert [e["hook_event_name"] for e in entries] == ["Stop", "Stop"]
    assert [e["stop_hook_active"] for e in entries] == [False, True]
    assert json.loads(proc.stdout)["result"] == "docs checked"
