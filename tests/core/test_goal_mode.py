"""Goal mode at the loopback fixture: ``reasonix run --goal`` admits one ordinary
turn per round until the goal is complete, blocked or bound; a final answer does not
end it; the goal rides in the user turn (the request prefix is unchanged); the goal
lives in the session's records and is not armed again by a cold start."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reasonix_core.agent.session import open_session
from reasonix_core.goal.state import GoalStatus, project_goal
from reasonix_testkit import RecordedRequest, Reply, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config

GOAL_TAG = re.compile(r'<active-goal id="([^"]+)" revision="(\d+)"')

Step = Reply | Callable[[str, int], Reply]


def _update(action: str, **extra: Any) -> Callable[[str, int], Reply]:
    def reply(goal_id: str, revision: int) -> Reply:
        args = {"id": goal_id, "revision": revision, "action": action, **extra}
        return Reply(tool_calls=[ToolCallSpec("update_goal", json.dumps(args))])

    return reply


class GoalScript:
    """Replies in order; a callable step gets the goal id and revision the request carries."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.last_goal: tuple[str, int] | None = None

    def __call__(self, request: RecordedRequest) -> Reply:
        users = [m for m in (request.json or {})["messages"] if m["role"] == "user"]
        found = GOAL_TAG.search(users[-1]["content"] or "") if users else None
        if found:
            self.last_goal = (found.group(1), int(found.group(2)))
        step = self.steps.pop(0)
        if isinstance(step, Reply):
            return step
        assert self.last_goal is not None, "no active goal in the request"
        return step(*self.last_goal)


def _configure(home: Path, server: Any, monkeypatch: Any, script: GoalScript) -> None:
    write_config(home, server.base_url)
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    server.responder = script


def _session_path(home: Path, workspace: Path) -> Path:
    return open_session(home / "sessions", workspace, None).store.path


