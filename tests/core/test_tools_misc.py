"""todo_write, web_fetch (against a local http.server) and ask."""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from reasonix_core.errors import ToolArgumentError
from reasonix_core.permission.approver import (
    FailClosedApprover,
    Question,
    QuestionAnswer,
)
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.builtin.ask import HEADLESS, AskTool
from reasonix_core.tool.builtin.todo_write import Todo, TodoWriteTool
from reasonix_core.tool.builtin.web_fetch import (
    MAX_BODY_BYTES,
    WebFetchTool,
    address_problem,
    html_to_text,
)
from reasonix_core.tool.env import SessionEnv
from reasonix_testkit import ScriptedApprover


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(env=SessionEnv(workspace=tmp_path, temp_dir=tmp_path / "tmp"))


# -- todo_write ---------------------------------------------------------------


async def test_todo_write_stores_and_renders(ctx: ToolContext) -> None:
    result = await TodoWriteTool().execute(
        {
            "todos": [
                {"content": "Write tests", "status": "completed", "active_form": "Writing tests"},
                {"content": "Fix parser", "status": "in_progress", "active_form": "Fixing parser"},
                {"content": "Update docs", "status": "pending", "active_form": "Updating docs"},
            ]
        },
        ctx,
    )
    assert not result.is_error
    assert result.text == (
        "Todos (1/3 completed):\n[x] Write tests\n[>] Fixing parser\n[ ] Update docs"
    )
    assert ctx.todos == (
        Todo("Write tests", "completed", "Writing tests"),
        Todo("Fix parser", "in_progress", "Fixing parser"),
        Todo("Update docs", "pending", "Updating docs"),
    )


async def test_todo_write_allows_at_most_one_in_progress(ctx: ToolContext) -> None:
    ctx.todos = (Todo("Old", "pending", "Old"),)
    result = await TodoWriteTool().execute(
        {
            "todos": [
                {"content": "A", "status": "in_progress", "active_form": "Doing A"},
                {"content": "B", "status": "in_progress", "active_form": "Doing B"},
            ]
        },
        ctx,
    )
    assert result.is_error
    assert "at most one" in result.text
    assert ctx.todos == (Todo("Old", "pending", "Old"),)


async def test_todo_write_validation_alias_and_clear(ctx: ToolContext) -> None:
    tool = TodoWriteTool()
    with pytest.raises(ToolArgumentError, match="status"):
        await tool.execute({"todos": [{"content": "A", "status": "done"}]}, ctx)
    with pytest.raises(ToolArgumentError):
        await tool.execute({"todos": [{"content": "A", "status": "pending", "x": 1}]}, ctx)
    result = await tool.execute(
        {"todos": [{"content": "Run it", "status": "in_progress", "activeForm": "Running it"}]},
        ctx,
    )
    assert result.text.endswith("[>] Running it")
    cleared = await tool.execute({"todos": []}, ctx)
    assert cleared.text == "Todo list cleared."
    assert ctx.todos == ()
    assert TodoWriteTool.read_only is True


# -- web_fetch ----------------------------------------------------------------

