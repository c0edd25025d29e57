"""``reasonix acp`` over the loopback fixture: how long a 2,000-message
``session/load`` takes (the replay beside a ``session/new`` in the same
process, so the session build is measured apart from the replay), and how soon
the first ``agent_message_chunk`` reaches the client: from the moment the
fixture provider wrote its first answer token on the socket (the issue's
measure: the adapter's share, through ``reasonix acp``'s parse, event, ACP
update and pipe), beside the time from the prompt sent (which adds building and
sending the request). Both instants are this process's monotonic clock: the
fixture's server thread and the ACP client run here.

Run: ``.venv/bin/python bench/bench_acp.py [--messages 2000] [--reps 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import KEY, bench_env, write_config
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

from reasonix_testkit import ChatDialect, FixtureServer, Reply

# The fixture's answer; its first content delta (chunk_size 8) is "zqx hell".
ANSWER = "zqx hello there, from the fixture"
FIRST_TOKEN = b'"content":"zqx hell'


class TokenClock:
    """Records when the fixture's server thread wrote the first content token."""

    def __init__(self) -> None:
        self.sent: float | None = None

    def install(self) -> None:
        from reasonix_core.bench.loopback_http import ChunkedWriter

        write = ChunkedWriter.write
        clock = self

        def timed(writer: ChunkedWriter, data: bytes) -> None:
            write(writer, data)
            if clock.sent is None and FIRST_TOKEN in data:
                clock.sent = time.perf_counter()

        ChunkedWriter.write = timed  # type: ignore[method-assign]


class Client:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.first_chunk: float | None = None

    async def request_permission(self, **kwargs: Any) -> Any:
        raise RuntimeError("no permission is asked in this bench")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk" and self.first_chunk is None:
            self.first_chunk = time.perf_counter()
        self.updates.append(update)


def _spawn(client: Client, workspace: Path, env: dict[str, str]) -> Any:
    return spawn_agent_process(
        client, sys.executable, "-m", "reasonix_tui.cli", "acp", env=env, cwd=workspace
    )


def _grow(session_file: Path, messages: int) -> None:
    """Append user / assistant pairs until the transcript holds ``messages``."""
    line = "word " * 40
    with session_file.open("a", encoding="utf-8") as fh:
        for i in range(messages):
            role = "user" if i % 2 == 0 else "assistant"
            record = {"role": role, "content": f"{role} {i}: {line}"}
            fh.write(json.dumps({"type": "message", "message": record}) + "\n")


async def main(messages: int, reps: int) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=KEY) as server,
    ):
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        write_config(home, server.base_url)
        env = bench_env(home)
        first_chunk_ms: list[float] = []
        token_chunk_ms: list[float] = []
        tokens = TokenClock()
        tokens.install()
        server.enqueue(*[Reply(content=ANSWER) for _ in range(reps + 1)])
        client = Client()
        async with _spawn(client, workspace, env) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace))
            await conn.prompt(session_id=new.session_id, prompt=[text_block("warm up")])
            for _ in range(reps):
                client.first_chunk, tokens.sent = None, None
                sent = time.perf_counter()
                await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
                assert client.first_chunk is not None and tokens.sent is not None
                first_chunk_ms.append((client.first_chunk - sent) * 1000)
                token_chunk_ms.append((client.first_chunk - tokens.sent) * 1000)
        session_file = next((home / "sessions").rglob(f"{new.session_id}.jsonl"))
        _grow(session_file, messages - 2 * (reps + 1))
        load_ms: list[float] = []
        new_ms: list[float] = []
        replayed = 0
        for _ in range(reps):
            client = Client()
            async with _spawn(client, workspace, env) as (conn, _):
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                started = time.perf_counter()
                await conn.new_session(cwd=str(workspace))
                new_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                await conn.load_session(cwd=str(workspace), session_id=new.session_id)
                load_ms.append((time.perf_counter() - started) * 1000)
                replayed = len(client.updates)
        print(
            "provider's first token written -> first agent_message_chunk received: median "
            f"{statistics.median(token_chunk_ms):.1f} ms (max {max(token_chunk_ms):.1f}, "
            f"{reps} turns); prompt sent -> that chunk: median "
            f"{statistics.median(first_chunk_ms):.1f} ms (max {max(first_chunk_ms):.1f})"
        )
        print(
            f"session/load of {messages} messages ({replayed} updates): median "
            f"{statistics.median(load_ms):.0f} ms; session/new in the same process: "
            f"{statistics.median(new_ms):.0f} ms; ratio {statistics.median(load_ms) / statistics.median(new_ms):.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.reps))
