"""claude-agent-sdk driving ``reasonix`` (``ClaudeAgentOptions(cli_path=...)``) over the
loopback fixture, side by side with plain ``reasonix run`` in the same run:

- one short turn: ``query()`` against ``reasonix run --output-format stream-json``
  (the SDK's share: its initialize round trip, the stream-json input, its parser);
- two turns of one session: a ``ClaudeSDKClient`` (one process, two ``query()`` calls)
  against ``reasonix run`` then ``reasonix run -c`` (two processes).

Run: ``.venv/bin/python bench/bench_claude_sdk.py [--reps 7]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import REASONIX_BIN, bench_env, write_config
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, query

from reasonix_testkit import ChatDialect, FixtureServer, Reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=7)
    reps = parser.parse_args().reps
    with tempfile.TemporaryDirectory() as tmp, FixtureServer(
        ChatDialect("deepseek"), api_key="sk-bench-0123456789"
    ) as server:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        write_config(home, server.base_url)
        server.responder = lambda request: Reply(content="ok")
        env = bench_env(home)
        os.environ.update(env)
        os.environ["CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK"] = "1"
        options = ClaudeAgentOptions(cli_path=str(REASONIX_BIN), cwd=str(workspace))

        def run(*args: str) -> None:
            subprocess.run(
                [str(REASONIX_BIN), "run", *args, "--output-format", "stream-json"],
                cwd=workspace, env=env, capture_output=True, check=True,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip

        async def sdk_query() -> None:
            async for _ in query(prompt="hi", options=options):
                pass

        async def sdk_client() -> None:
            async with ClaudeSDKClient(options) as client:
                for prompt in ("one", "two"):
                    await client.query(prompt)
                    async for _ in client.receive_response():
                        pass

        times: dict[str, list[float]] = {k: [] for k in ("run", "query", "run+run-c", "client")}
        for _ in range(reps):
            for name, act in (
                ("run", lambda: run("hi")),
                ("query", lambda: asyncio.run(sdk_query())),
                ("run+run-c", lambda: (run("one"), run("-c", "two"))),
                ("client", lambda: asyncio.run(sdk_client())),
            ):
                started = time.perf_counter()
                act()
                times[name].append(time.perf_counter() - started)
    median = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"one turn:  reasonix run {median['run']:.0f} ms, SDK query() {median['query']:.0f} ms"
          f"  ratio {median['query'] / median['run']:.2f}")  # fmt: skip
    print(f"two turns: run + run -c {median['run+run-c']:.0f} ms, SDK client "
          f"{median['client']:.0f} ms  ratio {median['client'] / median['run+run-c']:.2f}")  # fmt: skip
    print(f"(medians of {reps})")


if __name__ == "__main__":
    main()
