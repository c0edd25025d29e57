"""Compaction over a long session: cache hits, tokens paid to compact, prefix changes.

A real Agent (built by ``build_session``, every built-in tool, the real system
prompt) works in-process through a long synthetic session against the loopback
fixture server in its DeepSeek flavour, whose simulated prompt cache persists
whole "cache prefix units" like the real service (``wire-formats.md`` §3). The
context window is made small (32K tokens by default) so the session compacts
several times. The scripted model reads, greps, lists and globs a generated
project (some files large enough to be pruned), a few user turns at a time; it
answers compaction requests with a digest.

Reported: requests (steps) by source, the overall cache-hit ratio
``sum(cache_hit_tokens) / sum(prompt_tokens)`` and per source, the tokens paid
for compaction (prompt hit/miss, output), each compaction with its kind and
size before/after, prefix changes with their reasons, the estimator's backend
and calibration, and the harness time spent in maintenance.

Run: ``.venv/bin/python bench/bench_compaction.py [--window 32768] [--turns 12]
[--steps 18] [--tokenizer auto|heuristic]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any

from _common import make_project, use_env, write_config

from reasonix_core import events as ev
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec

WORDS = (
    "stock price quantity widget restock parse total value currency ledger record "
    "inventory gadget sprocket bracket invoice order customer supplier shipment"
).split()


def make_corpus(root: Path, rng: random.Random) -> list[str]:
    """Extra files of varied size; a few exceed 8192 characters (prunable)."""
    names = []
    for i in range(40):
        size = rng.choice([900, 1500, 2500, 4000]) if i % 9 else 14_000
        lines = []
        total = 0
        while total < size:
            line = f"{i:02d}-{len(lines):04d} " + " ".join(rng.choice(WORDS) for _ in range(9))
            lines.append(line)
            total += len(line) + 1
        path = root / "data" / f"notes_{i:02d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        names.append(f"data/notes_{i:02d}.txt")
    return names


class Model:
    """Scripted DeepSeek: tool calls for ``steps - 1`` steps of each turn, then an answer."""

    def __init__(self, files: list[str], steps: int, seed: int) -> None:
        self.files = files
        self.steps = steps
        self.rng = random.Random(seed)
        self.turn_step = 0
        self.summaries = 0

    def __call__(self, record: RecordedRequest) -> Reply:
        body = record.json or {}
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "user" and "<compaction-request>" in (last.get("content") or ""):
            self.summaries += 1
            covered = sorted({f for f in self.files if f in record.body.decode("utf-8", "replace")})
            digest = (
                f"Digest {self.summaries}. The user is auditing the inventory project for "
                "multi-currency support. Read so far: " + ", ".join(covered[:30]) + ". "
                "Findings: totals are computed in cents without currency; parse_* helpers "
                "assume one currency; TODO markers in every module. Next: check the data "
                "notes for price formats and propose a Money type. " * 2
            )
            return Reply(reasoning="Summarise the work so far.", content=digest)
        self.turn_step += 1
        if self.turn_step >= self.steps:
            return Reply(
                reasoning="Enough evidence for this question.",
                content="Here is what I found so far; the remaining modules follow the same pattern.",
            )
        choice = self.rng.random()
        reasoning = "Looking for how prices and totals are represented. " * self.rng.randint(1, 4)
        if choice < 0.55:
            calls = [ToolCallSpec("read_file", json.dumps({"path": self.rng.choice(self.files)}))]
        elif choice < 0.75:
            pattern = self.rng.choice(["TODO", "total", "price", "currency", "def parse"])
            calls = [ToolCallSpec("grep", json.dumps({"pattern": pattern}))]
        elif choice < 0.85:
            calls = [
                ToolCallSpec(
                    "ls", json.dumps({"path": self.rng.choice([".", "data", "inventory"])})
                )
            ]
        else:
            calls = [
                ToolCallSpec("read_file", json.dumps({"path": self.rng.choice(self.files)})),
                ToolCallSpec("glob", json.dumps({"pattern": "**/*.py"})),
            ]
        return Reply(reasoning=reasoning, tool_calls=calls)


async def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    home, workspace = tmp / "home", tmp / "ws"
    workspace.mkdir(parents=True)
    files = [f for f in make_project(workspace) if f.endswith((".py", ".md"))]
    files += make_corpus(workspace, rng)
    use_env(home)
    os.environ["REASONIX_TOKENIZER"] = args.tokenizer
    model = Model(files, args.steps, args.seed)
    sink = MetricsSink()
    compactions: list[dict[str, Any]] = []
    maintenance_s: list[float] = []
    prefix_reasons: list[tuple[int, str]] = []
    turn_times: list[float] = []
    # Executor misses on the first request after a prefix change (what compaction
    # cost in cache) against all other misses (new content appended each step).
    change_misses = other_misses = 0
    change_by_kind: dict[str, int] = {}
    pending_change: str | None = None
    with FixtureServer(ChatDialect("deepseek"), api_key="sk-bench-0123456789") as server:
        write_config(
            home,
            server.base_url,
            extra=f'\n[providers.model_overrides."deepseek-flash"]\ncontext_window = {args.window}\n',
        )
        cfg = home / "config.toml"
        cfg.write_text(
            cfg.read_text().replace("[agent]\n", f"[agent]\ncompact_ratio = {args.ratio}\n", 1)
        )
        server.responder = model
        settings = RunSettings(workspace=workspace, permission_mode="auto", mcp_wait=False)
        async with build_session(settings, approver=FailClosedApprover()) as rt:
            agent = rt.agent
            cm = agent.context
            step = 0
            for turn in range(args.turns):
                model.turn_step = 0
                started_at: float | None = None
                before = 0
                t0 = time.perf_counter()
                prompt = (
                    f"Question {turn + 1}: keep auditing the inventory code and the data notes "
                    "for everything that assumes a single currency."
                )
                async with aclosing(agent.run(prompt)) as events:
                    async for event in events:
                        sink.record(event)
                        if isinstance(event, ev.StepStarted):
                            step += 1
                        elif isinstance(event, ev.CompactionStarted):
                            started_at = time.perf_counter()
                            before = cm.estimate(agent.messages, agent.tools.fingerprint)
                        elif isinstance(event, ev.CompactionFinished):
                            assert started_at is not None
                            maintenance_s.append(time.perf_counter() - started_at)
                            cp = cm.checkpoint
                            compactions.append(
                                {
                                    "at_step": step,
                                    "turn": turn + 1,
                                    "reason": event.reason,
                                    "ok": event.ok,
                                    "kind": cp.kind if cp else None,
                                    "before": cp.tokens_before if cp else before,
                                    "after": cp.tokens_after if cp else None,
                                }
                            )
                        elif isinstance(event, ev.PrefixChanged):
                            prefix_reasons.append((step, event.reason))
                            pending_change = cm.checkpoint.kind if cm.checkpoint else event.reason
                        elif isinstance(event, ev.UsageReported) and event.source != "compaction":
                            if pending_change:
                                change_misses += event.usage.cache_miss_tokens
                                change_by_kind[pending_change] = (
                                    change_by_kind.get(pending_change, 0)
                                    + event.usage.cache_miss_tokens
                                )
                                pending_change = None
                            else:
                                other_misses += event.usage.cache_miss_tokens
                        elif isinstance(event, ev.TurnFailed):
                            raise SystemExit(f"turn {turn + 1} failed: {event.error}")
                turn_times.append(time.perf_counter() - t0)
            status = cm.status(agent.messages, agent.tools.fingerprint)
            transcript = len(agent.messages)
            view = len(cm.view(agent.messages))
    metrics = sink.finish("success")
    return {
        "metrics": metrics,
        "compactions": compactions,
        "maintenance_s": maintenance_s,
        "prefix_reasons": prefix_reasons,
        "status": status,
        "transcript_messages": transcript,
        "view_messages": view,
        "summary_requests": model.summaries,
        "wall_s": sum(turn_times),
        "change_misses": change_misses,
        "change_by_kind": change_by_kind,
        "other_misses": other_misses,
    }


def report(args: argparse.Namespace, r: dict[str, Any]) -> None:
    m = r["metrics"]
    by = m.usage_by_source
    ex, co = by.get("executor"), by.get("compaction")

    def ratio(u: Any) -> float:
        return u.cache_hit_tokens / u.prompt_tokens if u and u.prompt_tokens else 0.0

    print(
        f"window {args.window:,} tokens, compact_ratio {args.ratio}, "
        f"trigger {int(args.window * args.ratio):,}; estimator {args.tokenizer}"
    )
    print(
        f"turns {args.turns}, normal requests (steps) {ex.calls if ex else 0}, "
        f"summary requests {co.calls if co else 0}, transcript {r['transcript_messages']} "
        f"messages, final view {r['view_messages']} messages"
    )
    print()
    print(
        f"overall cache-hit ratio          {m.cache_hit_ratio:7.2%}  "
        f"({m.cache_hit_tokens:,} of {m.prompt_tokens:,} prompt tokens)"
    )
    print(f"  executor requests              {ratio(ex):7.2%}")
    if co:
        print(f"  summary requests               {ratio(co):7.2%}")
        print(
            f"tokens paid for compaction       prompt {co.prompt_tokens:,} "
            f"(hit {co.cache_hit_tokens:,}, miss {co.cache_miss_tokens:,}), "
            f"output {co.completion_tokens:,}; "
            f"{co.prompt_tokens / max(m.prompt_tokens, 1):.1%} of all prompt tokens"
        )
    print(
        f"executor misses after a prefix change {r['change_misses']:,} tokens "
        f"({r['change_misses'] / max(m.prompt_tokens, 1):.1%} of prompt tokens); "
        f"other misses (new content) {r['other_misses']:,} "
        f"({r['other_misses'] / max(m.prompt_tokens, 1):.1%})"
    )
    print(
        "  after a prefix change, by projection: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(r["change_by_kind"].items()))
    )
    print(f"compactions (transactions)       {m.compactions}")
    for c in r["compactions"]:
        after = f"{c['after']:,}" if c["after"] is not None else "-"
        print(
            f"  step {c['at_step']:4d} (turn {c['turn']:2d})  {c['reason']:8s} "
            f"{c['kind']!s:9s} {c['before']:>7,} -> {after:>7} tokens  ok={c['ok']}"
        )
    print(
        f"prefix changes                   {sum(m.prefix_change_reason_counts.values())} "
        f"{dict(sorted(m.prefix_change_reason_counts.items()))}"
    )
    for at, reason in r["prefix_reasons"]:
        print(f"  before step {at + 1:4d}: {reason}")
    est = r["status"]["estimator"]
    print(
        f"estimator                        {est['backend']}, ratio {est['ratio']}, "
        f"{est['observations']} observations, load {est['load_seconds'] or 0:.3f} s"
    )
    if r["maintenance_s"]:
        ms = [s * 1000 for s in r["maintenance_s"]]
        print(
            f"maintenance wall (incl. loopback summary call)  median {statistics.median(ms):.1f} ms, "
            f"max {max(ms):.1f} ms"
        )
    print(f"session wall time                {r['wall_s']:.1f} s")
    print(
        f"SUMMARY steps={ex.calls if ex else 0} compactions={m.compactions} "
        f"hit_ratio={m.cache_hit_ratio:.4f} compaction_prompt_tokens={co.prompt_tokens if co else 0} "
        f"compaction_output_tokens={co.completion_tokens if co else 0} "
        f"prefix_changes={json.dumps(dict(sorted(m.prefix_change_reason_counts.items())))}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, default=32_768)
    parser.add_argument("--ratio", type=float, default=0.8)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--steps", type=int, default=18, help="requests per turn")
    parser.add_argument("--tokenizer", choices=("auto", "heuristic", "deepseek"), default="auto")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    import anyio

    with tempfile.TemporaryDirectory(prefix="reasonix-bench-compaction-") as tmp:
        result = anyio.run(run, args, Path(tmp))
    report(args, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
