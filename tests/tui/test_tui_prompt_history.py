"""Prompt history across restarts: Up recalls, Ctrl+R searches, 500 kept, mode 0600."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tui_helpers import send, session, settle, type_text, until

from reasonix_tui.prompt_history import LIMIT, PromptHistory, history_path
from reasonix_tui.screens.picker import PickerScreen


async def test_prompts_come_back_after_a_restart(make_app, tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    app, _ = make_app([[], []], prompt_history_path=path)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "first question")
        await settle(pilot)
        await send(pilot, "second question")
        await settle(pilot)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    app, _ = make_app(prompt_history_path=path)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = session(pilot)
        await until(pilot, lambda: len(screen.composer.prompt_history) == 2)
        await pilot.press("up")
        assert screen.composer.text == "second question"
        screen.composer.clear()
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await type_text(pilot, "first")
        await pilot.press("enter")
        await until(pilot, lambda: screen.composer.text == "first question")


def test_the_file_keeps_the_newest_500(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h" / "p.jsonl")
    for n in range(2 * LIMIT + 5):
        history.append(f"prompt {n}")
    kept = PromptHistory(history.path).load()
    assert len(kept) == LIMIT and kept[-1] == f"prompt {2 * LIMIT + 4}"
    assert len(history.path.read_text().splitlines()) <= 2 * LIMIT
    assert stat.S_IMODE(history.path.stat().st_mode) == 0o600


def test_a_damaged_file_loses_only_its_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps("good") + "\n{not json\n" + json.dumps(["x"]) + "\n\xff\n")
    assert PromptHistory(path).load() == ["good"]


def test_one_file_per_workspace(tmp_path: Path) -> None:
    a = history_path(tmp_path, tmp_path / "a")
    b = history_path(tmp_path, tmp_path / "b")
    assert a != b and a.parent == b.parent == tmp_path / "prompt-history"
