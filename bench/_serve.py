"""Run the fixture server in its own process (for bench_step_overhead.py).

``python bench/_serve.py STEPS [DELAY [keep-alive|close [TOOL]]]`` prints the base URL
on stdout, then serves the ``tool_loop_responder(STEPS, DELAY, TOOL)`` script until
stdin is closed (``keep-alive``: streamed answers keep their connection open; TOOL:
``files`` or ``bash``).
"""

from __future__ import annotations

import sys

from _common import tool_loop_responder

from reasonix_testkit import ChatDialect, FixtureServer


def main() -> int:
    steps = int(sys.argv[1])
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    keep_alive = len(sys.argv) > 3 and sys.argv[3] == "keep-alive"
    tool = sys.argv[4] if len(sys.argv) > 4 else "files"
    with FixtureServer(
        ChatDialect("deepseek"), api_key=None, keep_alive_streams=keep_alive
    ) as server:
        server.responder = tool_loop_responder(steps, delay, tool)
        sys.stdout.write(server.base_url + "\n")
        sys.stdout.flush()
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
