"""The real AppServices over the core engine (no Textual needed for these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix_tui.engine import EngineServices

pytestmark = pytest.mark.usefixtures("configured")


def test_shift_tab_cycle_is_ask_and_auto(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home)
    assert services.permission_mode == "ask"
    assert services.permission_modes == ("ask", "auto")


def test_a_session_started_in_yolo_can_cycle_back_to_it(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    assert services.permission_modes == ("ask", "auto", "yolo")


def test_models_efforts_and_key_state(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home)
    assert services.models() == ["fixture/deepseek-flash", "fixture/deepseek-v4-pro"]
    assert "max" in services.efforts() and "disabled" in services.efforts()
    assert services.needs_api_key() is False
    with pytest.raises(ValueError):
        services.set_effort("ludicrous")
    services.set_model("deepseek-v4-pro")
    assert services.model == "deepseek-v4-pro"
    with pytest.raises(ValueError):
        services.set_model("no-such-model")
