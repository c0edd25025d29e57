"""The one subagent primitive end to end: parent and children are real Agents
against the loopback fixture, scripted by content (their requests interleave)."""

from __future__ import annotations

import json

import pytest

from reasonix_core import events as ev
from reasonix_core.memory.facts import FactStore
from reasonix_core.subagent.prompts import DEFAULT_READ_ONLY_PROMPT, DEFAULT_TASK_PROMPT
from reasonix_testkit import Reply
from tests.core.agent_helpers import bodies, run_turn, runtime, session_messages
from tests.core.subagent_helpers import (
    call,
    calls,
    capsules,
    install,
    metrics_of,
    requests_of,
    tool_names,
)

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: look into the parser"
# Words the memory fact below shares, so the parent recalls it.
RECALLING_PARENT = "PARENT-TASK: what are our parser conventions? is the parser hand-written?"


async def test_read_only_child_answers_into_the_parents_transcript_only(workspace, server, home):
    (workspace / "AGENTS.md").write_text("STANDING-RULE-FROM-AGENTS-MD\n")
    (workspace / "REASONIX.md").write_text("STANDING-RULE-FROM-REASONIX-MD\n")
    (workspace / "parser.py").write_text("def parse(): pass\n")
    FactStore(home, workspace.resolve()).create(
        type="project", title="Parser conventions", body="MEMORY-FACT: the parser is hand-written."
    )
    script = install(server)
    script.when(
        RECALLING_PARENT,
        call("read_only_task", "call_ro", prompt="CHILD-RO: where is parse defined?"),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-RO",
        call("grep", pattern="def parse"),
        Reply(content="parse is defined in parser.py:1", reasoning="child thinking"),
    )
    async with runtime(workspace, permission_mode="auto") as rt:
        events = await run_turn(rt, RECALLING_PARENT)
        messages = session_messages(rt)

    assert isinstance(events[-1], ev.TurnFinished) and events[-1].text == "parent done"
    # The parent's transcript holds the child's answer as the tool result, nothing more.
    tool_results = [m for m in messages if m["role"] == "tool"]
    assert len(tool_results) == 1
    assert "parse is defined in parser.py:1" in tool_results[0]["content"]
    assert "child thinking" not in json.dumps(messages)
    assert "def parse" not in tool_results[0]["content"]  # the child's grep output stays inside

    child = requests_of(server, "CHILD-RO")
    assert len(child) == 2
    first = child[0].json
    assert first is not None
    # Explicit context: the read-only prompt, nothing else.
    assert first["messages"][0] == {"role": "system", "content": DEFAULT_READ_ONLY_PROMPT}
    # The parent's own requests carry its instructions and recalled memory ...
    parent_first = requests_of(server, RECALLING_PARENT)[0].body.decode()
    assert "STANDING-RULE-FROM-AGENTS-MD" in parent_first and "MEMORY-FACT" in parent_first
    # ... its children's carry none of it, nor the parent's conversation.
    for request in child:
        raw = request.body.decode()
        assert "STANDING-RULE" not in raw
        assert "MEMORY-FACT" not in raw and "memory-recall" not in raw
        assert RECALLING_PARENT not in raw
    assert "<workspace-context>" in first["messages"][1]["content"]
    names = tool_names(child[0])
    assert {"read_file", "grep", "ls", "glob", "read_only_task"} <= set(names)
    for absent in ("write_file", "edit_file", "bash", "task", "ask", "remember", "memory"):
        assert absent not in names

    # Events: tagged with the child's path, no child text in the parent's stream.
    started = [e for e in events if isinstance(e, ev.SubagentStarted)]
    assert [(e.agent_path, e.child_path, e.tool_call_id) for e in started] == [
        ((), ("call_ro",), "call_ro")
    ]
    child_events = [e for e in events if e.agent_path == ("call_ro",)]
    assert not any(isinstance(e, ev.TextDelta | ev.TurnFinished) for e in child_events)
    assert any(isinstance(e, ev.ToolCallFinished) and e.name == "grep" for e in child_events)
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    m = metrics_of(events)
    assert m.subagent_runs == 1 and m.subagent_nested_runs == 0
    assert m.subagent_tool_calls == 1
    assert m.tool_calls == 2  # the parent's read_only_task + the child's grep
    assert m.usage_by_source["subagent"].calls == 2
    assert m.usage_by_source["executor"].calls == 2


