"""A keyword-scripted fixture model for hands-on TUI audits in a real terminal (issue 30).

Not a benchmark: ``python bench/tui_audit_fixture.py HOME WORKSPACE [PORT]`` writes a
``REASONIX_HOME`` (HOME) whose only provider is the loopback fixture server, fills
WORKSPACE with ``src.py`` and ``README.md``, prints the base URL and serves until
SIGTERM. Run the real app beside it, e.g.::

    tmux new-session -d -s audit-80 -x 80 -y 24 \\
        "cd WORKSPACE && REASONIX_HOME=HOME reasonix"

and type a prompt holding one of these words (the model's answer):

- ``RUNTESTS``: "Let me run the tests." and a 10-line, 8-second ``bash`` loop;
- ``FAILCMD``: ``bash`` that exits 2; ``BIGWRITE``: an 80-line ``write_file``;
- ``READIT`` / ``READMISSING``: ``read_file`` of ``src.py`` / a missing file;
- ``GOODEDIT`` / ``BADEDIT``: ``edit_file`` whose ``old_string`` is / is not there;
- ``ASKME``: an ``ask`` question; ``PLANIT`` (in plan mode): ``exit_plan_mode``;
- ``FLEETIT``: a 3-item read-only fleet (c after a); ``TASKIT``: a ``read_only_task``;
- ``NOTHINK`` / ``TRIVIAL``: no / blank reasoning; ``MULTI``: two tool steps;
- ``LONGANS``: a long streamed Markdown answer;
- ``/goal ...``: slow goal rounds, ``update_goal`` complete at the third round.

Anything else is echoed ("You said: ...").
"""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
from pathlib import Path

from _common import ROOT  # noqa: F401  (puts the repository root on sys.path)

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec

BIG = "".join(f"line {i}: some content for the big file number {i}\n" for i in range(1, 81))
LONG_MD = "\n\n".join(
    f"## Section {i}\n\nThis is paragraph {i} of a long streamed answer. " + "words " * 40
    for i in range(1, 16)
)
PLAN = "# Plan\n\n1. Read `src.py`\n2. Rename **f3**\n3. Run the tests\n\n" + "\n".join(
    f"- step detail {i}" for i in range(30)
)
FLEET_ITEMS = [
    {"id": "a", "prompt": "ITEM-A: read the README", "read_only": True},
    {"id": "b", "prompt": "ITEM-B: check nothing", "read_only": True},
    {"id": "c", "prompt": "ITEM-C: after a", "read_only": True, "depends_on": ["a"]},
]
QUESTION = {
    "question": "Which database should we use?",
    "options": ["SQLite (recommended)", "Postgres", "MySQL"],
}
LOOP = 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "test_case_$i ... passed"; sleep 0.8; done'


def call(name: str, **args: object) -> ToolCallSpec:
    return ToolCallSpec(name, json.dumps(args))


def _child(first: str, last: dict) -> Reply | None:
    """A subagent's answer, told apart by its task (its first user message)."""
    if "ITEM-A" in first:
        if last.get("role") == "tool":
            return Reply(content="Item A finished: the README has 3 sections.")
        return Reply(reasoning="Read the readme.", tool_calls=[call("read_file", path="README.md")])
    if "ITEM-B" in first:
        return Reply(content="Item B answer: nothing to change.", delay=0.05)
    if "ITEM-C" in first:
        return Reply(content="Item C answer.", delay=0.5, chunk_size=2)
    return None


def _goal_round(users: list[str], last_user: str) -> Reply:
    found = re.search(r'id="([^"]+)"[^>]*revision="(\d+)"', last_user)
    rounds = sum(1 for text in users if "<active-goal" in text)
    if rounds >= 3 and found:
        args = {"id": found.group(1), "revision": int(found.group(2))}
        return Reply(
            reasoning="Done now.",
            tool_calls=[call("update_goal", **args, action="complete", note="all done")],
        )
    text = f"Goal round work {rounds}: " + "progress " * 30
    return Reply(reasoning="Working on the goal.", content=text, chunk_size=6, delay=0.1)


