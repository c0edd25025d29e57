"""Helpers for the compaction tests: a small-window config and a scripted model."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reasonix_testkit import RecordedRequest, Reply, ScriptItem, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV, write_config

INSTRUCTION_TAG = "<compaction-request>"
WORDS = (
    "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega parser token cache "
    "prefix window summary module function return value import class method buffer stream"
).split()


def small_window_config(
    home: Path, base_url: str, *, window: int = 6000, ratio: float | None = None, extra: str = ""
) -> None:
    ratio_line = f"compact_ratio = {ratio}\n" if ratio is not None else ""
    write_config(
        home,
        base_url,
        extra=(
            '\n[tools]\nenabled = ["read_file"]\n'
            + f'\n[providers.model_overrides."deepseek-flash"]\ncontext_window = {window}\n'
            + extra
        ),
    )
    if ratio_line:
        path = home / "config.toml"
        text = path.read_text()
        path.write_text(text.replace("[agent]\n", "[agent]\n" + ratio_line, 1))


def use_key(monkeypatch: Any) -> None:
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)


def text_of(chars: int, seed: int = 0) -> str:
    """Readable text of about ``chars`` characters in lines of ~70."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(10))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:chars]


def make_files(workspace: Path, sizes: list[int]) -> list[str]:
    names = []
    for i, size in enumerate(sizes):
        name = f"f{i:03d}.txt"
        (workspace / name).write_text(text_of(size, seed=i) + "\n", encoding="utf-8")
        names.append(name)
    return names


def read(name: str) -> Reply:
    return Reply(
        reasoning=f"I should read {name}.",
        tool_calls=[ToolCallSpec("read_file", json.dumps({"path": name}))],
    )


def is_summary_request(record: RecordedRequest) -> bool:
    body = record.json or {}
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    return last.get("role") == "user" and INSTRUCTION_TAG in (last.get("content") or "")


class ScriptedModel:
    """Answers normal requests from ``steps`` and compaction requests with ``summary``."""

    def __init__(
        self,
        steps: list[ScriptItem],
        summary: str
        | Callable[[RecordedRequest], ScriptItem] = "SUMMARY: the user asked for reads.",
        final: str = "all done",
    ) -> None:
        self.steps = list(steps)
        self.summary = summary
        self.final = final
        self.summary_requests: list[RecordedRequest] = []
        self.normal_requests: list[RecordedRequest] = []

    def __call__(self, record: RecordedRequest) -> ScriptItem:
        if is_summary_request(record):
            self.summary_requests.append(record)
            if callable(self.summary):
                return self.summary(record)
            return Reply(content=self.summary, reasoning="summarising")
        self.normal_requests.append(record)
        if self.steps:
            return self.steps.pop(0)
        return Reply(content=self.final, reasoning="finishing")


def messages_prefix_bytes(body: bytes) -> bytes:
    """The request body up to the end of its messages array (exclusive)."""
    end = body.index(b'],"tools":')
    return body[:end]