async def test_capsule_is_recorded_with_a_stable_hash(workspace, server, home):
    script = install(server)
    script.when(
        PARENT,
        calls(
            ("read_only_task", {"prompt": "CHILD-ONE: first question"}),
            ("read_only_task", {"prompt": "CHILD-TWO: second question"}),
        ),
        Reply(content="parent done"),
    )
    script.when("CHILD-ONE", Reply(content="one"))
    script.when("CHILD-TWO", Reply(content="two"))
    async with runtime(workspace, permission_mode="auto") as rt:
        await run_turn(rt, PARENT)
        parent_id = rt.agent.session_id

    found = capsules(home)
    assert len(found) == 2
    for capsule in found:
        assert capsule["type"] == "context_capsule"
        assert capsule["workspace"] == str(workspace.resolve())
        assert capsule["system_prompt"]["source"] == "default_read_only"
        assert len(capsule["system_prompt"]["sha256"]) == 64
        assert capsule["model"] == "fixture/deepseek-flash"
        assert capsule["read_only"] is True and capsule["write_claim"] is None
        assert capsule["parent_session_id"] == parent_id
        assert capsule["parent_tool_call_id"]
        assert capsule["inherited"] and not any(capsule["inherited"].values())
        assert {"agents_md", "memory", "parent_conversation"} <= set(capsule["inherited"])
    # Same starting context, different parent call: the same hash.
    assert found[0]["parent_tool_call_id"] != found[1]["parent_tool_call_id"]
    assert found[0]["capsuleHash"] == found[1]["capsuleHash"]


async def test_children_of_one_profile_share_a_byte_identical_prefix(workspace, server):
    script = install(server)
    script.when(
        PARENT,
        calls(
            ("read_only_task", {"prompt": "CHILD-ONE: first question"}),
            ("read_only_task", {"prompt": "CHILD-TWO: second question"}),
        ),
        Reply(content="parent done"),
    )
    script.when("CHILD-ONE", Reply(content="one"))
    script.when("CHILD-TWO", Reply(content="two"))
    async with runtime(workspace, permission_mode="auto") as rt:
        await run_turn(rt, PARENT)

    one = requests_of(server, "CHILD-ONE")[0].json
    two = requests_of(server, "CHILD-TWO")[0].json
    assert one is not None and two is not None

    def encoded(value: object) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    # The shared part: the system prompt and the tool schemas, byte for byte ...
    assert encoded(one["tools"]) == encoded(two["tools"])
    assert encoded(one["messages"][0]) == encoded(two["messages"][0])
    # ... then the first user turn, identical up to the task text, which comes
    # after the workspace context (the task never precedes the shared part).
    a, b = one["messages"][1]["content"], two["messages"][1]["content"]
    shared = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    assert a[shared:].startswith("ONE") and b[shared:].startswith("TWO")
    assert a[:shared].endswith("</workspace-context>\n\nCHILD-")


