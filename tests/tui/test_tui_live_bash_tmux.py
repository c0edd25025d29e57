"""A running command's last lines under its card, in a real terminal (issue 30, item 2):
tmux runs ``python -m reasonix_tui`` against the loopback fixture; the model runs a
command that prints a line every half second, and the card shows the newest lines while
it runs (not a bare byte counter), then the result replaces them."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec

pytestmark = tmux_test_marks

COMMAND = "for i in 1 2 3 4 5 6 7 8; do echo tick$i; sleep 0.5; done"


def ticking_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return Reply(content="The ticks are done.")
    return Reply(
        content="Let me run the ticker.",
        tool_calls=[ToolCallSpec("bash", json.dumps({"command": COMMAND}))],
    )


def test_a_running_command_shows_its_latest_lines_under_its_card(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=ticking_responder) as provider,
        reasonix_in_tmux(provider, name="reasonix-livebash", args="--permission-mode yolo") as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ready")
        pane.send_keys("Run the ticker", "Enter")
        # While the command runs (no result yet): its newest lines under its card. A slow
        # machine may draw any of them first; polling returns once a later one shows.
        deadline = time.monotonic() + 60
        latest: list[int] = []
        screen = ""
        while time.monotonic() < deadline:
            screen = pane.screen()
            if "✓ ok" in screen or "The ticks are done." in screen:
                break
            shown = [n for n in range(1, 9) if f"tick{n}" in screen]
            if shown and shown[-1] >= 3:
                latest = shown
                break
            time.sleep(0.1)
        assert latest, f"no later line of the running command was drawn:\n{screen}"
        # The newest lines, consecutive, at most six of them: a tail, not a byte counter.
        assert latest == list(range(latest[0], latest[-1] + 1)), screen
        assert len(latest) <= 6, screen
        card = next(line for line in screen.splitlines() if "bash " in line)
        assert not any(char.isdigit() for char in card.split("done", 1)[-1]), card
        screen = pane.wait_for("The ticks are done.")
        assert "running…" not in screen
        pane.send_keys("C-d")


ESCAPES = r"printf 'a \033]2;PWNED\007 b \033[2J c\n'; sleep 0.5; echo last"


def escaping_responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return Reply(content="The output is shown.")
    return Reply(
        content="Let me print it.",
        tool_calls=[ToolCallSpec("bash", json.dumps({"command": ESCAPES}))],
    )


def test_escape_sequences_in_a_commands_output_are_shown_not_obeyed(tmp_path: Path) -> None:
    """A command's output (live and in its result) is drawn with its escape sequences
    made visible: the terminal's title is not set and the screen is not cleared."""
    with (
        fixture_provider(tmp_path, responder=escaping_responder) as provider,
        reasonix_in_tmux(provider, name="reasonix-escapes", args="--permission-mode yolo") as pane,
    ):
        pane.wait_for("ready")
        pane.send_keys("Print it", "Enter")
        screen = pane.wait_for("The output is shown.")
        assert "a \\x1b]2;PWNED\\x07 b \\x1b[2J c" in screen  # in the card, as text
        assert "Let me print it." in screen and "Print it" in screen  # nothing cleared
        title = tmux(
            "display-message", "-p", "-t", pane.session, "#{pane_title}", socket=pane.socket
        )
        assert "PWNED" not in title
        pane.send_keys("C-d")
