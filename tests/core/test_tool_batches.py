"""How the loop runs a batch of tool calls: order, concurrency, reminders, bounding."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from reasonix_core import events as ev
from reasonix_core.tool.kept_results import RESULT_LIMIT
from reasonix_testkit import Reply, ToolCallSpec
from tests.core.agent_helpers import bodies, run_turn, runtime, session_records

pytestmark = pytest.mark.usefixtures("configured")


def call(name: str, **args: object) -> ToolCallSpec:
    return ToolCallSpec(name, json.dumps(args))


async def test_read_edit_edit_bash_in_one_batch_take_effect_in_order(workspace, server):
    (workspace / "app.py").write_text("value = 1\n")
    server.enqueue(
        Reply(
            tool_calls=[
                call("read_file", path="app.py"),
                call("edit_file", path="app.py", old_string="value = 1", new_string="value = 2"),
                call("edit_file", path="app.py", old_string="value = 2", new_string="value = 3"),
                call("bash", command="cat app.py"),
            ]
        ),
        Reply(content="done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, "bump it twice")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [e.name for e in finished] == ["read_file", "edit_file", "edit_file", "bash"]
    assert [e.is_error for e in finished] == [False, False, False, False], [
        e.result for e in finished
    ]
    assert "value = 3" in finished[-1].result
    assert (workspace / "app.py").read_text() == "value = 3\n"
    # results are appended in the model's declared order
    tool_ids = [m["tool_call_id"] for m in bodies(server)[1]["messages"] if m["role"] == "tool"]
    declared = [c["id"] for c in bodies(server)[1]["messages"][-5]["tool_calls"]]
    assert tool_ids == declared


async def test_a_failure_does_not_cancel_later_independent_calls(workspace, server):
    (workspace / "ok.txt").write_text("fine\n")
    server.enqueue(
        Reply(tool_calls=[call("read_file", path="missing.txt"), call("read_file", path="ok.txt")]),
        Reply(content="done"),
    )
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "read both")
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].is_error and not finished[1].is_error
    assert "fine" in finished[1].result


async def test_consecutive_read_only_calls_run_concurrently(workspace, server):
    barrier = threading.Barrier(2, timeout=60)  # returns once both are in

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                barrier.wait()  # both fetches must be in flight at once
                body = b"<p>together</p>"
                self.send_response(200)
            except threading.BrokenBarrierError:
                body = b"<p>alone</p>"
                self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    try:
        server.enqueue(
            Reply(tool_calls=[call("web_fetch", url=url + "a"), call("web_fetch", url=url + "b")]),
            Reply(content="done"),
        )
        # web_fetch is egress: it asks unless a domain rule allows it.
        async with runtime(workspace, allowed_tools=["WebFetch(domain:127.0.0.1)"]) as rt:
            events = await run_turn(rt, "fetch both")
    finally:
        httpd.shutdown()
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert len(finished) == 2
    assert all("together" in e.result for e in finished), [e.result for e in finished]


async def test_identical_calls_get_reminders_on_3rd_5th_and_8th(workspace, server):
    replies = [Reply(tool_calls=[call("ls")]) for _ in range(8)] + [Reply(content="stop")]
    server.enqueue(*replies)
    async with runtime(workspace) as rt:
        events = await run_turn(rt, "list a lot")
    results = [e.result for e in events if isinstance(e, ev.ToolCallFinished)]
    marked = [i + 1 for i, r in enumerate(results) if "[reminder:" in r]
    assert marked == [3, 5, 8]
    assert all("ls" in r.split("[reminder:")[1] for r in results if "[reminder:" in r)


async def test_big_results_are_bounded_once_and_kept_locally(workspace, server):
    (workspace / "big.txt").write_text(
        "".join(f"line {i:05d} " + "x" * 90 + "\n" for i in range(1500))
    )
    server.enqueue(Reply(tool_calls=[call("read_file", path="big.txt")]), Reply(content="ok"))
    async with runtime(workspace) as rt:
        await run_turn(rt, "read it")
        records = session_records(rt)
    sent = [m for m in bodies(server)[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert len(sent) < RESULT_LIMIT + 500
    assert "characters omitted" in sent and "line 00000" in sent and "line 01499" in sent
    stored = [
        r["message"] for r in records if r["type"] == "message" and r["message"]["role"] == "tool"
    ][0]
    assert stored["content"] == sent
    assert len(stored["meta"]["full_content"]) > 100_000
