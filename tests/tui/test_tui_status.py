"""/status shows the effective compaction threshold when the services know it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui_helpers import send, session, settle

from reasonix_testkit.tui import ScriptedServices
from reasonix_tui.app import ReasonixApp
from reasonix_tui.widgets.blocks import NoticeBlock


@dataclass
class RatioServices(ScriptedServices):
    compact_ratio: float = 0.7


async def test_status_shows_the_effective_compact_ratio(tmp_path: Path) -> None:
    services = RatioServices(
        workspace=tmp_path, config_home=tmp_path / "home", context_window=100_000
    )
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "/status")
        await settle(pilot)
        texts = [str(b.render()) for b in session(pilot).query(NoticeBlock)]
    assert any("compacts at 70% (70k)" in t or "compacts at 70% (70.0k)" in t for t in texts), texts
