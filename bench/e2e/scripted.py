"""The scripted model behind the corpus's stand-in cassettes, and their generator.

No real recording of the corpus exists yet. Until one is made (``reasonix bench
run --record`` with a key), each task's cassette is produced here: the bench
records the task against the test kit's FixtureServer answering with the steps
below (a competent model's moves, written by hand), and the cassette is labelled
``"source": "scripted"``. Replaying them checks the harness and the agent's
request bytes without a key; it says nothing about any real model.

    python bench/e2e/scripted.py [TASK...]     # rewrite bench/e2e/cassettes/<task>/

Run it again after a deliberate change to the prompt, the tool schemas or the
workspace context (the replay then reports the first differing byte).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec  # noqa: E402

CASSETTES = HERE / "cassettes"
TASKS = HERE / "tasks"
KEY_ENV = "BENCH_SCRIPTED_KEY"
COMPACTION_TAG = "<compaction-request>"
NOTE = (
    "scripted stand-in: answers written by hand and served by the test kit's FixtureServer "
    "(bench/e2e/scripted.py); not a real model's output"
)


def call(name: str, **arguments: Any) -> ToolCallSpec:
    return ToolCallSpec(name, json.dumps(arguments))


def tools(*calls: ToolCallSpec, why: str = "") -> Reply:
    return Reply(reasoning=why or "Let me look.", tool_calls=list(calls))


def answer(text: str) -> Reply:
    return Reply(reasoning="I have what I need.", content=text)


def read(path: str, **kw: Any) -> ToolCallSpec:
    return call("read_file", path=path, **kw)


def edit(path: str, old: str, new: str, **kw: Any) -> ToolCallSpec:
    return call("edit_file", path=path, old_string=old, new_string=new, **kw)


STEPS: dict[str, list[Reply]] = {
    "qa-max-items": [
        tools(read("inventory/config.py")),
        answer("A store holds at most **500** items (`MAX_ITEMS` in `inventory/config.py`)."),
    ],
    "qa-report-formatter": [
        tools(read("inventory/report.py")),
        answer(
            "`pricing.format_price`: `inventory/report.py` imports it from `inventory/pricing.py`."
        ),
    ],
    "qa-oncall-codename": [
        tools(call("grep", pattern="codename", path="docs")),
        answer(
            "The on-call rotation's codename is **PERIWINKLE-7** "
            "(`docs/ops/archive/2023/rotation/NOTES.md`)."
        ),
    ],
    "qa-test-count": [
        tools(call("grep", pattern="def test_", path="tests")),
        answer("5: three in `tests/test_store.py` and two in `tests/test_pricing.py`."),
    ],
    "qa-discount-rounding": [
        tools(read("inventory/pricing.py")),
        answer("3. `apply_discount` computes `(5 * 50 + 50) // 100 = 3`: halves round up."),
    ],
    "edit-fix-discount": [
        tools(read("inventory/pricing.py"), read("tests/test_pricing.py")),
        tools(
            edit(
                "inventory/pricing.py",
                "return price_cents * (100 - percent) // 100",
                "return (price_cents * (100 - percent) + 50) // 100",
            ),
            why="The discount truncates; the docstring says halves round up.",
        ),
        answer(
            "Fixed `apply_discount` in `inventory/pricing.py` to round halves up; "
            "the tests are unchanged."
        ),
    ],
    "edit-rename-format": [
        tools(call("grep", pattern="format_price", path=".")),
        tools(
            read("inventory/pricing.py"), read("inventory/report.py"), read("tests/test_pricing.py")
        ),
        tools(
            edit("inventory/pricing.py", "def format_price(", "def format_money("),
            edit("inventory/report.py", "format_price", "format_money", replace_all=True),
            edit("tests/test_pricing.py", "format_price", "format_money", replace_all=True),
        ),
        answer(
            "Renamed `format_price` to `format_money` in `inventory/pricing.py`, "
            "`inventory/report.py` and `tests/test_pricing.py`."
        ),
    ],
    "edit-low-stock": [
        tools(read("inventory/store.py"), read("inventory/config.py")),
        tools(
            edit(
                "inventory/store.py",
                "from inventory.config import MAX_ITEMS",
                "from inventory.config import LOW_STOCK_THRESHOLD, MAX_ITEMS",
            ),
            edit(
                "inventory/store.py",
                "        return sum(item.value_cents() for item in self._items.values())\n",
                "        return sum(item.value_cents() for item in self._items.values())\n\n"
                "    def low_stock(self) -> list[str]:\n"
                "        return sorted(\n"
                "            name for name, item in self._items.items()"
                " if item.qty < LOW_STOCK_THRESHOLD\n"
                "        )\n",
            ),
        ),
        answer("Added `Store.low_stock()` in `inventory/store.py`."),
    ],
    "edit-max-items": [
        tools(read("inventory/config.py"), read("README.md")),
        tools(
            edit("inventory/config.py", "MAX_ITEMS = 500", "MAX_ITEMS = 1000"),
            edit("README.md", "at most 500 items", "at most 1000 items"),
        ),
        answer("`MAX_ITEMS` is now 1000 and README.md says so."),
    ],
    "edit-csv-export": [
        tools(read("inventory/store.py")),
        tools(
            call(
                "write_file",
                path="inventory/csv_export.py",
                content=(
                    '"""The store as CSV."""\n\nfrom __future__ import annotations\n\n'
                    "from inventory.store import Store\n\n\n"
                    "def to_csv(store: Store) -> str:\n"
                    '    lines = ["name,price_cents,qty"]\n'
                    "    for item in store.items():\n"
                    '        lines.append(f"{item.name},{item.price_cents},{item.qty}")\n'
                    '    return "\\n".join(lines) + "\\n"\n'
                ),
            )
        ),
        answer("Created `inventory/csv_export.py` with `to_csv(store)`."),
    ],
    "context-compaction-logs": [
        *(tools(read(f"logs/day{day}.log")) for day in range(1, 7)),
        answer("The six logs have **70** ERROR lines in total."),
    ],
    "context-find-constant": [
        tools(call("grep", pattern="SECRET_SAUCE_VERSION", path="plugins")),
        answer('`plugins/p23.py` defines `SECRET_SAUCE_VERSION = "4.2.7"`.'),
    ],
    "context-registry": [
        tools(call("grep", pattern="^NAME", path="plugins"), read("plugins/registry.txt")),
        tools(
            call(
                "write_file",
                path="plugins/registry.txt",
                content="".join(
                    f"{n}-plugin\n"
                    for n in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
                ),
            )
        ),
        answer("Added bravo-plugin, delta-plugin and foxtrot-plugin to `plugins/registry.txt`."),
    ],
    "context-long-manifest": [
        tools(read("data/manifest.txt")),
        tools(
            read("data/manifest.txt", offset=2001, limit=1000),
            why="The key is not in the first 2000 lines.",
        ),
        answer("`final_checksum = 83c1f0e9`"),
    ],
    "context-trail": [
        tools(read("clues/start.md")),
        tools(read("clues/k9/b.md")),
        tools(read("clues/x/y/c.md")),
        tools(read("clues/d.md")),
        tools(read("clues/k9/z/e.md")),
        answer("The word at the end of the trail is **TANGERINE**."),
    ],
}


def responder(steps: list[Reply]) -> Callable[[RecordedRequest], Reply]:
    """Step k of the script answers the k-th request; compaction asks for a summary."""
    taken = 0

    def answer_request(request: RecordedRequest) -> Reply:
        nonlocal taken
        messages = (request.json or {}).get("messages") or []
        last = str(messages[-1].get("content", "")) if messages else ""
        if COMPACTION_TAG in last:
            return Reply(
                content="Summary: the user asked for the total of ERROR lines over six "
                "logs; the logs read so far were counted; continue with the next log."
            )
        if taken >= len(steps):
            return Reply(content="Done.")
        taken += 1
        return steps[taken - 1]

    return answer_request


def record(names: list[str]) -> int:
    from reasonix_core.bench.runner import BenchOptions, run_bench
    from reasonix_core.bench.task import load_tasks

    tasks = load_tasks(TASKS, names)
    failed = []
    with tempfile.TemporaryDirectory(prefix="reasonix-scripted-") as tmp:
        for task in tasks:
            with FixtureServer(ChatDialect("deepseek"), api_key=None, seed=7) as upstream:
                upstream.responder = responder(STEPS[task.name])
                os.environ[KEY_ENV] = "scripted"
                provider = {
                    "kind": "openai", "base_url": upstream.base_url,
                    "models": ["deepseek-flash"], "api_key_env": KEY_ENV,
                    "reasoning_protocol": "deepseek", "context_window": 131072,
                }  # fmt: skip
                out = Path(tmp) / task.name
                result = run_bench(
                    BenchOptions(
                        tasks=[task],
                        out=out,
                        record=True,
                        provider=provider,
                        record_source="scripted",
                        record_note=NOTE,
                    ),
                )
            trajectory = result.trajectories[0]
            print(f"{task.name}: {trajectory['status']}", flush=True)
            if not trajectory["solved"]:
                failed.append(task.name)
                continue
            dest = CASSETTES / task.name
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / "runs" / task.name / "default" / "1" / "cassette.json",
                            dest / "cassette.json")  # fmt: skip
    if failed:
        print(f"not solved, cassettes not written: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:]))
