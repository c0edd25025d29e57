"""The chunked fold of a manual compaction: requests, tokens paid, cache hits.

A real Agent (built by ``build_session``: the real system prompt, every built-in
tool schema) reads a generated corpus in one long turn under a large window,
against the loopback fixture server in its DeepSeek flavour (its simulated
prompt cache persists whole units like the real service). Then the session is
compacted by hand twice, side by side on copies of the same history:

- ``single``: the window it was recorded with, so one summary request carries it;
- ``fold``: a window ``--shrink`` times smaller (``/model`` to a smaller model),
  so the history is folded in chunks and the part summaries merged.

Reported per mode: summary requests (parts, merges), the prompt tokens they
cost against the history they summarise (a ratio), and their cache-hit ratio.

Run: ``.venv/bin/python bench/bench_chunked_fold.py [--files 60] [--window 80000]
[--shrink 4]``
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
from _common import use_env, write_config

from reasonix_core import events as ev
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec

WORDS = (
    "stock price quantity widget restock parse total value currency ledger record "
    "inventory gadget sprocket bracket invoice order customer supplier shipment"
).split()
PART_MARK = "The messages above are part "


def make_corpus(root: Path, files: int, rng: random.Random) -> list[str]:
    names = []
    for i in range(files):
        lines = [
            f"{i:02d}-{n:04d} " + " ".join(rng.choice(WORDS) for _ in range(9)) for n in range(28)
        ]
        name = f"note{i:03d}.txt"
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        names.append(name)
    return names


class Model:
    """Reads every file, then answers; a compaction request gets a short digest."""

    def __init__(self, names: list[str]) -> None:
        self.pending = list(names)

    def __call__(self, record: RecordedRequest) -> Reply:
        messages = (record.json or {}).get("messages") or []
        last = (messages[-1].get("content") or "") if messages else ""
        if "<compaction-request>" in last:
            where = "a part" if PART_MARK in last else "the conversation"
            return Reply(content=f"Digest of {where}: the notes were read; nothing changed.")
        if self.pending:
            name = self.pending.pop(0)
            args = f'{{"path": "{name}"}}'
            return Reply(reasoning="next", tool_calls=[ToolCallSpec("read_file", args)])
        return Reply(content="All notes read.", reasoning="done")


def config_extra(window: int) -> str:
    return (
        '\n[tools]\nenabled = ["read_file"]\n'
        f'\n[providers.model_overrides."deepseek-flash"]\ncontext_window = {window}\n'
    )


async def compact(workspace: Path, window: int) -> dict[str, Any]:
    settings = RunSettings(workspace=workspace, continue_last=True, mcp_wait=False)
    prompt = hit = parts = merges = 0
    async with build_session(settings, approver=FailClosedApprover()) as rt:
        agent = rt.agent
        agent.context.set_window(window)
        history = agent.estimated_prompt_tokens()
        async with aclosing(agent.compact()) as events:
            async for event in events:
                if isinstance(event, ev.UsageReported) and event.source == "compaction":
                    prompt += event.usage.prompt_tokens
                    hit += event.usage.cache_hit_tokens
                elif isinstance(event, ev.CompactionFinished) and not event.ok:
                    raise SystemExit(f"compaction failed: {event.failure}")
                elif isinstance(event, ev.Notice) and "folded from" in event.text:
                    words = event.text.split("folded from ")[1].split()
                    parts, merges = int(words[0]), int(words[3])
        after = agent.estimated_prompt_tokens()
    return {
        "window": window,
        "history": history,
        "after": after,
        "requests": parts + merges if parts else 1,
        "parts": parts,
        "merges": merges,
        "prompt": prompt,
        "hit": hit,
    }


async def run(args: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    home, workspace = tmp / "home", tmp / "ws"
    workspace.mkdir(parents=True)
    use_env(home)
    os.environ["REASONIX_TOKENIZER"] = "heuristic"
    names = make_corpus(workspace, args.files, random.Random(args.seed))
    rows = []
    with FixtureServer(ChatDialect("deepseek"), api_key="sk-bench-0123456789") as server:
        write_config(home, server.base_url, extra=config_extra(args.window))
        cfg = home / "config.toml"
        cfg.write_text(cfg.read_text().replace("[agent]\n", "[agent]\ncompact_ratio = 0.85\n", 1))
        server.responder = Model(names)
        settings = RunSettings(workspace=workspace, mcp_wait=False)
        async with build_session(settings, approver=FailClosedApprover()) as rt:
            async with aclosing(rt.agent.run("Read every note.")) as events:
                async for event in events:
                    if isinstance(event, ev.CompactionStarted):
                        raise SystemExit("the session compacted on its own: use more --window")
        sessions = home / "sessions"
        pristine = tmp / "sessions"
        shutil.copytree(sessions, pristine)
        for mode, window in (("single", args.window), ("fold", args.window // args.shrink)):
            shutil.rmtree(sessions)
            shutil.copytree(pristine, sessions)
            rows.append({"mode": mode, **await compact(workspace, window)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--window", type=int, default=80_000)
    parser.add_argument("--shrink", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = anyio.run(run, args, Path(tmp))
    print(
        "| mode | window | history (est.) | requests (parts + merges) | prompt tokens paid "
        "| paid / history | cache-hit ratio | view after |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        shape = f"{r['parts']} + {r['merges']}" if r["parts"] else "1 (single)"
        print(
            f"| {r['mode']} | {r['window']:,} | {r['history']:,} | {shape} | {r['prompt']:,} "
            f"| {r['prompt'] / r['history']:.2f} | {r['hit'] / r['prompt']:.1%} "
            f"| {r['after']:,} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
