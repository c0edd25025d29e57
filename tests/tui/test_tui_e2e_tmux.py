"""The real binary in a real terminal: tmux runs ``python -m reasonix_tui`` against the
loopback fixture server; the test types with send-keys and reads with capture-pane."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_real_binary_answers_and_quits(tmp_path: Path) -> None:
    exit_file = tmp_path / "exit.txt"
    with fixture_provider(tmp_path) as provider:
        home = provider.home
        (provider.workspace / "main.py").write_text("print('x')\n")
        with reasonix_in_tmux(provider, name="reasonix-e2e", exit_file=exit_file) as pane:
            pane.wait_for("Ask Reasonix")
            pane.send_keys("hello from tmux", "Enter")
            screen = pane.wait_for("You said: hello from tmux")
            assert "● ask" in screen
            pane.send_keys("please list files", "Enter")
            screen = pane.wait_for("Here is what I found")
            assert "main.py" in screen and "✓ ok" in screen
            # The answer streams before the turn ends; a Ctrl+C before then cancels the turn
            # instead of arming the quit (seen on a loaded machine).
            pane.wait_for("ask  ready")
            pane.send_keys("C-c")
            pane.wait_for("Press Ctrl+C again to quit")
            pane.send_keys("C-c")
            deadline = time.monotonic() + 60
            while not exit_file.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert exit_file.read_text().strip() == "0"
            assert (home / "logs" / "reasonix.log").exists()


def test_real_binary_runs_a_skill_from_the_slash_menu(tmp_path: Path) -> None:
    """Real keys: ``/gr`` shows the project's skill in the menu once the services are
    built, Tab completes it, Enter sends its body with the arguments filled in."""
    with fixture_provider(tmp_path) as provider:
        server = provider.server
        skill = provider.workspace / ".reasonix" / "skills" / "greet" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(
            "---\nname: greet\ndescription: Greet someone warmly\n---\n\nSay hello to $ARGUMENTS.\n"
        )
        with reasonix_in_tmux(provider, name="reasonix-e2e") as pane:
            pane.wait_for("Ask Reasonix", timeout=40)
            pane.wait_for("ask  ready", timeout=40)  # the services are built: skills known
            pane.send_keys("/gr")
            pane.wait_for("/greet")  # the menu's one item
            pane.send_keys("Tab")
            pane.wait_for("/greet ")
            pane.send_keys("Ada Lovelace", "Enter")
            pane.wait_for("You said: Say hello to Ada Lovelace.")
            user = [m for m in server.requests[0].json["messages"] if m["role"] == "user"][0]
            assert user["content"].startswith("Say hello to Ada Lovelace.")
            system = server.requests[0].json["messages"][0]["content"]
            assert "- greet: Greet someone warmly" in system


def test_resume_scroll_follow_and_alt_enter_in_a_real_terminal(tmp_path: Path) -> None:
    """Issue 14, items 1-4: ``-c`` redraws the saved session at its bottom; PageUp/Home
    scroll it with the composer focused; Alt+Enter (ESC CR) adds a line; sending jumps
    back to the bottom."""
    import json

    from reasonix_core.agent.session import SessionHeader, SessionStore
    from reasonix_core.messages import Message, ToolCall

    with fixture_provider(tmp_path) as provider:
        header = SessionHeader(
            id="20250101-000000-e2e000",
            workspace=str(provider.workspace),
            created="2025-01-01T00:00:00",
            model="deepseek-flash",
            effort="auto",
            system_prompt="",
            tools_fingerprint="",
        )
        store = SessionStore.create(provider.home / "sessions", provider.workspace, header)
        for n in range(30):
            call = ToolCall(
                id=f"c{n}", name="read_file", arguments=json.dumps({"path": f"f{n}.py"})
            )
            store.append(Message(role="user", content=f"old question {n}"))
            store.append(Message(role="assistant", reasoning_content="hmm", tool_calls=(call,)))
            store.append(Message(role="tool", tool_call_id=call.id, content=f"contents {n}"))
            store.append(Message(role="assistant", content=f"Old answer number {n}."))
        store.close()

        with reasonix_in_tmux(provider, name="reasonix-e2e", args="-c") as pane:
            screen = pane.wait_for("Old answer number 29.")  # drawn, at the bottom
            assert "thought" in screen and "read_file" in screen
            pane.send_keys("PageUp")
            screen = pane.wait_for_gone("Old answer number 29.")
            # Empty composer: Home goes to the top, where the older blocks are drawn above
            # the view; scrolling on up shows them.
            pane.send_keys("Home")
            deadline = time.monotonic() + 60

            def older_shown(screen: str) -> bool:  # the first 16 blocks drawn: turns 26-29
                return any(int(n) < 26 for n in re.findall(r"old question (\d+)", screen))

            while not older_shown(screen := pane.screen()):
                assert time.monotonic() < deadline, f"the older blocks never showed:\n{screen}"
                pane.send_keys("PageUp")
                time.sleep(0.3)
            pane.send_keys("End")
            pane.wait_for("Old answer number 29.")
            pane.send_keys("PageUp")
            pane.wait_for_gone("Old answer number 29.")
            # Alt+Enter as a terminal sends it (ESC CR) adds a line instead of sending.
            pane.send_keys("first line")
            pane.send_keys("M-Enter")
            pane.send_keys("second line")
            screen = pane.wait_for("second line")
            assert "first line" in screen
            assert "You said" not in screen
            pane.send_keys("Enter")  # sending jumps to the bottom
            screen = pane.wait_for("You said: first line")
            assert "Old answer number 29." in screen
            pane.send_keys("/status", "Enter")
            pane.wait_for("session 20250101-000000-e2e000")
            pane.send_keys("C-d")
