"""Output ceiling learned from a 400 (issue 19 item 5): the provider refuses
``max_tokens`` as too large; the run learns the ceiling from its message, retries
once with it and keeps it for the model; an unparseable refusal fails clearly."""

from __future__ import annotations

import json

import pytest

from reasonix_core.errors import ProviderError
from reasonix_core.provider.output_ceiling import is_output_ceiling_refusal, parse_output_ceiling
from reasonix_testkit import HttpError, Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


def _configure(home, server, max_output: int):
    write_config(home, server.base_url)
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace("[agent]", f"max_output_tokens = {max_output}\n\n[agent]", 1)
    )
    return server


@pytest.fixture
def cfg(home, server):
    # More than the fixture's DeepSeek dialect accepts (393216): it answers 400.
    return _configure(home, server, 500000)


@pytest.fixture
def scripted(home, server):
    # Within the dialect's range: the scripted refusal is what answers.
    return _configure(home, server, 300000)


def test_ceiling_is_learned_retried_once_and_kept(workspace, cfg):
    (workspace / "a.txt").write_text("a\n")
    cfg.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(content="done"),
    )
    proc = reasonix(workspace, "run", "read a.txt")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    assert "accepts at most 393216 output tokens" in proc.stderr
    sent = [json.loads(r.body).get("max_tokens") for r in cfg.requests]
    # Refused, retried once with the ceiling, then the next step keeps it.
    assert sent == [500000, 393216, 393216]


def test_scripted_openai_shaped_refusal(workspace, scripted):
    cfg = scripted
    cfg.enqueue(
        HttpError(
            400,
            "max_tokens is too large: 300000. This model supports at most 16384 "
            "completion tokens, whereas you provided 300000.",
        ),
        Reply(content="ok"),
    )
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(cfg.requests[-1].body)["max_tokens"] == 16384


def test_unparseable_refusal_fails_clearly_after_one_request(workspace, scripted):
    cfg = scripted
    cfg.enqueue(HttpError(400, "max_tokens is too large for this deployment"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 1
    assert "without naming its ceiling" in proc.stderr
    assert "reasonix: error:" in proc.stderr
    assert len(cfg.requests) == 1


@pytest.mark.parametrize(
    ("message", "ceiling"),
    [
        ("Invalid max_tokens value, the valid range of max_tokens is [1, 8192]", 8192),
        (
            "max_tokens is too large: 100000. This model supports at most 16384 completion "
            "tokens, whereas you provided 100000.",
            16384,
        ),
        (
            "max_tokens: 100000 > 64000, which is the maximum allowed number of output "
            "tokens for claude-sonnet-4",
            64000,
        ),
    ],
)
def test_each_providers_message_shape(message, ceiling):
    assert is_output_ceiling_refusal(ProviderError(message, status=400))
    assert parse_output_ceiling(message) == ceiling


def test_other_refusals_are_not_ceilings():
    assert not is_output_ceiling_refusal(ProviderError("model not found", status=400))
    assert not is_output_ceiling_refusal(
        ProviderError("max_tokens is too large", status=500, retryable=True)
    )
