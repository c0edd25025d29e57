"""Goal mode in a real terminal (issue 30, item 3): tmux runs ``python -m reasonix_tui``
against the loopback fixture. The objective is drawn as the user's message; the host's
goal prompt (``<active-goal …>``, "Work toward this goal…", "Continue working toward the
active goal") never is, live or resumed with ``-c``; and ``update_goal``, ``/goal status``
and the status bar agree on rounds and tokens, mid-round and at the end. The fixture holds
chosen requests until the test has read the screen, so each comparison is of one moment."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from tmux_screens import wait_until
from tmux_session import TmuxPane, fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec
from reasonix_tui.format import tokens as shown_tokens

pytestmark = tmux_test_marks

OBJECTIVE = "write the changelog"
HOST_TEXT = ("<active-goal", "Work toward this goal", "Continue working toward")
STATUS_BAR = re.compile(r"goal\b.*? · round (\d+) · ([\d.]+[kM]?) tok")
GOAL_STATUS = re.compile(r"(\d+) rounds? · ([\d.]+[kM]?) tokens")
UPDATE_GOAL = re.compile(r"\(revision \d+, complete, (\d+) rounds?, (\d+) tokens\)")


class HeldGoal:
    """Round 1 answers at once; round 2's request and the one after its update_goal wait
    for the test (``release``), so the screen holds still while it is read."""

    def __init__(self) -> None:
        self.round_two = threading.Event()
        self.after_update = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = (request.json or {}).get("messages") or []
        if messages[-1].get("role") == "tool":
            self.after_update.wait(60)
            return Reply(content="The changelog is written.")
        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        rounds = sum(1 for text in users if "<active-goal" in text)
        if rounds < 2:
            return Reply(content="Working on round one.")
        found = re.search(r'id="([^"]+)"[^>]*revision="(\d+)"', users[-1])
        assert found, users[-1]
        self.round_two.wait(60)
        args = {"id": found.group(1), "revision": int(found.group(2)), "action": "complete"}
        return Reply(
            content="Finishing.", tool_calls=[ToolCallSpec("update_goal", json.dumps(args))]
        )


def bar_figures(screen: str) -> tuple[str, str]:
    found = STATUS_BAR.search(screen)
    assert found, screen
    return found.group(1), found.group(2)


def goal_status(pane: TmuxPane, times: int) -> tuple[str, str, str]:
    """``/goal status`` typed (its ``times``-th answer): its rounds and tokens, read on the
    same screen as the status bar's, and that screen."""
    pane.send_keys("/goal status", "Enter")
    screen = wait_until(
        pane,
        lambda s: len(GOAL_STATUS.findall(s)) >= times,
        f"/goal status never answered (answer {times})",
    )
    rounds, count = GOAL_STATUS.findall(screen)[times - 1]
    return rounds, count, screen


def never_host_text(screen: str) -> None:
    assert not any(text in screen for text in HOST_TEXT), screen


def test_goal_objective_figures_agree_and_no_host_prompt_live_or_resumed(
    tmp_path: Path,
) -> None:
    held = HeldGoal()
    with fixture_provider(tmp_path, responder=held) as provider:
        try:
            with reasonix_in_tmux(
                provider, name="reasonix-goal", args="--permission-mode auto", height=40
            ) as pane:
                pane.wait_for("auto  ready")
                pane.send_keys(f"/goal {OBJECTIVE}", "Enter")
                screen = pane.wait_for("Goal round 1 done")
                never_host_text(screen)
                # The objective is the user's message: the first block, above the goal's start.
                user_line = next(i for i, x in enumerate(screen.splitlines()) if "█" in x)
                assert screen.splitlines()[user_line].split("█", 1)[1].strip() == OBJECTIVE
                wait_until(
                    pane, lambda _: len(provider.server.requests) >= 2, "round 2 never asked"
                )

                # Mid-round 2 (its request held): /goal status counts the round in progress
                # as the status bar does.
                rounds, count, screen = goal_status(pane, 1)
                assert rounds == "2" and (rounds, count) == bar_figures(screen), screen
                never_host_text(screen)

                # update_goal's own figures, read while the next request is held: the status
                # bar and /goal status show the same.
                held.round_two.set()
                screen = wait_until(pane, UPDATE_GOAL.search, "update_goal's figures never shown")
                found = UPDATE_GOAL.search(screen)
                assert found
                update_rounds, update_tokens = found.group(1), shown_tokens(int(found.group(2)))
                assert bar_figures(screen) == (update_rounds, update_tokens), screen
                rounds, count, screen = goal_status(pane, 2)
                assert (rounds, count) == (update_rounds, update_tokens), screen

                held.after_update.set()
                pane.wait_for("The goal is complete")
                rounds, count, screen = goal_status(pane, 3)
                assert (rounds, count) == bar_figures(screen), screen
                never_host_text(screen)
                pane.send_keys("C-d")
                pane.wait_for("Continue it with: reasonix -c")
        finally:
            held.round_two.set()
            held.after_update.set()

        # Resumed: the objective again as the user's message, the host prompt nowhere.
        with reasonix_in_tmux(provider, name="reasonix-goal-resumed", args="-c", height=40) as pane:
            screen = pane.wait_for("The changelog is written.")
            assert f"█ {OBJECTIVE}" in screen
            never_host_text(screen)
            pane.send_keys("Home")
            screen = pane.wait_for(f"█ {OBJECTIVE}")
            never_host_text(screen)
            pane.send_keys("C-d")
