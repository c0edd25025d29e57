"""The OpenCode Go preset (issue 32 item 7): its entry as written by setup, and a run
through it against the loopback fixture (its OpenAI-compatible route)."""

from __future__ import annotations

import dataclasses
import json

from reasonix_core.config.schema import builtin_provider
from reasonix_core.provider.presets import install_preset, preset, preset_fields
from reasonix_testkit import ChatDialect, FixtureServer, Reply
from tests.conftest import TEST_KEY, reasonix


def test_opencode_go_preset_fields():
    entry = preset("opencode-go")
    fields = preset_fields(entry)
    assert fields["kind"] == "openai"
    assert fields["base_url"] == "https://opencode.ai/zen/go/v1"
    assert fields["api_key_env"] == "OPENCODE_API_KEY"
    assert "reasoning_protocol" not in fields  # detected per model (DeepSeek ones replay)
    assert entry.needs_key and fields["models"]


def test_a_run_through_the_opencode_go_preset(workspace, home):
    with FixtureServer(ChatDialect("openai"), api_key=TEST_KEY) as server:
        server.models = None
        local = dataclasses.replace(preset("opencode-go"), base_url=server.base_url + "/v1")
        install_preset(home, local, make_default=True)
        server.enqueue(Reply(content="hello from go"))
        proc = reasonix(workspace, "run", "hi", key=False, env={"OPENCODE_API_KEY": TEST_KEY})
        assert proc.returncode == 0, proc.stderr
        assert "hello from go" in proc.stdout
        request = server.requests[0]
        assert request.path == "/v1/chat/completions"
        assert json.loads(request.body)["model"] == "glm-5.1"
        assert request.headers["authorization"] == f"Bearer {TEST_KEY}"


def test_builtin_deepseek_stays_on_the_openai_kind():
    """Documented in docs/CONFIG.md#the-built-in-deepseek-provider (why, and the
    Anthropic-kind preset for those who want it)."""
    builtin = builtin_provider()
    assert builtin.kind == "openai" and builtin.effective_reasoning_protocol() == "deepseek"
    assert preset("deepseek-anthropic").kind == "anthropic"
