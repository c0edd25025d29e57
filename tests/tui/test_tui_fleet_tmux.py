"""A fleet in the real binary, in a real terminal: the engine's child events become cards
under the fleet's tool card, and a real Esc cancels the parent and the child still
running; the session then goes on. tmux runs ``python -m reasonix_tui`` against the
loopback fixture, scripted by content (the children's requests interleave)."""

from __future__ import annotations

import json
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit import ContentScript, Reply, Stall, ToolCallSpec

pytestmark = tmux_test_marks


def test_fleet_cards_and_escape_in_the_real_binary(tmp_path: Path) -> None:
    items = [
        {"id": "slow", "prompt": "ITEM-SLOW: think for a long time", "read_only": True},
        {"id": "quick", "prompt": "ITEM-QUICK: answer now", "read_only": True},
    ]
    script = ContentScript()
    script.when(
        "PARENT-FLEET",
        Reply(tool_calls=[ToolCallSpec("fleet", json.dumps({"items": items}))]),
        Reply(content="The parent goes on."),
    )
    script.when("ITEM-QUICK", Reply(content="quick answer"))
    script.when("ITEM-SLOW", Stall(60))
    with (
        fixture_provider(tmp_path, responder=script) as provider,
        reasonix_in_tmux(
            provider, name="reasonix-fleet", args="--permission-mode yolo", width=110
        ) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.send_keys("PARENT-FLEET split it", "Enter")
        screen = pane.wait_for("✓ quick")
        assert "fleet  2 items  running" in screen
        assert "◐ slow · read_only_task" in screen  # live, under the fleet's card
        assert "quick answer" not in screen  # a child's answer is not the parent's
        pane.send_keys("Escape")
        screen = pane.wait_for("Turn cancelled")
        assert "⊘ slow" in screen and "✓ quick" in screen
        pane.send_keys("and now?", "Enter")
        pane.wait_for("The parent goes on.")
