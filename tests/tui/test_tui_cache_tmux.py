"""The prompt cache in a real terminal: tmux runs ``python -m reasonix_tui`` against the
loopback fixture; /model asks before breaking a warm cache, and /cache then shows the
break, named and priced."""

from __future__ import annotations

from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_model_switch_asks_then_cache_view_names_the_break(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, models=("deepseek-flash", "deepseek-v4-pro")) as provider,
        reasonix_in_tmux(provider, name="reasonix-cache", width=110, height=36) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.send_and_await_echo("hello")
        pane.send_keys("/model deepseek-v4-pro", "Enter")
        screen = pane.wait_for("Switch the model to deepseek-v4-pro?")
        assert "cached tokens" in screen and "now (" in screen
        pane.send_keys("n")
        pane.wait_for("ask  ready")
        assert "deepseek-flash" in pane.screen()
        pane.send_keys("/model deepseek-v4-pro", "Enter")
        pane.wait_for("Switch the model to deepseek-v4-pro?")
        pane.send_keys("y")
        pane.wait_for("Model switched to deepseek-v4-pro")
        pane.send_and_await_echo("again")
        pane.send_keys("/cache", "Enter")
        screen = pane.wait_for("by reason:")
        assert "request 2: model at byte 0" in screen
        assert "model: 1 break" in screen
        pane.send_keys("Escape")
        pane.send_keys("C-d")
