"""Issue 30 item 7 in a real terminal: ``reasonix -c`` on a saved session of 300
messages. Before any request the gauges (ctx, cache, cost) show the saved figures;
one Ctrl+Home reaches the first message; ``/resume`` counts the prompts; a failed
tool card keeps its failure message; a resumed subagent card shows the child's usage;
no "new output below" line when nothing new arrived."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from reasonix_core.agent.child_usage import SUBAGENT_USAGE
from reasonix_core.agent.session import SessionHeader, SessionStore, append_request_record
from reasonix_core.messages import Message, ToolCall
from tests.tui.tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks

TURNS = 75  # 4 messages each: 300 messages
FAILURE = "bash: exit 2: cat: missing.txt: No such file or directory"
RECORDS = [
    {"request": 1, "source": "executor", "prompt_tokens": 10000, "cache_hit_tokens": 0,
     "completion_tokens": 500, "cost": 0.01, "currency": "USD"},
    {"request": 2, "source": "executor", "prompt_tokens": 20000, "cache_hit_tokens": 15000,
     "completion_tokens": 700, "cost": 0.02, "currency": "USD"},
    {"request": 3, "source": "executor", "agent_path": ["explore"], "prompt_tokens": 90000,
     "cache_hit_tokens": 0, "completion_tokens": 10, "cost": 0.5, "currency": "USD"},
]  # fmt: skip


def saved_session(home: Path, workspace: Path) -> None:
    header = SessionHeader(
        id="20250101-000000-tmux07",
        workspace=str(workspace),
        created="2025-01-01T00:00:00",
        model="deepseek-flash",
        effort="auto",
        system_prompt="",
        tools_fingerprint="",
    )
    store = SessionStore.create(home / "sessions", workspace, header)
    for n in range(TURNS):
        store.append(Message(role="user", content=f"old question {n}"))
        if n == TURNS - 2:  # a subagent, with what its requests spent
            call = ToolCall(id=f"c{n}", name="read_only_task", arguments='{"prompt": "look"}')
            result = "child answer\n\n[subagent session: s1 - give it as continue_from]"
            usage = {"": {"prompt_tokens": 12000, "completion_tokens": 400,
                          "cache_hit_tokens": 9000, "cost": 0.0031, "currency": "USD"}}  # fmt: skip
            meta = {"outcome": "ok", SUBAGENT_USAGE: usage}
        elif n == TURNS - 1:  # the last turn's tool failed
            call = ToolCall(id=f"c{n}", name="bash", arguments='{"command": "cat missing.txt"}')
            result, meta = FAILURE, {"outcome": "error", "is_error": True}
        else:
            call = ToolCall(id=f"c{n}", name="read_file", arguments=json.dumps({"path": f"f{n}"}))
            result, meta = f"contents {n}", {"outcome": "ok"}
        store.append(Message(role="assistant", reasoning_content="hmm", tool_calls=(call,)))
        store.append(Message(role="tool", tool_call_id=call.id, content=result, meta=meta))
        store.append(Message(role="assistant", content=f"Old answer number {n}."))
    path = store.path
    store.close()
    for record in RECORDS:
        append_request_record(path, record)


def test_resume_of_300_messages_in_a_real_terminal(tmp_path: Path) -> None:
    with fixture_provider(tmp_path) as provider:
        saved_session(provider.home, provider.workspace)
        with reasonix_in_tmux(provider, name="reasonix-resume07", args="-c", width=140) as pane:
            screen = pane.wait_for(f"Old answer number {TURNS - 1}.")
            # The gauges of the saved session, before any request: the records' $0.5300
            # plus the subagent's $0.0031 (its requests are in its own session file).
            screen = pane.wait_for("$0.5331")
            assert "ctx 20.7k" in screen and "cache 75%" in screen, screen
            assert provider.server.requests == []
            # The failed card keeps its failure message; the subagent card its usage.
            assert "✗ error" in screen and FAILURE in screen, screen
            assert "✓ read_only_task  done  12.4k tok · cache 75% · $0.0031" in screen, screen
            # One Ctrl+Home reaches the first message (it drew a batch per press).
            pane.send_keys("C-Home")
            screen = pane.wait_for("old question 0")
            assert f"Old answer number {TURNS - 1}." not in screen
            assert re.search(r"old question 0\b", screen)
            time.sleep(1)  # still there once everything has been drawn
            screen = pane.screen()
            assert "old question 0" in screen and "new output below" not in screen, screen
            # /resume counts the prompts (75), not the messages / 2 (150).
            pane.send_keys("/resume", "Enter")
            screen = pane.wait_for(f"{TURNS} turns")
            assert re.search(rf"old question 0 .* · {TURNS} turns", screen), screen
            pane.send_keys("Escape")
            screen = pane.wait_for_gone(f"{TURNS} turns")
            time.sleep(1)
            # Nothing new arrived while the dialog was open: no "new output below".
            screen = pane.screen()
            assert "old question 0" in screen and "new output below" not in screen, screen
            pane.send_keys("C-End")
            pane.wait_for(f"Old answer number {TURNS - 1}.")
            assert provider.server.requests == []
            pane.send_keys("C-q")