async def test_writer_child_gets_the_task_prompt_contract_and_claim(workspace, server, home):
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_w", prompt="CHILD-W: create src/new.py", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-W",
        call("write_file", path="src/new.py", content="x = 1\n"),
        Reply(content="created it"),
    )
    async with runtime(workspace, permission_mode="auto") as rt:
        events = await run_turn(rt, PARENT)
        messages = session_messages(rt)

    assert (workspace / "src" / "new.py").read_text() == "x = 1\n"
    child = requests_of(server, "CHILD-W")[0].json
    assert child is not None
    assert child["messages"][0]["content"] == DEFAULT_TASK_PROMPT
    assert "<completion-contract>" in child["messages"][1]["content"]
    user = child["messages"][1]["content"]
    # The contract is the same for every writer: part of the shared prefix, before the task.
    assert user.index("</completion-contract>") < user.index("CHILD-W")
    assert user.endswith("CHILD-W: create src/new.py")
    names = [t["function"]["name"] for t in child["tools"]]
    assert names[-1] == "complete_subtask"
    # The test config turns the bash sandbox off: bash cannot be confined, so it is gone.
    assert "bash" not in names and "write_file" in names
    result = next(m for m in messages if m["role"] == "tool")["content"]
    assert "unreported" in result and "created it" in result
    assert "- wrote: src/new.py" in result
    (capsule,) = capsules(home)
    assert capsule["write_claim"] == ["src"]
    # The capsule says why the child lacks what the session has.
    dropped = capsule["tools"]["dropped"]
    assert "bash sandbox is off" in dropped["bash"] and "memory" in dropped["remember"]
    m = metrics_of(events)
    assert m.subagent_mutations == 1 and m.completions_prose_only == 1
    assert m.completion_reports == 0


async def test_depth_is_limited(workspace, server, home):
    config = home / "config.toml"
    config.write_text(config.read_text().replace("[agent]\n", "[agent]\nmax_subagent_depth = 1\n"))
    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", prompt="CHILD-D: ask a grandchild"),
        Reply(content="parent done"),
    )
    script.when("CHILD-D", Reply(content="no tools to nest"))
    async with runtime(workspace, permission_mode="auto") as rt:
        await run_turn(rt, PARENT)
    names = tool_names(requests_of(server, "CHILD-D")[0])
    assert "read_only_task" not in names


async def test_a_grandchild_is_a_nested_run(workspace, server):
    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", "call_c", prompt="CHILD-N: delegate further"),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-N",
        call("read_only_task", "call_g", prompt="GRANDCHILD: look"),
        Reply(content="child done"),
    )
    script.when("GRANDCHILD", Reply(content="grandchild done"))
    async with runtime(workspace, permission_mode="auto") as rt:
        events = await run_turn(rt, PARENT)
    started = [(e.agent_path, e.child_path) for e in events if isinstance(e, ev.SubagentStarted)]
    assert started == [((), ("call_c",)), (("call_c",), ("call_c", "call_g"))]
    m = metrics_of(events)
    assert m.subagent_runs == 2 and m.subagent_nested_runs == 1
    # At depth 2 (the default maximum) the grandchild cannot delegate again, and
    # its fresh session says where it sits; a depth-1 child gets no such note.
    grandchild = requests_of(server, "GRANDCHILD")[0]
    assert "read_only_task" not in tool_names(grandchild)
    assert grandchild.json is not None
    user = grandchild.json["messages"][1]["content"]
    assert "<subagent-context>" in user and "depth 2 of 2" in user
    assert user.index("</subagent-context>") < user.index("GRANDCHILD")
    child = requests_of(server, "CHILD-N")[0].body.decode()
    assert "subagent-context" not in child
    assert len(bodies(server)) == 5


async def test_depth_zero_turns_delegation_off(workspace, server, home):
    config = home / "config.toml"
    config.write_text(config.read_text().replace("[agent]\n", "[agent]\nmax_subagent_depth = 0\n"))
    server.enqueue(Reply(content="alone"))
    async with runtime(workspace) as rt:
        names = rt.agent.tools.names
        await run_turn(rt, "hi")
    assert not {"task", "read_only_task", "fleet"} & set(names)
    assert "read_file" in names