PAGE = """<!doctype html>
<html><head><title>Test Page</title>
<style>body { color: red }</style>
<script>var secret = "do-not-show";</script></head>
<body>
<nav><a href="/home">Home nav link</a></nav>
<h1>Main   Title</h1>
<p>First    paragraph with a <a href="/docs/intro">relative link</a>
   and &amp; an entity.</p>
<ul><li>Item one</li><li>Item <b>two</b></li></ul>
<h2>Section</h2>
<p>Absolute <a href="https://example.org/x">example</a>.</p>
<pre>  keep
    indentation</pre>
</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self) -> None:
        path = self.path
        if path == "/page.html":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif path == "/big":
            self._send(200, b"x" * (2 * MAX_BODY_BYTES), "text/plain")
        elif path == "/json":
            self._send(200, b'{"a": [1, 2]}', "application/json")
        elif path == "/bin":
            self._send(200, b"\x89PNG\r\n\x1a\n\x00\x00", "image/png")
        elif path == "/host":
            self._send(200, self.headers.get("Host", "").encode(), "text/plain")
        elif path == "/missing":
            self._send(404, b"<p>nope</p>", "text/html")
        elif path == "/redirect":
            self._send(302, b"", "text/plain", Location="/page.html")
        elif path.startswith("/loop"):
            n = int(path.removeprefix("/loop") or 0)
            self._send(302, b"", "text/plain", Location=f"/loop{n + 1}")
        elif path == "/to-private":
            self._send(302, b"", "text/plain", Location="http://10.0.0.1/admin")
        elif path == "/to-file":
            self._send(302, b"", "text/plain", Location="file:///etc/passwd")
        else:
            self._send(404, b"not found", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="test-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


async def fetch(ctx: ToolContext, url: str) -> Any:
    return await WebFetchTool().execute({"url": url}, ctx)


async def test_web_fetch_html_to_text(ctx: ToolContext, server: str) -> None:
    result = await fetch(ctx, f"{server}/page.html")
    assert not result.is_error, result.text
    header, _, body = result.text.partition("\n\n")
    assert header.startswith("200 OK · text/html · ")
    assert header.endswith(f"bytes · {server}/page.html")
    assert "# Main Title" in body
    assert "## Section" in body
    assert f"First paragraph with a relative link ({server}/docs/intro) and & an entity." in body
    assert "- Item one\n- Item two" in body
    assert "example (https://example.org/x)" in body
    assert "  keep\n    indentation" in body
    assert "Test Page" in body
    assert "do-not-show" not in body
    assert "color: red" not in body
    assert "Home nav link" not in body


async def test_web_fetch_follows_redirects_and_returns_text(ctx: ToolContext, server: str) -> None:
    result = await fetch(ctx, f"{server}/redirect")
    assert not result.is_error
    assert result.meta["url"] == f"{server}/page.html"
    assert "# Main Title" in result.text
    json_result = await fetch(ctx, f"{server}/json")
    assert json_result.text.endswith('\n\n{"a": [1, 2]}')


async def test_web_fetch_hostname_is_pinned_with_host_header(ctx: ToolContext, server: str) -> None:
    port = server.rsplit(":", 1)[1]
    result = await fetch(ctx, f"http://localhost:{port}/host")
    assert not result.is_error, result.text
    assert result.text.endswith(f"\n\nlocalhost:{port}")


async def test_web_fetch_size_cap(ctx: ToolContext, server: str) -> None:
    result = await fetch(ctx, f"{server}/big")
    assert result.meta["bytes"] == MAX_BODY_BYTES
    assert result.meta["truncated"] is True
    assert "body truncated at 1 MiB" in result.text.splitlines()[0]
    assert "text truncated at" in result.text
    assert len(result.text) < 150_000


async def test_web_fetch_refuses_binary_and_reports_http_errors(
    ctx: ToolContext, server: str
) -> None:
    binary = await fetch(ctx, f"{server}/bin")
    assert binary.is_error
    assert "binary" in binary.text
    missing = await fetch(ctx, f"{server}/missing")
    assert missing.is_error
    assert missing.text.startswith("404 Not Found")
    assert "nope" in missing.text


async def test_web_fetch_redirect_limits(ctx: ToolContext, server: str) -> None:
    looped = await fetch(ctx, f"{server}/loop")
    assert looped.is_error
    assert "too many redirects" in looped.text
    to_file = await fetch(ctx, f"{server}/to-file")
    assert to_file.is_error
    assert "only http and https" in to_file.text


@pytest.fixture
def no_connect(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail the test if web_fetch sends anything (records the URLs instead)."""
    sent: list[str] = []
    real_send = httpx.AsyncClient.send

    async def guarded(self: httpx.AsyncClient, request: httpx.Request, **kw: Any) -> Any:
        sent.append(str(request.url))
        host = request.url.host
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise AssertionError(f"web_fetch connected to {request.url}")
        return await real_send(self, request, **kw)

    monkeypatch.setattr(httpx.AsyncClient, "send", guarded)
    return sent


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.1:8080/",
        "http://[::ffff:10.0.0.1]/",
        "http://[fe80::1]/",
        "http://0.0.0.0:80/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
    ],
)
async def test_web_fetch_refuses_private_addresses_without_connecting(
    ctx: ToolContext, no_connect: list[str], url: str
) -> None:
    result = await fetch(ctx, url)
    assert result.is_error
    assert "refused to fetch" in result.text
    assert no_connect == []


