"""Snapshot profile: one fixed size, theme, clock and workspace; no user config.

Every snapshot goes through the ``snap`` fixture, which builds a fresh
:class:`ReasonixApp` over :class:`ScriptedServices` and calls ``snap_compare``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from snap_support import SIZE, WORKSPACE, build_app, scripted
from textual.pilot import Pilot

from reasonix_testkit.tui import ScriptedServices


def _build_workspace() -> None:
    for directory in ("src/reasonix_demo", "tests", "docs", ".git", "node_modules"):
        (WORKSPACE / directory).mkdir(parents=True, exist_ok=True)
    for name, text in {
        "README.md": "# demo\n",
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "src/reasonix_demo/app.py": "print('hi')\n",
        "tests/test_app.py": "def test_ok():\n    assert True\n",
    }.items():
        (WORKSPACE / name).write_text(text)


@pytest.fixture(autouse=True)
def _no_environment_leaks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("NO_COLOR", "TEXTUAL_THEME", "REASONIX_HOME", "COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _build_workspace()


RunBefore = Callable[[Pilot], Awaitable[None]]


@pytest.fixture
def snap(snap_compare) -> Callable[..., bool]:  # type: ignore[no-untyped-def]
    def take(
        services: ScriptedServices | None = None,
        run_before: RunBefore | None = None,
        size: tuple[int, int] = SIZE,
    ) -> bool:
        app = build_app(services or scripted())

        async def settle(pilot: Pilot) -> None:
            await pilot.pause()
            if run_before is not None:
                await run_before(pilot)
            await pilot.pause(0.2)
            await pilot.pause()

        return snap_compare(app, terminal_size=size, run_before=settle)

    return take
