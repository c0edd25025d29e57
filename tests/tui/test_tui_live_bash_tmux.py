"""A running command's last lines under its card, in a real terminal (issue 30, item 2):
tmux runs ``python -m reasonix_tui`` against the loopback fixture; the model runs a
command that prints a line every half second, and the card shows the newest lines while
it runs (not a bare byte counter), then the result replaces them."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

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