async def test_web_fetch_checks_resolved_addresses(
    ctx: ToolContext, no_connect: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fake_getaddrinfo(host: str, port: int, **kw: Any) -> list[Any]:
        assert host == "intranet.example"
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port)),
        ]

    monkeypatch.setattr(anyio, "getaddrinfo", fake_getaddrinfo)
    result = await fetch(ctx, "https://intranet.example/wiki")
    assert result.is_error
    assert "10.1.2.3 is a private address" in result.text
    assert no_connect == []


async def test_web_fetch_rechecks_every_redirect_hop(
    ctx: ToolContext, server: str, no_connect: list[str]
) -> None:
    result = await fetch(ctx, f"{server}/to-private")
    assert result.is_error
    assert "10.0.0.1" in result.text
    assert no_connect == [f"{server}/to-private"]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x/"])
async def test_web_fetch_refuses_other_schemes(
    ctx: ToolContext, no_connect: list[str], url: str
) -> None:
    result = await fetch(ctx, url)
    assert result.is_error
    assert "only http and https" in result.text
    assert no_connect == []


def test_address_problem() -> None:
    allowed = ["127.0.0.1", "127.8.9.10", "::1", "8.8.8.8", "2606:4700::1111"]
    refused = [
        "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "::", "224.0.0.1", "240.0.0.1", "fc00::1", "fe80::1",
        "::ffff:192.168.0.1", "2002:0a00:0001::1",
    ]  # fmt: skip
    for text in allowed:
        assert address_problem(ipaddress.ip_address(text)) is None, text
    for text in refused:
        assert address_problem(ipaddress.ip_address(text)) is not None, text


def test_html_to_text_links() -> None:
    html = '<p>See <a href="#top">top</a>, <a href="b.html">B</a> and <a href="http://x.io/">http://x.io/</a></p>'
    assert html_to_text(html, "http://a.io/dir/page") == (
        "See top, B (http://a.io/dir/b.html) and http://x.io/"
    )


# -- ask ----------------------------------------------------------------------

QUESTIONS = {
    "questions": [
        {"question": "Which database?", "options": ["SQLite", "Postgres"]},
        {
            "question": "Which extras?",
            "options": ["Docs", "Tests", "CI"],
            "multi_select": True,
        },
    ]
}


async def test_ask_headless(ctx: ToolContext) -> None:
    for approver in (None, FailClosedApprover(), ScriptedApprover(interactive=False)):
        ctx.env = dataclasses.replace(ctx.env, approver=approver)
        result = await AskTool().execute(QUESTIONS, ctx)
        assert not result.is_error
        assert result.text == HEADLESS
        assert "headless run" in result.text


async def test_ask_with_scripted_answers(ctx: ToolContext) -> None:
    approver = ScriptedApprover(
        answers=[
            [
                QuestionAnswer(question="Which database?", answers=("Postgres",)),
                QuestionAnswer(
                    question="Which extras?", answers=("Docs", "CI"), note="skip tests for now"
                ),
            ]
        ]
    )
    ctx.env = dataclasses.replace(ctx.env, approver=approver)
    result = await AskTool().execute(QUESTIONS, ctx)
    assert not result.is_error
    assert result.text == (
        "Q: Which database?\nA: Postgres\n"
        "Q: Which extras?\nA: Docs, CI\n"
        "Note from the user: skip tests for now"
    )
    assert list(approver.questions_seen[0]) == [
        Question(question="Which database?", options=("SQLite", "Postgres")),
        Question(question="Which extras?", options=("Docs", "Tests", "CI"), multi_select=True),
    ]
    # The script is exhausted: the approver returns None, which reads as headless.
    assert (await AskTool().execute(QUESTIONS, ctx)).text == HEADLESS


async def test_ask_validation(ctx: ToolContext) -> None:
    tool = AskTool()
    with pytest.raises(ToolArgumentError):
        await tool.execute({"questions": []}, ctx)
    with pytest.raises(ToolArgumentError, match="options"):
        await tool.execute({"questions": [{"question": "Q?", "options": ["only"]}]}, ctx)
    five = [{"question": f"Q{i}?", "options": ["a", "b"]} for i in range(5)]
    with pytest.raises(ToolArgumentError):
        await tool.execute({"questions": five}, ctx)
    assert AskTool.read_only is True