async def test_cancelling_the_parent_cancels_the_child_and_both_transcripts_stay_valid(
    workspace, server, home
):
    from contextlib import aclosing

    import anyio

    from reasonix_core.agent.transcript import UNKNOWN_OUTCOME

    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", "call_x", prompt="CHILD-SLOW: take your time"),
        Reply(content="still here"),
    )
    script.when(
        "CHILD-SLOW",
        call("ls"),
        Reply(content="a very long answer " * 200, chunk_size=4, delay=0.05),
    )
    async with runtime(workspace, permission_mode="auto") as rt:
        seen: list[ev.Event] = []
        with anyio.move_on_after(60):  # a hang guard: the cancel comes from an event
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    async with aclosing(rt.agent.run(PARENT)) as events:
                        async for event in events:
                            seen.append(event)
                            if isinstance(event, ev.ToolCallFinished) and event.name == "ls":
                                # The child's second request is streaming now.
                                tg.cancel_scope.cancel()

                tg.start_soon(consume)
        assert any(isinstance(e, ev.SubagentStarted) for e in seen)
        assert not any(isinstance(e, ev.SubagentFinished | ev.TurnFinished) for e in seen)
        assert session_messages(rt)[-1]["content"] == UNKNOWN_OUTCOME
        events = await run_turn(rt, "go on")
    assert events[-1].text == "still here"
    # The child's transcript is valid: every tool call has its result.
    (path,) = (home / "sessions" / "subagents").rglob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    messages = [r["message"] for r in records if r["type"] == "message"]
    asked = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert asked and asked == answered


async def test_children_of_one_profile_start_from_the_cached_prefix(workspace, server):
    # Three writers run one after the other (writers never share a batch). The
    # fixture caches like DeepSeek: a prefix two requests share is stored when the
    # second arrives, so from the third child on the shared prefix (system prompt,
    # tool schemas, workspace context) is a hit before any child-specific byte.
    script = install(server)
    tasks = [("task", {"prompt": f"CHILD-{n}: change {n}", "write_paths": []}) for n in "ABC"]
    script.when(PARENT, calls(*tasks), Reply(content="parent done"))
    for n in "ABC":
        script.when(f"CHILD-{n}", Reply(content=n))
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
    usage = [e.usage for e in events if isinstance(e, ev.UsageReported) and e.agent_path]
    assert len(usage) == 3
    third = usage[2]
    assert third.cache_hit_tokens >= 0.8 * third.prompt_tokens


async def test_an_ephemeral_run_keeps_no_transcript(workspace, server, home):
    script = install(server)
    script.when("EPHEMERAL", call("ls"), Reply(content="listed"))
    async with runtime(workspace, permission_mode="auto") as rt:
        runner = rt.agent.tool_context.subagents.runner()
        result = await runner.run(runner.spec("EPHEMERAL: list", read_only=True, ephemeral=True))
    assert result.ok and result.answer == "listed"
    assert result.capsule.read_only and len(result.capsule.capsule_hash) == 16
    assert not (home / "sessions" / "subagents").exists()
    # Nothing derived from the transcript's name was written anywhere lasting.
    assert not list(home.rglob("*.requests.ndjson"))


async def test_a_child_whose_run_fails_is_an_error_result(workspace, server):
    from reasonix_testkit import HttpError

    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", "call_f", prompt="CHILD-FAIL: try"),
        Reply(content="parent done"),
    )
    script.when("CHILD-FAIL", HttpError(400, "CHILD-PROVIDER-REFUSAL"))
    async with runtime(workspace, permission_mode="auto") as rt:
        events = await run_turn(rt, PARENT)
        tool = next(m for m in session_messages(rt) if m["role"] == "tool")
    assert tool["content"].startswith("[subagent failed: HTTP 400: CHILD-PROVIDER-REFUSAL")
    finished = next(e for e in events if isinstance(e, ev.SubagentFinished))
    assert (finished.ok, finished.status, finished.completion) == (False, "failed", "")
    call_done = next(
        e for e in events if isinstance(e, ev.ToolCallFinished) and e.name == "read_only_task"
    )
    assert call_done.is_error
    assert isinstance(events[-1], ev.TurnFinished)  # the parent goes on


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"model": "nowhere/none"}, "model 'nowhere/none'"),
        ({"effort": "ludicrous"}, "ludicrous"),
        ({"prompt": "   "}, "prompt is empty"),
    ],
)
async def test_a_child_that_cannot_start_sends_nothing(workspace, server, args, problem):
    script = install(server)
    script.when(
        PARENT,
        call("task", **{"prompt": "CHILD-NEVER: x", "write_paths": [], **args}),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert result.startswith("task: ") and problem in result
    assert len(server.requests) == 2
    assert not any(isinstance(e, ev.SubagentStarted) for e in events)
