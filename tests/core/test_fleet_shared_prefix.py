"""A fleet's siblings share one cacheable prefix and really run at the same time.

Issue 12's cache and concurrency properties, end to end: a parent calls
``fleet``; its children are real Agents against the loopback fixture, whose
prompt cache models DeepSeek's (wire-formats.md §3.1). Structural assertions,
no timing: the children's first requests must all be in flight at once (a
barrier in the fixture's handler threads would break otherwise), and their
bytes may differ only in the task text, which comes last.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from reasonix_core import events as ev
from reasonix_testkit import ContentScript, RecordedRequest, Reply, ScriptItem
from reasonix_testkit.dialects.chat import render_prompt
from reasonix_testkit.script import first_user_text
from tests.core.agent_helpers import run_turn, runtime
from tests.core.subagent_helpers import call, requests_of

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: survey the project"


def task(k: int) -> str:
    return f"CHILD-{k}: read notes.txt and say what it holds (item {k})"


class BarrierScript:
    """The content script, except that each child's first request waits in its
    handler thread until ``parties`` of them are in flight at once. Were the
    children serialised (a lock, a slot of one, sequential awaits), the first
    would wait alone and the barrier would break."""

    def __init__(self, script: ContentScript, parties: int) -> None:
        self.script = script
        self.barrier = threading.Barrier(parties, timeout=60)
        self.broken = False

    def __call__(self, request: RecordedRequest) -> ScriptItem:
        body = request.json or {}
        is_child = "CHILD-" in first_user_text(body)
        first = not any(m.get("role") == "assistant" for m in body.get("messages") or ())
        if is_child and first:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                self.broken = True
        return self.script(request)


def first_requests(server: Any, n: int) -> list[RecordedRequest]:
    out = []
    for k in range(n):
        mine = requests_of(server, f"CHILD-{k}:")
        assert mine, f"child {k} sent nothing"
        out.append(mine[0])
    return out


def first_hit_ratios(events: list[ev.Event]) -> list[float]:
    """Cache hit / prompt tokens of each child's first request, in the order
    the fixture answered them."""
    ratios: dict[tuple[str, ...], float] = {}
    for e in events:
        if isinstance(e, ev.UsageReported) and e.agent_path and e.agent_path not in ratios:
            ratios[e.agent_path] = e.usage.cache_hit_tokens / e.usage.prompt_tokens
    return list(ratios.values())


def assert_shared_prefix_then_task(requests: list[RecordedRequest]) -> None:
    """Byte-identical up to the task text, and the task text last in the prompt."""
    normalised = set()
    for k, request in enumerate(requests):
        text = json.dumps(task(k))[1:-1].encode()
        assert request.body.count(text) == 1
        normalised.add(request.body.replace(text, b"<TASK>"))
        assert request.json is not None
        # What the model reads (tool schemas first, then the messages) ends with the task.
        assert render_prompt(request.json).endswith(task(k))
    assert len(normalised) == 1, "siblings' requests differ outside the task text"


def fleet_script(items: list[dict[str, Any]]) -> ContentScript:
    script = ContentScript()
    script.when(PARENT, call("fleet", "call_fleet", items=items), Reply(content="parent done"))
    for k in range(len(items)):
        script.when(f"CHILD-{k}:", call("read_file", path="notes.txt"), Reply(content=f"ok {k}"))
    return script


async def test_read_only_siblings_run_at_once_and_share_the_cached_prefix(workspace, server):
    (workspace / "notes.txt").write_text("the notes\n")
    n = 6  # [agent] max_subagent_concurrency
    items = [{"id": f"c{k}", "prompt": task(k), "read_only": True} for k in range(n)]
    responder = BarrierScript(fleet_script(items), parties=n)
    server.responder = responder
    async with runtime(workspace, permission_mode="auto") as rt:
        events = await run_turn(rt, PARENT)

    assert events[-1].text == "parent done"  # type: ignore[attr-defined]
    # All six first requests were in flight together.
    assert not responder.broken
    assert_shared_prefix_then_task(first_requests(server, n))
    # DeepSeek's rule at the fixture: the first two requests sharing a prefix both
    # miss (the second makes the shared prefix a unit of its own); every later
    # sibling hits it - nearly all of its prompt, the task is a few tokens.
    ratios = first_hit_ratios(events)
    assert len(ratios) == n
    assert sum(r >= 0.8 for r in ratios) >= n - 2


async def test_writer_siblings_put_the_completion_contract_before_the_task(workspace, server):
    (workspace / "notes.txt").write_text("the notes\n")
    n = 4
    items = [{"id": f"w{k}", "prompt": task(k), "write_paths": [f"out{k}.txt"]} for k in range(n)]
    server.responder = fleet_script(items)
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)

    assert events[-1].text == "parent done"  # type: ignore[attr-defined]
    firsts = first_requests(server, n)
    for request in firsts:
        user = first_user_text(request.json)
        # Shared by every writer, so part of the shared prefix, not after the task.
        assert user.index("</completion-contract>") < user.index("CHILD-")
    assert_shared_prefix_then_task(firsts)
    ratios = first_hit_ratios(events)
    assert len(ratios) == n
    assert sum(r >= 0.8 for r in ratios) >= n - 2