def _result(proc: Any) -> dict[str, Any]:
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_goal_runs_rounds_until_complete_and_keeps_the_prefix(
    workspace, home, server, monkeypatch
) -> None:
    script = GoalScript(
        Reply(content="I did the first half."),  # a final answer: the goal goes on
        _update("complete", note="verified"),
        Reply(content="Done."),
    )
    _configure(home, server, monkeypatch, script)
    proc = reasonix(workspace, "run", "--goal", "make the tests pass", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    result = _result(proc)
    assert result["stop_reason"] == "goal_complete"
    assert result["metrics"]["goal_rounds"] == 2
    bodies = [r.json for r in server.requests]
    assert len(bodies) == 3
    # Prefix unchanged: same system prompt and tools; the goal is in the user turns.
    assert all(b["messages"][0] == bodies[0]["messages"][0] for b in bodies)
    assert all(b["tools"] == bodies[0]["tools"] for b in bodies)
    assert "make the tests pass" not in bodies[0]["messages"][0]["content"]
    first_user = bodies[0]["messages"][1]["content"]
    assert first_user.startswith("make the tests pass") and "<active-goal" in first_user
    # Round two's request extends round one's messages byte for byte.
    assert bodies[1]["messages"][: len(bodies[0]["messages"])] == bodies[0]["messages"]
    second_user = [m for m in bodies[1]["messages"] if m["role"] == "user"][-1]["content"]
    assert second_user.startswith("Continue working toward the active goal.")
    goal = project_goal(_session_path(home, workspace))
    assert goal is not None and goal.status is GoalStatus.COMPLETE and goal.rounds == 2


def test_a_bound_stops_the_goal_resumably_and_a_cold_start_does_not_arm_it(
    workspace, home, server, monkeypatch
) -> None:
    script = GoalScript(Reply(content="working"), Reply(content="still working"))
    _configure(home, server, monkeypatch, script)
    proc = reasonix(
        workspace, "run", "--goal", "refactor", "--max-goal-rounds", "2",
        "--output-format", "json",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    result = _result(proc)
    assert result["stop_reason"] == "goal_bound"
    assert result["metrics"]["goal_rounds"] == 2
    assert len(server.requests) == 2
    goal = project_goal(_session_path(home, workspace))
    assert goal is not None and goal.status is GoalStatus.ACTIVE and goal.rounds == 2

    # -c: the goal is still in the session, but nothing armed it: an ordinary turn.
    script.steps.append(Reply(content="hello"))
    proc = reasonix(workspace, "run", "-c", "hi")
    assert proc.returncode == 0, proc.stderr
    last_user = [m for m in server.requests[-1].json["messages"] if m["role"] == "user"][-1]
    assert "<active-goal" not in last_user["content"]


def test_blocked_needs_three_rounds_and_stale_revisions_are_refused(
    workspace, home, server, monkeypatch
) -> None:
    def stale(goal_id: str, revision: int) -> Reply:
        return _update("pause")(goal_id, revision + 5)

    script = GoalScript(
        _update("blocked", note="too early"),  # round 1: refused
        stale,
        Reply(content="trying"),
        Reply(content="trying again"),  # round 2
        _update("blocked", note="the API does not exist"),  # round 3: still < 3 admitted
        Reply(content="hmm"),
        Reply(content="round 4"),
        _update("blocked", note="the API does not exist"),  # round 5: 4 admitted
        Reply(content="blocked"),
    )
    _configure(home, server, monkeypatch, script)
    proc = reasonix(workspace, "run", "--goal", "call the API", "--output-format", "stream-json")
    assert proc.returncode == 1, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    tool_results = [
        block["content"]
        for line in lines
        if line.get("type") == "user"
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert "at least 3 finished rounds (0 so far)" in str(tool_results[0])
    assert "is stale" in str(tool_results[1])
    assert len(tool_results) == 4, lines[-1]["result"]
    assert "(2 so far)" in str(tool_results[2])
    assert "Updated goal" in str(tool_results[3])
    assert lines[-1]["stop_reason"] == "goal_blocked"
    assert lines[-1]["metrics"]["goal_rounds"] == 5
    rounds = [line for line in lines if line.get("subtype") == "goal_round"]
    assert [r["round"] for r in rounds] == [1, 2, 3, 4, 5]
    assert [r["status"] for r in rounds] == ["active"] * 4 + ["blocked"]


def test_goal_usage_errors(workspace, home, server, monkeypatch) -> None:
    _configure(home, server, monkeypatch, GoalScript())
    proc = reasonix(workspace, "run", "--goal", "x", "also a prompt")
    assert proc.returncode == 2 and "--goal takes no prompt" in proc.stderr
    proc = reasonix(workspace, "run", "--max-goal-rounds", "2", "hi")
    assert proc.returncode == 2 and "need --goal" in proc.stderr
    proc = reasonix(workspace, "run", "--goal", "x", "--max-goal-rounds", "0")
    assert proc.returncode == 2 and "at least 1" in proc.stderr
    assert server.requests == []


def test_goal_cli_status_pause_resume_clear(workspace, home, server, monkeypatch) -> None:
    _configure(home, server, monkeypatch, GoalScript(Reply(content="working")))
    proc = reasonix(workspace, "run", "--goal", "ship it", "--max-goal-rounds", "1")
    assert proc.returncode == 1, proc.stderr
    status = reasonix(workspace, "goal", "status", "-c")
    assert status.returncode == 0 and "active, 1 round," in status.stdout
    assert "paused" in reasonix(workspace, "goal", "pause").stdout
    assert "active" in reasonix(workspace, "goal", "resume").stdout
    assert reasonix(workspace, "goal", "clear").returncode == 0
    assert project_goal(_session_path(home, workspace)) is None
    assert "no goal" in reasonix(workspace, "goal", "status").stdout
    proc = reasonix(workspace, "goal", "pause", "-r", "../x")
    assert proc.returncode != 0 and proc.stderr.startswith("reasonix: error:")
    assert len(server.requests) == 1  # the goal commands send nothing


def test_a_goal_start_goes_to_the_planner_and_its_rounds_to_the_executor(
    workspace, home, server, monkeypatch
) -> None:
    # The driver passes the host's TurnMeta: the objective's round is a Goal start
    # (planned first when a planner is configured), later rounds are host-made.
    from tests.core.coordinator_helpers import (
        EXECUTOR_MODEL,
        PLANNER_MODEL,
        configure,
        requests_for,
        submit,
    )

    script = configure(home, server, monkeypatch)
    script.planner(submit("# Plan\nfix the parser"), Reply(content="ok"))
    script.executor(Reply(content="half done"), Reply(content="still going"))
    proc = reasonix(
        workspace, "run", "--goal", "fix the parser", "--max-goal-rounds", "2",
        "--output-format", "json",
    )  # fmt: skip
    result = _result(proc)
    assert result["stop_reason"] == "goal_bound", proc.stderr
    assert result["metrics"]["routes"].get("goal") == 1
    assert len(requests_for(server, PLANNER_MODEL)) == 2  # one planning turn only
    _, second = requests_for(server, EXECUTOR_MODEL)
    users = [m["content"] for m in second["messages"] if m["role"] == "user"]
    assert users[0].startswith("fix the parser\n\n<plan>\n# Plan\nfix the parser\n</plan>")
    assert users[-1].startswith("Continue working toward the active goal.")


def test_update_goal_counts_the_running_round_as_goal_status_does(
    workspace, home, server, monkeypatch
) -> None:
    """Issue 30 item 3: update_goal mid-round, /goal status and the round records agree
    on rounds and tokens (the running round counted), one owner: the goal book."""
    script = GoalScript(
        Reply(content="I did the first half."),
        _update("complete", note="verified"),
        Reply(content="Done."),
    )
    _configure(home, server, monkeypatch, script)
    proc = reasonix(
        workspace, "run", "--goal", "make the tests pass", "--output-format", "stream-json"
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    results = [
        block["content"]
        for line in lines
        if line.get("type") == "user"
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    rounds = [line for line in lines if line.get("subtype") == "goal_round"]
    first_round_tokens = rounds[0]["tokens"]
    updated = str(results[0])
    found = re.search(r"complete, (\d+) rounds?, (\d+) tokens", updated)
    assert found is not None, updated
    assert int(found.group(1)) == 2 == rounds[-1]["rounds"]  # round 2 was running
    mid_round = int(found.group(2))
    assert first_round_tokens < mid_round <= rounds[-1]["tokens"]
    goal = project_goal(_session_path(home, workspace))
    assert goal is not None and goal.rounds == 2 and goal.tokens == rounds[-1]["tokens"]
