"""Typed text is never cut while a goal round streams, in a real terminal (issue 30,
item 4): ``/goal status`` typed key by key during rounds arrives whole, every time."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit import Reply, ToolCallSpec

pytestmark = tmux_test_marks

ROUNDS = 4
LONG = "streaming words " * 150


def _script(request) -> Reply:  # type: ignore[no-untyped-def]
    import re

    if request.json["messages"][-1]["role"] == "tool":
        return Reply(content="Done.")
    users = [m for m in request.json["messages"] if m["role"] == "user"]
    last = users[-1]["content"] or ""
    found = re.search(r'id="([^"]+)"[^>]*revision="(\d+)"', last)
    rounds = sum(1 for m in users if "<active-goal" in (m["content"] or ""))
    if rounds >= ROUNDS and found:
        args = {"id": found.group(1), "revision": int(found.group(2)), "action": "complete"}
        return Reply(tool_calls=[ToolCallSpec("update_goal", json.dumps(args))])
    return Reply(content=LONG, chunk_size=3, delay=0.004)


def test_goal_status_typed_during_rounds_is_never_cut(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=_script) as provider,
        reasonix_in_tmux(provider, name="reasonix-typing", width=100, height=30) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ask  ready")
        pane.send_keys("BTab")
        pane.wait_for("auto  ready")
        pane.send_keys("/goal keep streaming", "Enter")
        first = pane.wait_for("streaming words")
        assert "keep streaming" in first  # the objective, drawn as the user's message
        typed = 0
        deadline = time.monotonic() + 120
        screens: list[str] = []
        while time.monotonic() < deadline:
            screens.append(pane.screen())
            if "The goal is complete" in screens[-1]:
                break
            for char in "/goal status":
                pane.send_keys("-l", char)
                time.sleep(0.03)
            pane.send_keys("Enter")
            typed += 1
            time.sleep(0.5)
        screens.append(pane.wait_for("The goal is complete", 120))
        # Item 3: the host's goal block is never drawn as the user's text.
        assert not any("<active-goal" in x or "Work toward this goal" in x for x in screens)
        sent = [
            m["content"]
            for r in provider.server.requests
            for m in r.json["messages"]
            if m["role"] == "user"
        ]
        assert typed >= 3
        assert not any(text and "<active-goal" not in text and "keep streaming" not in text
                       for text in sent), sent
        history = (provider.home / "history").rglob("*")
        for path in history:
            if path.is_file():
                lines = path.read_text().splitlines()
                assert all("status" not in line or "/goal status" in line for line in lines)
        pane.send_keys("C-d")
