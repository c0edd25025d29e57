"""The real binary in a real terminal (issue 19, item 10): with no key, the setup screen
lists the providers and presets; real keys move, choose, go back and type the key; then
``/model`` lists what the fixture's ``/models`` serves beyond the config, and the
discovered model picked answers the next prompt."""

from __future__ import annotations

import socket

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_core.provider.presets import PRESETS

pytestmark = tmux_test_marks

OLLAMA_PORT = 11434  # the Ollama preset's endpoint, http://127.0.0.1:11434/v1


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


# Ollama's row in the list: below the configured fixture, at its place in the one
# presets table (the list follows it; a preset added above moves it down).
_OLLAMA_ROW = 1 + [p.key for p in PRESETS].index("ollama")


def test_first_run_chooses_a_provider_then_model_discovers(tmp_path) -> None:
    with fixture_provider(tmp_path) as provider:
        (provider.home / ".env").unlink()  # no key yet: the setup screen
        server = provider.server
        with reasonix_in_tmux(provider, name="reasonix-setup", width=110, height=34) as pane:
            screen = pane.wait_for("Choose the provider", timeout=40)
            assert "fixture (configured)" in screen and "$FIXTURE_API_KEY" in screen
            assert "OpenRouter" in screen and "Ollama (local, no key)" in screen
            assert "Endpoint: http://127.0.0.1:" in screen  # the fixture's, highlighted
            if not _listening(OLLAMA_PORT):
                # A local server that is not running: said inline, nothing chosen.
                pane.send_keys(*["Down"] * _OLLAMA_ROW, "Enter")
                screen = pane.wait_for("is the server running?")
                assert "Could not use Ollama" in screen
                pane.send_keys(*["Up"] * _OLLAMA_ROW)
                pane.wait_for("Endpoint: http://127.0.0.1:")
            pane.send_keys("Down")
            pane.wait_for("Endpoint: https://api.deepseek.com")
            pane.send_keys("Up", "Enter")
            pane.wait_for("API key for fixture (FIXTURE_API_KEY)")
            pane.send_keys("Escape")  # back to the list, not out
            pane.wait_for("Choose the provider")
            pane.send_keys("Enter")
            pane.wait_for("API key for fixture (FIXTURE_API_KEY)")
            pane.send_keys("sk-e2e", "Enter")
            pane.wait_for("Ask Reasonix", timeout=40)
            pane.send_and_await_echo("hello")
            assert (provider.home / ".env").read_text().strip() == "FIXTURE_API_KEY=sk-e2e"

            pane.send_keys("/model", "Enter")
            screen = pane.wait_for("listed by the provider")
            assert "2 listed by the provider; 1 not in your config, marked discovered" in screen
            assert "fixture/deepseek-v4-pro" in screen and "discovered" in screen
            pane.send_keys("pro", "Enter")
            # The fixture's cache holds the first turn: the switch asks first.
            pane.wait_for("Switch the model to fixture/deepseek-v4-pro?")
            pane.send_keys("y")
            pane.wait_for("Model switched to fixture/deepseek-v4-pro")
            pane.send_and_await_echo("again")
    posts = [r.json for r in server.requests if r.json is not None]
    assert [p["model"] for p in posts] == ["deepseek-flash", "deepseek-v4-pro"]
