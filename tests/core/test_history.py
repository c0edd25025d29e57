"""History search over real session transcripts in a temp ``$REASONIX_HOME``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from reasonix_core.agent.session import SessionHeader, SessionStore, session_dir
from reasonix_core.memory.history import HistoryIndex, clean_user_text
from reasonix_core.messages import Message, ToolCall
from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.env import SessionEnv


def header(session_id: str, workspace: Path) -> SessionHeader:
    return SessionHeader(
        id=session_id,
        workspace=str(workspace),
        created=f"2025-0{session_id[-1]}-01T10:00:00+00:00",
        model="fixture/deepseek-flash",
        effort="auto",
        system_prompt="sys",
        tools_fingerprint="x",
    )


def write_session(home: Path, workspace: Path, session_id: str, messages: list[Message]) -> Path:
    store = SessionStore.create(home / "sessions", workspace, header(session_id, workspace))
    for m in messages:
        store.append(m)
    store.close()
    return store.path


def call(cid: str, name: str, args: str) -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=args)


@pytest.fixture
def sessions(home: Path, workspace: Path) -> dict[str, Path]:
    first = write_session(
        home,
        workspace,
        "20250101-100000-aaaaa1",
        [
            Message(
                role="user",
                content=(
                    "the websocket reconnect test is flaky\n\n<workspace-context>\n"
                    "platform: Linux\n</workspace-context>"
                ),
            ),
            Message(
                role="assistant",
                content="Let me look at the reconnect logic.",
                reasoning_content="thinking about backoff jitter",
                tool_calls=(call("c1", "grep", '{"pattern": "reconnect"}'),),
            ),
            Message(
                role="tool",
                tool_call_id="c1",
                content="src/ws.py:10: def reconnect(): zebracorn",
                meta={"full_content": "src/ws.py:10 ... unicornfish raw output"},
            ),
            Message(role="assistant", content="The backoff had no jitter; I added jitter."),
            Message(role="user", content="great, now update the changelog"),
            Message(role="assistant", content="Changelog updated."),
        ],
    )
    second = write_session(
        home,
        workspace,
        "20250201-100000-bbbbb2",
        [
            Message(role="user", content="数据库迁移失败了，帮我看看"),
            Message(role="assistant", content="迁移脚本缺少索引，已修复。"),
        ],
    )
    other_ws = workspace.parent / "other"
    other_ws.mkdir()
    write_session(
        home,
        other_ws,
        "20250301-100000-ccccc3",
        [Message(role="user", content="websocket elsewhere")],
    )
    return {"first": first, "second": second}


@pytest.fixture
def index(home: Path, workspace: Path, sessions) -> HistoryIndex:
    return HistoryIndex(home / "sessions", workspace, current_session="20250201-100000-bbbbb2")


def test_search_finds_the_right_message(index):
    hits = index.search("flaky websocket reconnect")
    assert hits[0].entry.ref == "20250101-100000-aaaaa1#0"
    assert hits[0].entry.role == "user"
    assert hits[0].entry.text == "the websocket reconnect test is flaky"
    # Only this workspace: the other workspace's session is never searched.
    assert all(h.entry.session_id != "20250301-100000-ccccc3" for h in hits)


def test_tool_output_excluded_by_default(index):
    assert index.search("zebracorn") == []
    assert [h.entry.role for h in index.search("zebracorn", kind="tool")] == ["tool"]
    assert [h.entry.role for h in index.search("zebracorn", kind="all")] == ["tool"]
    assert index.search("zebracorn", kind="user") == []


def test_raw_tool_output_reasoning_and_context_blocks_are_never_indexed(index):
    assert index.search("unicornfish", kind="all") == []  # meta.full_content
    assert index.search("backoff jitter thinking")[0].entry.index == 3  # not the reasoning
    assert index.search("platform linux", kind="all") == []  # <workspace-context>


def test_assistant_tool_calls_are_searchable(index):
    hits = index.search("grep pattern", kind="assistant")
    assert hits and "[tool call] grep" in hits[0].entry.text


def test_around_returns_neighbours(index):
    window, center = index.around("20250101-100000-aaaaa1#3", radius=1)
    assert center.index == 3
    assert [(e.index, e.role) for e in window] == [(2, "tool"), (3, "assistant"), (4, "user")]
    window, _ = index.around("20250101-100000-aaaaa1#0", radius=10)
    assert [e.index for e in window] == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="invalid ref"):
        index.around("nonsense")
    with pytest.raises(ValueError, match="no searchable message #99"):
        index.around("20250101-100000-aaaaa1#99")
    with pytest.raises(ValueError, match="no transcript"):
        index.around("20250301-100000-ccccc3#0")


def test_cjk_search_by_bigrams(index):
    hits = index.search("迁移失败")
    assert hits[0].entry.ref == "20250201-100000-bbbbb2#0"


def test_new_messages_and_archives_are_picked_up(index, home, workspace, sessions):
    assert index.search("kubernetes") == []
    with open(sessions["second"], "a", encoding="utf-8") as fh:
        record = {"type": "message", "message": {"role": "user", "content": "deploy to kubernetes"}}
        fh.write(json.dumps(record) + "\n")
    assert index.search("kubernetes")[0].entry.ref == "20250201-100000-bbbbb2#2"

    archive = session_dir(home / "sessions", workspace) / "archive"
    archive.mkdir()
    src = write_session(
        home,
        workspace,
        "20240101-100000-ddddd4",
        [Message(role="user", content="legacy cobol port")],
    )
    src.rename(archive / src.name)
    hit = index.search("cobol")[0]
    assert hit.entry.archived and hit.entry.session_id == "20240101-100000-ddddd4"


def test_torn_and_foreign_lines_are_tolerated(index, sessions):
    with open(sessions["first"], "a", encoding="utf-8") as fh:
        fh.write(
            '{"type": "checkpoint", "summary": "x"}\n[1, 2]\n{"type": "message", "message": 3}\n'
        )
        fh.write('{"type":"message","message":{"role":"user","content":"torn sentinel')
    assert index.search("flaky websocket")
    assert index.search("sentinel") == []


def test_incremental_parse_completes_torn_lines_and_reparses_rewrites(index, sessions):
    path = sessions["second"]
    assert index.search("kubernetes") == []
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type":"message","message":{"role":"user","content":"kubern')
    assert index.search("kubernetes") == []  # torn: waits for its newline
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('etes rollout"}}\n')
    assert index.search("kubernetes rollout")[0].entry.ref == "20250201-100000-bbbbb2#2"
    # A rewritten (shorter, replaced) file is parsed from scratch.
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(lines[0] + lines[-1], encoding="utf-8")
    tmp.replace(path)
    hits = index.search("kubernetes rollout")
    assert [h.entry.ref for h in hits] == ["20250201-100000-bbbbb2#0"]
    assert index.search("迁移失败") == []


def test_clean_user_text_strips_appended_blocks():
    text = 'fix it\n\n<workspace-context>\nw\n</workspace-context>\n\n<memory-recall note="x">\n- f\n</memory-recall>'
    assert clean_user_text(text) == "fix it"


def test_two_thousand_messages_index_and_search_quickly(home, workspace):
    words = "agent loop provider retry session tool sandbox policy cache prefix summary".split()
    messages = [
        Message(
            role="user" if n % 2 else "assistant",
            content=" ".join(words[(n * 7 + k) % len(words)] for k in range(40)) + f" marker{n}",
        )
        for n in range(2000)
    ]
    write_session(home, workspace, "20250401-100000-eeeee4", messages)
    index = HistoryIndex(home / "sessions", workspace)
    started = time.perf_counter()
    hits = index.search("marker1234 retry")
    elapsed = time.perf_counter() - started
    assert hits[0].entry.text.endswith("marker1234")
    assert elapsed < 5.0
    started = time.perf_counter()
    index.search("marker77 sandbox")
    assert time.perf_counter() - started < 0.5  # cached parse and index


# -- the tool ----------------------------------------------------------------------------


@pytest.fixture
def tool_env(index, workspace, tmp_path):
    registry = ToolRegistry(builtin_tools(["history"]))
    ctx = ToolContext(env=SessionEnv(workspace=workspace, temp_dir=tmp_path), history=index)
    return registry, ctx


async def test_history_tool_search_and_around(tool_env):
    registry, ctx = tool_env
    assert registry.get("history").read_only
    result = await registry.call(
        "history", '{"operation": "search", "query": "websocket reconnect"}', ctx
    )
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[0].startswith("history: ") and "tool output excluded" in lines[0]
    assert lines[1].startswith("[1] 20250101-100000-aaaaa1#0 · user · 2025-01-01")
    assert "websocket reconnect test is flaky" in lines[2]
    assert result.meta["refs"][0] == "20250101-100000-aaaaa1#0"

    around = await registry.call(
        "history", '{"operation": "around", "ref": "20250101-100000-aaaaa1#2", "limit": 1}', ctx
    )
    assert around.text.startswith(
        "history: session 20250101-100000-aaaaa1 (2025-01-01), messages #1-#3 around #2:\n"
        "  #1 assistant: Let me look at the reconnect logic."
    )
    assert around.text.endswith("  #3 assistant: The backoff had no jitter; I added jitter.")
    assert "» #2 tool: src/ws.py:10" in around.text

    cjk = await registry.call("history", '{"operation": "search", "query": "数据库迁移"}', ctx)
    assert "20250201-100000-bbbbb2#0 · user · 2025-02-01 · this session" in cjk.text


async def test_history_tool_errors(tool_env):
    registry, ctx = tool_env
    for args, needle in [
        ('{"operation": "search"}', "needs a non-empty query"),
        ('{"operation": "search", "query": "the of and"}', "no searchable words"),
        ('{"operation": "around"}', "needs `ref`"),
        ('{"operation": "around", "ref": "zzz#1"}', "no transcript"),
        ('{"operation": "search", "query": "x", "kind": "bogus"}', "invalid arguments"),
        ('{"operation": "search", "query": "x", "limit": 0}', "invalid arguments"),
    ]:
        result = await registry.call("history", args, ctx)
        assert result.is_error and needle in result.text, (args, result.text)
    empty = await registry.call(
        "history", '{"operation": "search", "query": "nothinglikethis"}', ctx
    )
    assert not empty.is_error and empty.text.startswith("history: no matches")


def test_a_goal_round_the_host_sent_is_not_indexed_as_the_users(home: Path, workspace: Path):
    from reasonix_core.messages import HOST_TURN

    write_session(
        home,
        workspace,
        "20250401-100000-ddddd4",
        [
            Message(role="user", content="migrate the quokka schema"),
            Message(role="assistant", content="first half done"),
            Message(
                role="user",
                content="Continue working toward the active goal.",
                meta={HOST_TURN: True},
            ),
            Message(role="assistant", content="second half done"),
        ],
    )
    index = HistoryIndex(home / "sessions", workspace)
    assert index.search("continue working toward the active goal", kind="user") == []
    assert index.search("quokka schema", kind="user")[0].entry.index == 0


def test_clean_user_text_strips_the_goal_block():
    from reasonix_core.goal_block import goal_block

    text = "make the tests pass\n" + goal_block("goal-1", 1, 0, "make the tests pass")
    assert clean_user_text(text) == "make the tests pass"
    assert "<active-goal" not in clean_user_text(goal_block("g", 2, 1, "x"))
