"""The metrics sink's files: the ``.partial`` snapshot is replaced atomically but not
synced (it only has to outlive a killed process), the final file is synced."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_core.fsutil import atomic_write_text
from reasonix_core.metrics import MetricsSink
from reasonix_core.usage import Usage


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def spy(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return calls


def test_partial_snapshot_is_not_synced_and_the_final_file_is(
    tmp_path: Path, fsyncs: list[int]
) -> None:
    path = tmp_path / "run.json"
    sink = MetricsSink(path, snapshot_every=0.0)
    sink.record(ev.UsageReported(usage=Usage(prompt_tokens=10, completion_tokens=2), model="m"))
    partial = json.loads((tmp_path / "run.json.partial").read_text())
    assert partial["complete"] is False and partial["steps"] == 1
    assert fsyncs == []
    sink.finish("success")
    assert json.loads(path.read_text())["complete"] is True
    assert not (tmp_path / "run.json.partial").exists()
    assert len(fsyncs) == 1


def test_atomic_write_leaves_no_temp_file_either_way(tmp_path: Path, fsyncs: list[int]) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    target = folder / "state.json"
    atomic_write_text(target, "one\n", durable=False)
    atomic_write_text(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in folder.iterdir()] == ["state.json"]
    assert len(fsyncs) == 1
