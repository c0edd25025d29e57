"""Fixtures the sandbox tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix_core.tool import shell_sandbox


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh (workspace, session temp dir) pair."""
    workspace = tmp_path / "ws"
    temp_dir = tmp_path / "session-tmp"
    workspace.mkdir()
    temp_dir.mkdir()
    return workspace, temp_dir


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    """The bubblewrap probe runs anew for this test (its cached verdict cleared around it)."""
    shell_sandbox._probe.cache_clear()
    yield
    shell_sandbox._probe.cache_clear()
