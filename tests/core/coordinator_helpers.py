"""Scripted planner and executor at the loopback fixture, told apart by model name."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from contextlib import aclosing
from pathlib import Path
from typing import Any

from reasonix_core import events as ev
from reasonix_testkit import RecordedRequest, Reply, ToolCallSpec
from reasonix_testkit.script import ScriptItem
from tests.conftest import TEST_KEY, TEST_KEY_ENV, write_config

EXECUTOR_MODEL = "deepseek-flash"
PLANNER_MODEL = "deepseek-v4-pro"


class ByModel:
    """A FIFO of replies per model: the planner and the executor each follow their own."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[ScriptItem]] = {}
        self._lock = threading.Lock()

    def script(self, model: str, *items: ScriptItem) -> ByModel:
        with self._lock:
            self.queues.setdefault(model, deque()).extend(items)
        return self

    def planner(self, *items: ScriptItem) -> ByModel:
        return self.script(PLANNER_MODEL, *items)

    def executor(self, *items: ScriptItem) -> ByModel:
        return self.script(EXECUTOR_MODEL, *items)

    def __call__(self, request: RecordedRequest) -> ScriptItem:
        model = (request.json or {}).get("model", "")
        with self._lock:
            queue = self.queues.get(model)
            if not queue:
                raise LookupError(f"no scripted reply left for model {model!r}")
            return queue.popleft()


def submit(plan: str) -> Reply:
    return Reply(tool_calls=[ToolCallSpec("submit_plan", json.dumps({"plan": plan}))])


def call(tool: str, **args: Any) -> Reply:
    return Reply(tool_calls=[ToolCallSpec(tool, json.dumps(args))])


def configure(home: Path, server: Any, monkeypatch: Any, planner: str = PLANNER_MODEL) -> ByModel:
    extra = f'planner_model = "{planner}"\n' if planner else ""
    write_config(home, server.base_url)
    text = (home / "config.toml").read_text().replace("[agent]\n", f"[agent]\n{extra}", 1)
    (home / "config.toml").write_text(text)
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    script = ByModel()
    server.responder = script
    return script


def models(server: Any) -> list[str]:
    return [(r.json or {}).get("model", "") for r in server.requests]


def requests_for(server: Any, model: str) -> list[dict[str, Any]]:
    return [r.json for r in server.requests if r.json and r.json.get("model") == model]


async def drive(runner: Any, prompt: str, **kwargs: Any) -> list[ev.Event]:
    out: list[ev.Event] = []
    async with aclosing(runner.run(prompt, **kwargs)) as events:
        async for event in events:
            out.append(event)
    return out


def of(events: Iterable[ev.Event], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]
