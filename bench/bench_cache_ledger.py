"""What the cache ledger adds to every step, side by side with the request's encoding.

Every step the loop renders the request as the prompt cache reads it
(``PrefixRenderer``), compares it with the previous one and digests it for the
session's request records (``reasonix_core/agent/cache_ledger.py``). This script
times that work against ``provider.prepare`` (the JSON body the step sends
anyway), for a conversation of ~80 KB and one of ~1 MB that grows by one user
message per step, and reports the ratio ledger / prepare (median of the steps).

Run: ``.venv/bin/python bench/bench_cache_ledger.py [--steps 30]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import time

import _common  # noqa: F401  (the repository root on sys.path)

from reasonix_core.agent.cache_ledger import Baseline, PrefixRenderer, diverge
from reasonix_core.config.schema import ProviderConfig
from reasonix_core.messages import Message, ToolCall
from reasonix_core.provider.base import Request
from reasonix_core.provider.openai import OpenAIProvider
from reasonix_core.tool.registry import ToolRegistry, builtin_tools

TARGET_RATIO = 0.5


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + " ") for _ in range(n))


def _conversation(rng: random.Random, rounds: int) -> list[Message]:
    out = [Message(role="system", content=_text(rng, 8000))]
    for i in range(rounds):
        call = ToolCall(id=f"c{i}", name="read_file", arguments='{"path":"a.py"}')
        out += [
            Message(role="user", content=_text(rng, 300)),
            Message(
                role="assistant",
                content=_text(rng, 200),
                reasoning_content=_text(rng, 300),
                tool_calls=(call,),
            ),
            Message(role="tool", tool_call_id=f"c{i}", content=_text(rng, 1200)),
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(1)
    tools = ToolRegistry(builtin_tools(None)).schemas()
    provider = OpenAIProvider(
        ProviderConfig(
            name="bench",
            kind="openai",
            base_url="http://127.0.0.1:1",
            models=["deepseek-flash"],
            reasoning_protocol="deepseek",
        ),
        "key",
    )
    ratios = []
    for label, rounds in (("~80 KB", 20), ("~1 MB", 500)):
        messages = _conversation(rng, rounds)
        render = PrefixRenderer()
        first = Request(model="deepseek-flash", messages=tuple(messages), tools=tools)
        previous = Baseline.of(render(first), 1, "")
        prepare_s, ledger_s = [], []
        size = 0
        for _ in range(args.steps):
            messages.append(Message(role="user", content=_text(rng, 300)))
            request = Request(model="deepseek-flash", messages=tuple(messages), tools=tools)
            start = time.perf_counter()
            size = len(provider.prepare(request).body)
            prepare_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            prefix = render(request)
            assert diverge(previous, prefix) is None
            previous = Baseline.of(prefix, 1, "")
            ledger_s.append(time.perf_counter() - start)
        prep, led = statistics.median(prepare_s), statistics.median(ledger_s)
        ratios.append(led / prep)
        print(
            f"{label} conversation ({size:,} byte body): prepare {prep * 1000:.2f} ms, "
            f"ledger {led * 1000:.2f} ms per step, ratio {led / prep:.2f}"
        )
    worst = max(ratios)
    verdict = "MET" if worst <= TARGET_RATIO else "MISSED"
    print(
        f"SUMMARY cache ledger / request encoding: {worst:.2f} x at worst; "
        f"target <= {TARGET_RATIO} x: {verdict}"
    )


if __name__ == "__main__":
    main()
