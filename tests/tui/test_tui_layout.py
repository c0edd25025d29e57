"""Layout at any size (issue 30, item 6): the status bar never wraps."""

from __future__ import annotations

import pytest
from tui_helpers import session

from reasonix_tui.widgets.status_bar import StatusBar


@pytest.mark.parametrize("width", [40, 60, 80, 140])
async def test_the_status_bar_never_wraps(make_app, width) -> None:
    app, _ = make_app(model="deepseek-v4-pro-with-a-long-name", effort="high")
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        bar = session(pilot).query_one(StatusBar)
        bar.update_state(
            queued=3,
            hint="preparing write_file… and a long hint that goes on and on",
            budget_left="$1.20",
            context_tokens=123_456,
            prompt_tokens=200_000,
            cache_hit_tokens=150_000,
            last_cache_pct=97.0,
            cost=1.2345,
        )
        await pilot.pause()
        lines = bar.render().plain.split("\n")
        assert len(lines) == 2
        room = bar.content_size.width
        assert all(len(line) <= room for line in lines), lines
        assert lines[0].startswith("● ask") and lines[1].startswith("ctx ")
        if width >= 80:
            assert "deepseek-v4-pro-with-a-long-name" in lines[0]
        if width >= 140:
            assert "(avg 75%)" in lines[1] and "high" in lines[0]
