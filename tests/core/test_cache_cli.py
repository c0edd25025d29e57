"""`reasonix cache`: a session's cache account from its request records, in a real
subprocess, over sessions made by real runs against the loopback fixture."""

from __future__ import annotations

import json

import pytest

from reasonix_core.agent.session import requests_path
from reasonix_core.messages import Message
from reasonix_testkit import Reply
from tests.conftest import reasonix, write_config
from tests.core.agent_helpers import run_turn, runtime


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def test_a_model_switch_is_shown_priced_and_explained(workspace, cfg, tmp_path):
    cfg.enqueue(Reply(content="a"), Reply(content="b"), Reply(content="c"))
    assert reasonix(workspace, "run", "first").returncode == 0
    assert reasonix(workspace, "run", "-c", "second").returncode == 0
    switched = reasonix(workspace, "run", "-c", "-m", "deepseek-v4-pro", "third")
    assert switched.returncode == 0, switched.stderr

    proc = reasonix(workspace, "cache", "--json", "--check")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    requests = report["requests"]
    assert [r["request"] for r in requests] == [1, 2, 3]
    assert "break" not in requests[1]  # a plain continuation extends the cache
    brk = requests[2]["break"]
    assert brk["reason"] == "model" and brk["first_diff_byte"] == 0
    assert brk["rebilled_tokens"] == requests[1]["prompt_tokens"]
    assert requests[2]["cache_hit_tokens"] == 0  # the fixture's cache agrees
    assert requests[1]["hit_ratio"] > 0.5
    totals = report["totals"]
    assert report["breaks_by_reason"] == {
        "model": {
            "count": 1,
            "rebilled_tokens": brk["rebilled_tokens"],
            "rebilled_cost": brk["rebilled_cost"],
        }
    }
    assert brk["rebilled_cost"] > 0
    assert totals["cost_without_breaks"] == pytest.approx(totals["cost"] - brk["rebilled_cost"])
    assert report["unexplained"] == 0

    text = reasonix(workspace, "cache")
    assert text.returncode == 0, text.stderr
    assert "request 3: model at byte 0" in text.stdout
    assert "model: 1 break" in text.stdout and "without breaks:" in text.stdout


async def test_check_fails_on_an_unexplained_break(workspace, cfg, monkeypatch):
    from tests.conftest import TEST_KEY, TEST_KEY_ENV

    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    cfg.enqueue(Reply(content="a"), Reply(content="b"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
        # A bug rewrites an earlier message without naming it.
        rt.agent.messages[1] = Message(role="user", content="\x1b[31mrewritten\x1b[0m")
        await run_turn(rt, "second")
        session_id = rt.agent.session_id
    proc = reasonix(workspace, "cache", "-r", session_id, "--check")
    assert proc.returncode == 1
    assert "unexplained" in proc.stdout and "1 unexplained cache break" in proc.stderr
    assert "\x1b" not in proc.stdout  # the bytes around the break are escaped
    # The request as the cache reads it is JSON: the ESC shows as its JSON escape.
    assert "[\\u001b[31mrewritten" in proc.stdout
    assert reasonix(workspace, "cache", "-r", session_id).returncode == 0  # no --check


async def test_hostile_records_are_skipped_not_trusted(workspace, cfg, monkeypatch):
    from tests.conftest import TEST_KEY, TEST_KEY_ENV

    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    cfg.enqueue(Reply(content="a"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "first")
        path = rt.agent.session.path
    with requests_path(path).open("a") as fh:
        fh.write('{"request": 2, "cost": -5}\n')
        fh.write('{"request": 3, "break": {"reason": "x", "rebilled_tokens": "lots"}}\n')
        fh.write('{"request": 4, "source": "\\u001b]0;pwned\\u0007", "cost": 1e400}\n')
        fh.write('{"request": 5, "source": "\\u001b]0;pwned\\u0007"}\n')
        fh.write("[]\n{torn")
    proc = reasonix(workspace, "cache")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "3 unreadable record(s) skipped" in proc.stdout
    data = json.loads(reasonix(workspace, "cache", "--json").stdout)
    assert [r["request"] for r in data["requests"]] == [1, 5]


def test_no_session_is_a_clear_error(workspace, cfg):
    proc = reasonix(workspace, "cache")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: no previous session")
    assert "Traceback" not in proc.stderr
    both = reasonix(workspace, "cache", "-c", "-r", "x")
    assert both.returncode == 2 and both.stderr.startswith("reasonix: error:")
    path = reasonix(workspace, "cache", "-r", "../../etc/passwd")
    assert path.returncode == 2 and "is not a session id" in path.stderr
