"""The first run in a real terminal at 80×24 (issue 30, item 9): tmux runs
``python -m reasonix_tui`` with no config and no key. Esc on the provider list quits
saying how to configure later; no screen of the first run shows a literal backtick; the
next run takes a custom base URL (the loopback fixture's) and its key, and the prompt
after it is answered there."""

from __future__ import annotations

import time
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks

WIDTH, HEIGHT = 80, 24


def no_backticks(screen: str) -> str:
    assert "`" not in screen, screen
    return screen


def exit_code(path: Path) -> str:
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return path.read_text().strip()


def test_first_run_esc_says_how_to_configure_then_a_custom_base_url_works(
    tmp_path: Path,
) -> None:
    with fixture_provider(tmp_path) as provider:
        server = provider.server
        (provider.home / ".env").unlink()
        (provider.home / "config.toml").unlink()  # a first run: nothing configured

        exit_file = tmp_path / "exit.txt"
        with reasonix_in_tmux(
            provider, name="reasonix-firstrun", width=WIDTH, height=HEIGHT, exit_file=exit_file
        ) as pane:
            screen = no_backticks(pane.wait_for("Choose the provider"))
            assert "Welcome to Reasonix" in screen and "Esc quit" in screen
            # Legible at 80×24: each choice on one line with its key variable, and the
            # whole dialog on screen (its bottom border too).
            rows = screen.splitlines()
            assert any(
                "DeepSeek (OpenAI-compatible endpoint)" in r and "$DEEPSEEK_API_KEY" in r
                for r in rows
            ), screen
            assert any("Custom endpoint" in r and "your base URL" in r for r in rows), screen
            assert "╭" in screen and "╰" in screen, screen
            pane.send_keys("Enter")  # DeepSeek: its key step
            no_backticks(pane.wait_for("(DEEPSEEK_API_KEY)"))
            pane.send_keys("Escape")  # back to the list
            no_backticks(pane.wait_for("Choose the provider"))
            pane.send_keys("Escape")  # out: said how to configure later
            screen = no_backticks(pane.wait_for("No provider configured yet"))
            assert "reasonix setup" in screen.replace("\n", " ")
            assert exit_code(exit_file) == "1"
        assert not (provider.home / "config.toml").exists()  # nothing written

        with reasonix_in_tmux(provider, name="reasonix-custom", width=WIDTH, height=HEIGHT) as pane:
            pane.wait_for("Choose the provider")
            pane.send_keys("End")  # the custom endpoint is the list's last row
            pane.wait_for("Endpoint: the base URL you give next")
            pane.send_keys("Enter")
            no_backticks(pane.wait_for("The base URL of an OpenAI-compatible endpoint"))
            pane.send_keys(server.base_url, "Enter")
            no_backticks(pane.wait_for(f"The API key for {server.base_url}"))
            pane.send_keys("sk-e2e", "Enter")
            pane.wait_for("Ask Reasonix")
            pane.wait_for("ask  ready")
            pane.send_and_await_echo("hello custom endpoint")
        config = (provider.home / "config.toml").read_text()
        assert f'base_url = "{server.base_url}"' in config
        assert "sk-e2e" in (provider.home / ".env").read_text()
        assert "sk-e2e" not in config
