"""Issue 29 item 12: a ``Retry-After`` above the cap is never retried earlier
than the server asked; the run gives up at once and names the wait."""

from __future__ import annotations

import json

import pytest

from reasonix_testkit import HttpError, Reply
from tests.conftest import reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def test_retry_after_over_the_cap_gives_up_at_once_naming_the_wait(workspace, cfg):
    cfg.enqueue(HttpError(429, "Rate Limit Reached", type="rate_limit_error", retry_after=120))
    cfg.enqueue(Reply(content="too early"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "json")
    assert proc.returncode == 1, proc.stderr
    assert len(cfg.requests) == 1  # never sent again before the 120 s were up
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["is_error"] is True
    assert "120 s" in result["result"] and "Retry-After" in result["result"]
    assert "Traceback" not in proc.stderr


def test_retry_after_over_the_cap_in_text_output_is_one_line_on_stderr(workspace, cfg):
    cfg.enqueue(HttpError(503, "Server Overloaded", type="server_error", retry_after=3600))
    cfg.enqueue(Reply(content="too early"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 1
    assert len(cfg.requests) == 1
    assert "3600 s" in proc.stderr and "Server Overloaded" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_retry_after_within_the_cap_is_still_honoured(workspace, cfg):
    cfg.enqueue(HttpError(429, "Rate Limit Reached", type="rate_limit_error", retry_after=0))
    cfg.enqueue(Reply(content="after the wait"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "after the wait"
    assert len(cfg.requests) == 2
