"""BM25 for history search and recall: the in-tree index vs bm25s / rank-bm25.

Measures, over a synthetic corpus of transcript-like messages (English prose,
code identifiers, some Chinese):

1. import cost of each implementation in a fresh interpreter (median of N);
2. tokenizing + indexing time for the corpus;
3. mean query time over a fixed set of queries;
4. agreement of the top-10 rankings with ``bm25s`` (method="lucene", same
   k1/b and the same tokens) when it is installed.

The libraries are optional: run it with an interpreter that has them to
compare, e.g. ``python -m venv /tmp/b && /tmp/b/bin/pip install bm25s rank-bm25``
then ``PYTHONPATH=. /tmp/b/bin/python bench/bench_memory.py``. With the project
venv it measures the in-tree index only.

Run: ``.venv/bin/python bench/bench_memory.py [--docs 2000] [--queries 200]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reasonix_core.memory.bm25 import BM25, tokenize  # noqa: E402

WORDS = (
    "agent loop provider request stream retry session transcript tool result file edit "
    "read write grep glob bash sandbox permission policy rule approve deny config model "
    "token cache prefix compaction summary checkpoint history memory recall fact project "
    "test pytest fixture server loopback migration database sqlite schema index query "
    "parser tokenizer unicode encoding utf8 newline windows linux path symlink workspace "
    "error exception timeout cancel background job process signal kill output buffer "
    "render widget screen keyboard shortcut theme color diff patch commit branch merge"
).split()
IDENTS = "read_file edit_file ToolRegistry build_session context_suffix SessionStore BM25 __init__ pyproject.toml".split()
CJK = "修复 测试 失败 数据库 迁移 会话 记忆 召回 压缩 缓存 前缀 工具 结果 配置 权限 沙箱 文件 编辑 搜索 历史".split()


def corpus(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        length = rng.choice((12, 30, 60, 120, 250))
        parts = []
        for _ in range(length):
            r = rng.random()
            if r < 0.08:
                parts.append(rng.choice(IDENTS))
            elif r < 0.16:
                parts.append(rng.choice(CJK))
            else:
                parts.append(rng.choice(WORDS))
        docs.append(" ".join(parts))
    return docs


def queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.choice((1, 2, 3, 5))
        pool = WORDS + IDENTS + CJK
        out.append(" ".join(rng.choice(pool) for _ in range(k)))
    return out


def import_ms(module: str, runs: int) -> float | None:
    times = []
    for _ in range(runs):
        # The stdlib modules any Reasonix process has loaded already.
        code = (
            "import re, typing, json, pathlib, collections, heapq, math, functools; "
            "import time; t = time.perf_counter(); "
            f"import {module}; print((time.perf_counter() - t) * 1000)"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
        )
        if proc.returncode != 0:
            return None
        times.append(float(proc.stdout.strip()))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--import-runs", type=int, default=7)
    args = parser.parse_args()

    texts = corpus(args.docs)
    qs = queries(args.queries)
    chars = sum(len(t) for t in texts)
    print(f"corpus: {len(texts)} messages, {chars:,} chars; {len(qs)} queries")

    print("\nimport (fresh interpreter with re/typing/json/pathlib loaded, median):")
    for module in ("reasonix_core.memory.bm25", "bm25s", "rank_bm25"):
        ms = import_ms(module, args.import_runs)
        print(f"  {module:28s} {'not installed' if ms is None else f'{ms:7.1f} ms'}")

    t0 = time.perf_counter()
    tokens = [tokenize(t) for t in texts]
    t_tok = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = BM25(tokens)
    t_idx = time.perf_counter() - t0
    qtok = [tokenize(q) for q in qs]
    t0 = time.perf_counter()
    ours = [index.top(q, 10) for q in qtok]
    t_q = (time.perf_counter() - t0) / len(qtok)
    print("\nin-tree BM25 (pure Python):")
    print(
        f"  tokenize {t_tok * 1000:7.1f} ms   index {t_idx * 1000:7.1f} ms   "
        f"query {t_q * 1000:6.3f} ms/query"
    )

    # End to end through the history index: JSONL parse + tokenize + index, then cached.
    import tempfile

    from reasonix_core.agent.session import SessionHeader, SessionStore
    from reasonix_core.memory.history import HistoryIndex
    from reasonix_core.messages import Message

    with tempfile.TemporaryDirectory() as tmp:
        root, ws = Path(tmp) / "sessions", Path(tmp) / "ws"
        header = SessionHeader(
            id="20250101-000000-bench0",
            workspace=str(ws),
            created="2025-01-01T00:00:00+00:00",
            model="m",
            effort="auto",
            system_prompt="s",
            tools_fingerprint="f",
        )
        store = SessionStore.create(root, ws, header)
        for n, text in enumerate(texts):
            store.append(Message(role="user" if n % 2 else "assistant", content=text))
        store.close()
        history = HistoryIndex(root, ws)
        t0 = time.perf_counter()
        history.search(qs[0])
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in qs[1:21]:
            history.search(q)
        t_next = (time.perf_counter() - t0) / 20
        store = SessionStore(store.path, header)
        store.append(Message(role="user", content="one more message about the sandbox policy"))
        store.close()
        t0 = time.perf_counter()
        history.search(qs[0])
        t_grown = time.perf_counter() - t0
    print(
        f"  history tool: first search {t_first * 1000:.0f} ms (parse + tokenize + index), "
        f"then {t_next * 1000:.2f} ms/search (cached), "
        f"{t_grown * 1000:.0f} ms after the live transcript grew (new lines + re-index)"
    )

    try:
        import bm25s  # type: ignore[import-not-found]
    except ImportError:
        bm25s = None
    if bm25s is not None:
        t0 = time.perf_counter()
        retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        retriever.index(tokens, show_progress=False)
        t_idx2 = time.perf_counter() - t0
        t0 = time.perf_counter()
        theirs = []
        for q in qtok:
            # Lucene's BM25 drops the constant (k1 + 1) factor; dedupe terms like ours.
            scores = retriever.get_scores(list(dict.fromkeys(q))) * 2.5
            order = sorted(range(len(scores)), key=lambda d: (-scores[d], d))[:10]
            theirs.append([(d, float(scores[d])) for d in order if scores[d] > 0])
        t_q2 = (time.perf_counter() - t0) / len(qtok)
        same = sum(
            [d for d, _ in a] == [d for d, _ in b] for a, b in zip(ours, theirs, strict=True)
        )
        worst = max(
            (
                abs(sa - sb)
                for a, b in zip(ours, theirs, strict=True)
                for (_, sa), (_, sb) in zip(a, b, strict=False)
            ),
            default=0.0,
        )
        print("\nbm25s (numpy), same tokens:")
        print(
            f"  index {t_idx2 * 1000:7.1f} ms   query {t_q2 * 1000:6.3f} ms/query "
            "(get_scores + sort)"
        )
        print(f"  identical top-10 rankings: {same}/{len(qtok)}; max score difference {worst:.2e}")

    try:
        from rank_bm25 import BM25Okapi  # type: ignore[import-not-found]
    except ImportError:
        BM25Okapi = None
    if BM25Okapi is not None:
        t0 = time.perf_counter()
        okapi = BM25Okapi(tokens, k1=1.5, b=0.75)
        t_idx3 = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in qtok:
            okapi.get_scores(q)
        t_q3 = (time.perf_counter() - t0) / len(qtok)
        print("\nrank-bm25 BM25Okapi, same tokens:")
        print(f"  index {t_idx3 * 1000:7.1f} ms   query {t_q3 * 1000:6.3f} ms/query")


if __name__ == "__main__":
    main()
