"""Run the fixture server in its own process (for bench_step_overhead.py).

``python bench/_serve.py STEPS`` prints the base URL on stdout, then serves the
``tool_loop_responder(STEPS)`` script until stdin is closed.
"""

from __future__ import annotations

import sys

from _common import tool_loop_responder

from reasonix_testkit import ChatDialect, FixtureServer


def main() -> int:
    steps = int(sys.argv[1])
    with FixtureServer(ChatDialect("deepseek"), api_key=None) as server:
        server.responder = tool_loop_responder(steps)
        sys.stdout.write(server.base_url + "\n")
        sys.stdout.flush()
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