def _after_tool(messages: list[dict], prompt: str) -> Reply:
    calls = next(
        (m.get("tool_calls") or [] for m in reversed(messages) if m.get("role") == "assistant"),
        [],
    )
    names = [c["function"]["name"] for c in calls]
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    tools_this_turn = sum(1 for m in messages[last_user:] if m.get("role") == "tool")
    if "MULTI" in prompt and tools_this_turn < 2:
        return Reply(reasoning="Now the second look.", tool_calls=[call("ls")])
    if "update_goal" in names:
        return Reply(content="The goal is complete.")
    return Reply(content=f"Done with {', '.join(names)}.")


SCRIPT: dict[str, Reply] = {
    "RUNTESTS": Reply(
        reasoning="I will run the tests.",
        content="Let me run the tests.",
        tool_calls=[call("bash", command=LOOP)],
    ),
    "FAILCMD": Reply(
        reasoning="Run it.",
        content="Running the failing command.",
        tool_calls=[call("bash", command="ls /nonexistent-dir-xyz")],
    ),
    "BIGWRITE": Reply(
        reasoning="Writing.",
        content="I'll write the big file now.",
        tool_calls=[call("write_file", path="big.txt", content=BIG)],
    ),
    "READIT": Reply(reasoning="Read it.", tool_calls=[call("read_file", path="src.py")]),
    "READMISSING": Reply(reasoning="Read it.", tool_calls=[call("read_file", path="nope.py")]),
    "BADEDIT": Reply(
        reasoning="Edit.",
        content="Editing src.py.",
        tool_calls=[call("edit_file", path="src.py", old_string="NOT THERE", new_string="x")],
    ),
    "GOODEDIT": Reply(
        reasoning="Edit.",
        content="Editing src.py.",
        tool_calls=[
            call("edit_file", path="src.py", old_string="def f3():", new_string="def f3_r():")
        ],
    ),
    "ASKME": Reply(
        reasoning="Ask.",
        content="I need a decision first.",
        tool_calls=[call("ask", questions=[QUESTION])],
    ),
    "PLANIT": Reply(
        reasoning="Plan.",
        content="Here is my plan.",
        tool_calls=[call("exit_plan_mode", plan=PLAN)],
    ),
    "FLEETIT": Reply(
        reasoning="Fleet.",
        content="Splitting the work.",
        tool_calls=[call("fleet", items=FLEET_ITEMS)],
    ),
    "TASKIT": Reply(
        reasoning="Delegate.",
        tool_calls=[call("read_only_task", prompt="ITEM-A: read the README and summarise")],
    ),
    "NOTHINK": Reply(content="An answer with no reasoning."),
    "TRIVIAL": Reply(reasoning=" \n", content="An answer with blank reasoning."),
    "MULTI": Reply(reasoning="First look.", tool_calls=[call("ls")]),
    "LONGANS": Reply(reasoning="Long one.", content=LONG_MD, chunk_size=6, delay=0.01),
}


def responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    last = messages[-1] if messages else {}
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    first, last_user = (users[0], users[-1]) if users else ("", "")
    prompt = last_user.split("<workspace-context>")[0].strip()
    child = _child(first, last)
    if child is not None:
        return child
    if "<active-goal" in last_user and last.get("role") == "user":
        return _goal_round(users, last_user)
    if last.get("role") == "tool":
        return _after_tool(messages, prompt)
    for word, reply in SCRIPT.items():
        if word in prompt:
            return reply
    return Reply(reasoning="Echoing the user.", content=f"You said: **{prompt}**", chunk_size=4)


def main() -> int:
    home, workspace = Path(sys.argv[1]), Path(sys.argv[2])
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    server = FixtureServer(ChatDialect("deepseek"), api_key="sk-audit", port=port)
    server.responder = responder
    server.start()
    home.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        '[[providers]]\nname = "fixture"\nkind = "openai"\n'
        f'base_url = "{server.base_url}"\nmodels = ["deepseek-flash", "mystery-model"]\n'
        'default = "deepseek-flash"\napi_key_env = "FIXTURE_API_KEY"\n'
        'context_window = 131072\nreasoning_protocol = "deepseek"\n'
    )
    (home / ".env").write_text("FIXTURE_API_KEY=sk-audit\n")
    (workspace / "src.py").write_text(
        "".join(f"def f{i}():\n    return {i}\n\n" for i in range(40))
    )
    (workspace / "README.md").write_text("# Demo\n\n## A\n\n## B\n\n## C\n")
    print(server.base_url, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
