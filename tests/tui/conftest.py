from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reasonix_testkit.tui import ScriptedServices
from reasonix_tui.app import ReasonixApp

SIZE = (100, 32)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # HOME and REASONIX_HOME are isolated by tests/conftest.py.
    for name in ("NO_COLOR", "TEXTUAL_THEME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., tuple[ReasonixApp, ScriptedServices]]:
    def factory(turns=None, **kwargs) -> tuple[ReasonixApp, ScriptedServices]:  # type: ignore[no-untyped-def]
        kwargs.setdefault("workspace", tmp_path / "ws")
        kwargs.setdefault("config_home", tmp_path / "home" / ".reasonix")
        services = ScriptedServices(turns=list(turns or []), **kwargs)
        app = ReasonixApp(services, cursor_blink=False)
        return app, services

    return factory
